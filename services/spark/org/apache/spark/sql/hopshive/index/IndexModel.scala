package org.apache.spark.sql.hopshive.index

import java.nio.charset.StandardCharsets
import java.security.MessageDigest

import org.apache.hadoop.fs.Path

import org.apache.spark.sql.AnalysisException
import org.apache.spark.sql.catalyst.TableIdentifier

/** The storage clauses of CREATE INDEX, as written. */
case class IndexStorage(rowFormat: Option[String] = None, storedAs: Option[String] = None,
    storedBy: Option[String] = None, location: Option[String] = None)

/** A CREATE INDEX statement, as written. */
case class IndexDefinition(name: String, table: TableIdentifier, columns: Seq[String], handler: String,
    deferred: Boolean, idxProperties: Map[String, String], inTable: Option[TableIdentifier],
    partitionedBy: Option[Seq[String]], storage: IndexStorage, tblProperties: Map[String, String],
    comment: Option[String])

/** An error of an index statement, with Hive's wording where Hive has one. */
class IndexException(message: String, cause: Option[Throwable])
  extends AnalysisException(message, None, None, cause, None, Map.empty[String, String], Array.empty)

object IndexErrors {
  def apply(message: String, cause: Throwable = null): IndexException = new IndexException(message, Option(cause))
  def parse(message: String): IndexException = apply(s"[PARSE_SYNTAX_ERROR] $message")
}

/**
 * An index partition's rebuild state, kept in its parameters (the index table's, when the
 * base table is not partitioned), so a query can tell a fresh index partition from a stale one:
 * the version directory holding its data, when it was built, and what the base partition held
 * then (`baseState`, a digest of its files' relative paths, lengths and modification times:
 * any file added, removed, rewritten or touched changes it).
 */
case class IndexState(version: String, rebuildTime: Long, basePath: String, baseState: String, baseFiles: Long,
    baseBytes: Long, baseDdlTime: String) {
  def toParameters: Map[String, String] = Map(
    IndexState.Version -> version, IndexState.RebuildTime -> rebuildTime.toString, IndexState.BasePath -> basePath,
    IndexState.BaseState -> baseState, IndexState.BaseFiles -> baseFiles.toString,
    IndexState.BaseBytes -> baseBytes.toString, IndexState.BaseDdlTime -> baseDdlTime)
}

object IndexState {
  val Version = "hopshive.index.version"
  val RebuildTime = "hopshive.index.rebuildTime"
  val BasePath = "hopshive.index.basePath"
  val BaseState = "hopshive.index.baseState"
  val BaseFiles = "hopshive.index.baseFiles"
  val BaseBytes = "hopshive.index.baseBytes"
  val BaseDdlTime = "hopshive.index.baseDdlTime"

  /** The state in an index partition's parameters; None before its first rebuild. */
  def of(parameters: java.util.Map[String, String]): Option[IndexState] = {
    def get(key: String): Option[String] = Option(parameters).flatMap(p => Option(p.get(key)))
    for (version <- get(Version); basePath <- get(BasePath); baseState <- get(BaseState)) yield
      IndexState(version, get(RebuildTime).map(_.toLong).getOrElse(0L), basePath, baseState,
        get(BaseFiles).map(_.toLong).getOrElse(0L), get(BaseBytes).map(_.toLong).getOrElse(0L),
        get(BaseDdlTime).getOrElse(""))
  }

  /** The directory of an index partition's data: a version directory below its location. */
  def dataDir(location: String, version: String): String = new Path(location, s"v$version").toString

  /** The path part of a location (no scheme, no authority): the base and the listing may name
   *  the same namenode differently. */
  def pathKey(location: String): String = new Path(location).toUri.getPath.stripSuffix("/")

  /** The digest of a base partition's files, each (path, length, modification time). */
  def digest(basePath: String, files: Seq[(String, Long, Long)]): String = {
    val root = pathKey(basePath) + "/"
    val lines = files.map { case (path, length, mtime) => s"${pathKey(path).stripPrefix(root)}\t$length\t$mtime" }.sorted
    val sha = MessageDigest.getInstance("SHA-256")
    lines.foreach(line => sha.update((line + "\n").getBytes(StandardCharsets.UTF_8)))
    sha.digest().map("%02x".format(_)).mkString
  }
}
