package org.apache.spark.sql.hopshive.index

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.{Column, DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.catalyst.expressions.{Alias, And, Ascending, AttributeReference, BoundReference, Expression,
  GenericInternalRow, SortOrder}
import org.apache.spark.sql.catalyst.expressions.codegen.GenerateOrdering
import org.apache.spark.sql.catalyst.plans.logical.{Filter, Project, Sort}
import org.apache.spark.sql.classic.ClassicConversions.castToImpl
import org.apache.spark.sql.classic.Dataset
import org.apache.spark.sql.functions.{col, collect_set}
import org.apache.spark.sql.types.{StringType, StructField, StructType}

/**
 * What Hive's compact and bitmap indexes share: an index table of one row per distinct value
 * of the indexed columns and place of the base table holding it -- a file (compact), a row
 * group of a file (bitmap) -- with the file (`_bucketname`) and what the handler keeps of the
 * rows there ([[Place]]), written sorted on the indexed columns, so Parquet's statistics of
 * the index files find a value.
 *
 * Built with no shuffle, in one whole-stage plan up to the sort: each task numbers the files it
 * reads ([[FileNumber]]), sorts its rows on (indexed columns, file number, row) -- a number sorts
 * in a quarter of a path's bytes -- and folds each run of equal values in one place into one
 * index row, finding the row groups in the footers the scan read ([[TaskFiles]]).  (Hive built it with
 * `GROUP BY cols, INPUT__FILE__NAME`: a shuffle of every row.)
 *
 * A query reads the index rows matching its predicate on the indexed columns -- any
 * deterministic predicate on them, as Hive's index filter did -- in one Spark job at planning.
 */
abstract class KeyedIndexHandler extends IndexHandler with Serializable {   // its place() runs in tasks
  val Bucket = "_bucketname"

  /** The columns after `_bucketname`. */
  protected def placeFields: Seq[StructField]

  /** An empty place of one index row, in `file`, starting at base row `first`. */
  protected def place(file: FileRowGroups, first: Long): Place

  /** The row-group offsets of an index row, as a column over the index table (one value or an array). */
  protected def offsets(index: DataFrame): Column

  def schema(columns: Seq[StructField]): StructType =
    StructType(columns ++ (StructField(Bucket, StringType) +: placeFields))

  override def analyzeIndexDefinition(base: CatalogTable, columns: Seq[StructField]): StructType = {
    IndexHandlers.requireAtomic(shortName, columns)
    schema(columns)
  }

  override def buildPlan(input: BuildInput): RDD[InternalRow] = {
    val width = input.columns.length
    val types = input.columns.map(_.dataType).toArray
    val scan = input.scan.queryExecution.analyzed             // columns..., _file, _row, _part
    val numbered = Project(scan.output.take(width) ++ Seq(Alias(FileNumber(scan.output(width)), "_fileNo")(),
      scan.output(width + 1), scan.output(width + 2)), scan)
    val order = numbered.output.take(width + 2).map(SortOrder(_, Ascending))    // columns, _fileNo, _row
    val sorted = Dataset.ofRows(input.scan.sparkSession, Sort(order, global = false, numbered))
    val keys = input.columns.zipWithIndex.map { case (c, i) => SortOrder(BoundReference(i, c.dataType, c.nullable), Ascending) }
    val conf = input.conf
    val outWidth = width + 2 + placeFields.length
    sorted.queryExecution.toRdd.mapPartitions { rows =>
      val files = TaskFiles.current()
      val sameKey = GenerateOrdering.generate(keys)      // equal as the sort has them
      new Iterator[InternalRow] {
        private val in = rows.buffered
        override def hasNext: Boolean = in.hasNext
        override def next(): InternalRow = {
          val first = in.next().copy()
          val number = first.getInt(width)
          val at = files.rowGroups(number, conf.value.value)
          val kept = place(at, first.getLong(width + 1))
          kept.add(first.getLong(width + 1))
          while (in.hasNext && in.head.getInt(width) == number && sameKey.compare(first, in.head) == 0 &&
              kept.holds(in.head.getLong(width + 1))) {
            kept.add(in.next().getLong(width + 1))         // rows of a place in row order
          }
          val values = new Array[Any](outWidth)
          for (i <- 0 until width) values(i) = first.get(i, types(i))
          values(width) = at.bucket
          kept.values.copyToArray(values, width + 1)
          values(values.length - 1) = first.getInt(width + 2)
          new GenericInternalRow(values)
        }
      }
    }
  }

  override def candidates(session: SparkSession, dataDirs: Seq[String], columns: Seq[StructField],
      conjuncts: Seq[Expression]): Option[Map[String, Set[Long]]] = {
    if (conjuncts.isEmpty) return None
    val key = s"$typeName|${dataDirs.sorted.mkString(",")}|${conjuncts.map(_.sql).mkString(" AND ")}"
    Some(IndexCache.getOrCompute(key) {
      val index = session.read.schema(schema(columns)).parquet(dataDirs: _*).queryExecution.analyzed
      val byName = index.output.map(a => a.name.toLowerCase -> a).toMap
      val condition = conjuncts.map(_.transform { case a: AttributeReference => byName(a.name.toLowerCase) })
        .reduce[Expression](And)
      val matching = Dataset.ofRows(session, Filter(condition, index))
      matching.select(col(Bucket), offsets(matching).as("offset"))
        .groupBy(Bucket).agg(collect_set("offset"))
        .collect().map(row => IndexState.pathKey(row.getString(0)) -> row.getSeq[Long](1).toSet).toMap
    })
  }
}

/** The base rows of one index row, in one place: given in ascending order. */
trait Place {
  /** Whether row `row` (after the ones added) belongs to this place. */
  def holds(row: Long): Boolean
  def add(row: Long): Unit
  /** The values of the handler's place columns. */
  def values: Seq[Any]
}
