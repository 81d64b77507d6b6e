package org.apache.spark.sql.hopshive.index

import java.util.Locale

import org.apache.spark.broadcast.Broadcast
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.types.{AtomicType, StructField, StructType}
import org.apache.spark.util.SerializableConfiguration

/**
 * What a rebuild hands a handler: the base rows as (indexed columns..., `_file`, `_row`,
 * `_part`): the file holding the row (`_metadata.file_path`), its index in the file and the
 * number of the base partition, each task reading files of one base partition only; and the
 * index's IDXPROPERTIES.
 */
case class BuildInput(scan: DataFrame, columns: Seq[StructField], properties: Map[String, String],
    conf: Broadcast[SerializableConfiguration])

/**
 * An index implementation: the seed's `HiveIndexHandler` (uses an index table, analyze the
 * definition, build plan, drop hook) plus the part the seed left out, used by queries: which
 * files and row groups can hold rows matching a predicate.  Row groups are named by their
 * starting offset in the file, as Hive's compact index names the blocks holding a value.
 */
trait IndexHandler {
  /** The short name of CREATE INDEX ... AS 'NAME'. */
  def shortName: String
  /** The class name kept in the metastore (IDXS.INDEX_HANDLER_CLASS). */
  def className: String
  /** idx_type of SHOW INDEXES. */
  def typeName: String = shortName.toLowerCase(Locale.ROOT)
  /** Every handler here keeps its index in an index table (Parquet). */
  def usesIndexTable: Boolean = true

  /** The index table's columns for an index on `columns` of `base`; refuses what it cannot index. */
  def analyzeIndexDefinition(base: CatalogTable, columns: Seq[StructField]): StructType

  /** The index rows of the base rows, each followed by its `_part`, in the index table's schema;
   *  the rows of one base partition stay in the task that read them. */
  def buildPlan(input: BuildInput): RDD[InternalRow]

  /** Called when an index is dropped or rebuilt: forget what queries kept of its old data. */
  def dropHook(dataDirs: Seq[String]): Unit = IndexCache.forget(dataDirs)

  /**
   * The files (by [[IndexState.pathKey]]) that can hold rows matching every one of `conjuncts`
   * (each on indexed columns only), each with the starting offsets of its row groups that can;
   * None when this handler cannot use these conjuncts.  `dataDirs` hold the index data of the
   * fresh index partitions.
   */
  def candidates(session: SparkSession, dataDirs: Seq[String], columns: Seq[StructField],
      conjuncts: Seq[Expression]): Option[Map[String, Set[Long]]]
}

object IndexHandlers {
  val CompactClass = "org.apache.hadoop.hive.ql.index.compact.CompactIndexHandler"
  val BitmapClass = "org.apache.hadoop.hive.ql.index.bitmap.BitmapIndexHandler"
  val all: Seq[IndexHandler] = Seq(CompactIndexHandler, BitmapIndexHandler, DataSkippingIndexHandler)

  /** The handler CREATE INDEX names (a short name or a class name, any case). */
  def named(name: String): IndexHandler = {
    val key = name.trim.toLowerCase(Locale.ROOT)
    all.find(h => h.shortName.toLowerCase(Locale.ROOT) == key || h.className.toLowerCase(Locale.ROOT) == key)
      .getOrElse {
        throw IndexErrors(s"FAILED: Error in loading index handler. $name is not a known index handler (known: " +
          all.map(h => s"${h.shortName} = ${h.className}").mkString(", ") + ")")
      }
  }

  /** The handler of a stored index, None for one HopsHive does not implement (left unused). */
  def stored(className: String): Option[IndexHandler] = all.find(_.className == className)

  /** Refuses a column type no handler orders: complex types and intervals. */
  def requireAtomic(index: String, columns: Seq[StructField]): Unit =
    columns.find(c => !c.dataType.isInstanceOf[AtomicType]).foreach { c =>
      throw IndexErrors(s"FAILED: index $index cannot cover column ${c.name} of type ${c.dataType.simpleString}")
    }
}
