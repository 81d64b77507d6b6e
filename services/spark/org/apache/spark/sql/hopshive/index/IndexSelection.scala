package org.apache.spark.sql.hopshive.index

import scala.jdk.CollectionConverters._

import org.apache.hadoop.fs.Path
import org.apache.hadoop.hive.metastore.api.Index

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.execution.datasources.{FileIndex, FileStatusWithMetadata, HadoopFsRelation, PartitionDirectory}
import org.apache.spark.util.Utils

/** What the indexes of a scan decided: the files left out (each with the length and
 *  modification time it had when the index said so), the row groups (starting offsets) to
 *  read of the files read where an index named them, and a line for EXPLAIN. */
private[index] case class IndexSelection(skipped: Map[String, (Long, Long)], rowGroups: Map[String, Set[Long]],
    description: String)

/** One index's verdict on a scan: files left out, row groups of fresh files, in words. */
private case class Decision(skipped: Seq[FileStatusWithMetadata], rowGroups: Map[String, Set[Long]], text: String)

private[index] object IndexSelection {
  /**
   * The files of the scan that no row matching `filters` can be in, by every index of `table`
   * whose columns some data filter is on; None when no index applies (then nothing is listed).
   */
  def choose(session: SparkSession, table: CatalogTable, fs: HadoopFsRelation,
      filters: Seq[Expression]): Option[IndexSelection] = {
    val split = ScanFilters(fs, filters)
    val db = table.identifier.database.getOrElse(session.sessionState.catalog.getCurrentDatabase)
    val indexes = Indexes.metastore(session)(_.listIndexes(db, table.identifier.table, -1)).asScala.toSeq
    val usable = indexes.flatMap { index =>
      val covered = index.getSd.getCols.asScala.map(_.getName.toLowerCase).toSet
      val conjuncts = split.data.filter(f => f.references.nonEmpty && f.references.forall(a => covered(a.name.toLowerCase)))
      IndexHandlers.stored(index.getIndexHandlerClass).filter(_ => conjuncts.nonEmpty).map(h => (index, h, conjuncts))
    }
    if (usable.isEmpty) return None
    val listed = fs.location.listFiles(split.partition, split.data)
    val files = listed.flatMap(_.files)
    val decisions = usable.map { case (index, handler, conjuncts) =>
      decide(session, fs, index, handler, conjuncts, files, listed.length)
    }
    val skipped = decisions.flatMap(_.skipped).map(f => IndexState.pathKey(f.getPath.toString) -> (f.getLen, f.getModificationTime))
      .toMap
    val rowGroups = decisions.map(_.rowGroups).reduce { (a, b) =>      // an intersection: each index is right
      (a.keySet ++ b.keySet).map(k => k -> (if (a.contains(k) && b.contains(k)) a(k) & b(k) else a.getOrElse(k, b(k))))
        .toMap
    }.filter { case (file, _) => !skipped.contains(file) }
    val bytes = files.map(_.getLen).sum
    val skippedBytes = files.filter(f => skipped.contains(IndexState.pathKey(f.getPath.toString))).map(_.getLen).sum
    Some(IndexSelection(skipped, rowGroups, decisions.map(_.text).mkString("; ") +
      s": read ${files.length - skipped.size} of ${files.length} files (${Utils.bytesToString(bytes - skippedBytes)}" +
      s" of ${Utils.bytesToString(bytes)}), skipped ${skipped.size} files (${Utils.bytesToString(skippedBytes)})" +
      s"; ${rowGroups.values.map(_.size).sum} row groups named in ${rowGroups.size} files read"))
  }

  /** The files one index leaves out, and what it did, in words. */
  private def decide(session: SparkSession, fs: HadoopFsRelation, index: Index, handler: IndexHandler,
      conjuncts: Seq[Expression], files: Seq[FileStatusWithMetadata], partitions: Int): Decision = {
    val name = s"index ${index.getIndexName} (${handler.typeName} on ${index.getSd.getCols.asScala.map(_.getName).mkString(", ")})"
    val built = builtPartitions(session, index, fs.partitionSchema.isEmpty)
    val byPartition = files.groupBy(f => owner(f.getPath, built.keySet))
    val fresh = byPartition.collect {
      case (Some(key), members) if built(key)._1.baseState ==
          IndexState.digest(built(key)._1.basePath, members.map(f => (f.getPath.toString, f.getLen, f.getModificationTime))) =>
        key -> members
    }
    if (fresh.isEmpty) {
      return Decision(Nil, Map.empty, s"$name: 0 of $partitions partitions fresh")
    }
    val columns = index.getSd.getCols.asScala.map(c => fs.dataSchema.find(_.name.equalsIgnoreCase(c.getName)).get).toSeq
    handler.candidates(session, fresh.keys.map(built(_)._2).toSeq, columns, conjuncts) match {
      case None => Decision(Nil, Map.empty, s"$name: cannot use ${conjuncts.map(_.sql).mkString(" AND ")}")
      case Some(candidates) =>
        val freshFiles = fresh.values.flatten.map(f => IndexState.pathKey(f.getPath.toString)).toSet
        val left = fresh.values.flatten.filterNot(f => candidates.contains(IndexState.pathKey(f.getPath.toString))).toSeq
        Decision(left, candidates.filter { case (file, _) => freshFiles(file) },
          s"$name: ${fresh.size} of $partitions partitions fresh")
    }
  }

  /** The built index partitions: base partition (path key) -> (state, data directory). */
  private def builtPartitions(session: SparkSession, index: Index, unpartitioned: Boolean): Map[String, (IndexState, String)] = {
    val (db, name) = (index.getDbName, index.getIndexTableName)
    val places = if (unpartitioned) {
      val table = Indexes.metastore(session)(_.getTable(db, name))
      Seq((table.getParameters, table.getSd.getLocation))
    } else {
      Indexes.metastore(session)(_.listPartitions(db, name, (-1).toShort)).asScala.toSeq
        .map(p => (p.getParameters, p.getSd.getLocation))
    }
    places.flatMap { case (parameters, location) =>
      IndexState.of(parameters).map(s => IndexState.pathKey(s.basePath) -> (s, IndexState.dataDir(location, s.version)))
    }.toMap
  }

  /** The base partition (path key) a file is in, if it is one of `partitions`. */
  private def owner(file: Path, partitions: Set[String]): Option[String] =
    Iterator.iterate(file.getParent)(_.getParent).takeWhile(_ != null).map(p => IndexState.pathKey(p.toString))
      .find(partitions)
}

/**
 * A table's file listing without the files an index left out.  A file is left out only if it
 * still has the length and modification time it had when the index was consulted: one
 * rewritten since then is read.
 */
class IndexedFileIndex(val underlying: FileIndex, skipped: Map[String, (Long, Long)]) extends FileIndex {
  private def kept(f: FileStatusWithMetadata): Boolean =
    !skipped.get(IndexState.pathKey(f.getPath.toString)).contains((f.getLen, f.getModificationTime))

  override def rootPaths: Seq[Path] = underlying.rootPaths
  override def listFiles(partitionFilters: Seq[Expression], dataFilters: Seq[Expression]): Seq[PartitionDirectory] =
    underlying.listFiles(partitionFilters, dataFilters).map(d => d.copy(files = d.files.filter(kept)))
  override def inputFiles: Array[String] =
    underlying.inputFiles.filterNot(f => skipped.contains(IndexState.pathKey(f)))
  override def refresh(): Unit = underlying.refresh()
  override def sizeInBytes: Long = underlying.sizeInBytes
  override def partitionSchema: org.apache.spark.sql.types.StructType = underlying.partitionSchema
}
