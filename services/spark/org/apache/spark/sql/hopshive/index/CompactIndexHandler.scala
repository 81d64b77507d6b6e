package org.apache.spark.sql.hopshive.index

import scala.collection.mutable

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.catalyst.expressions.{And, AttributeReference, Expression, GenericInternalRow, UnsafeArrayData,
  UnsafeProjection}
import org.apache.spark.sql.catalyst.plans.logical.Filter
import org.apache.spark.sql.catalyst.types.DataTypeUtils
import org.apache.spark.sql.classic.ClassicConversions.castToImpl
import org.apache.spark.sql.classic.Dataset
import org.apache.spark.sql.execution.LogicalRDD
import org.apache.spark.sql.functions.{col, collect_set, explode}
import org.apache.spark.sql.types.{ArrayType, IntegerType, LongType, StringType, StructField, StructType}

/**
 * Hive's compact index (`CompactIndexHandler`): one row per distinct value of the indexed
 * columns and file holding it, with the file (`_bucketname`) and the starting offsets of the
 * Parquet row groups holding it (`_offsets`), written sorted on the indexed columns.  Hive
 * built it with `GROUP BY cols, INPUT__FILE__NAME` (a shuffle of every row); here each task
 * sorts the rows it read (one base partition's files; each row with its file's number in the
 * task, see [[TaskFiles]]) and merges equal neighbours: no shuffle, and every index file is
 * sorted, so Parquet's page statistics find a value in it.
 *
 * A query reads the rows of the fresh index partitions matching its predicate on the indexed
 * columns -- any deterministic predicate on them, as Hive's index filter did -- in one Spark
 * job at planning.
 */
object CompactIndexHandler extends IndexHandler {
  override val shortName = "COMPACT"
  override val className: String = IndexHandlers.CompactClass
  val Bucket = "_bucketname"
  val Offsets = "_offsets"

  def schema(columns: Seq[StructField]): StructType =
    StructType(columns :+ StructField(Bucket, StringType) :+ StructField(Offsets, ArrayType(LongType, containsNull = false)))

  override def analyzeIndexDefinition(base: CatalogTable, columns: Seq[StructField]): StructType = {
    IndexHandlers.requireAtomic("COMPACT", columns)
    schema(columns)
  }

  override def buildPlan(input: BuildInput): RDD[InternalRow] = {
    val width = input.columns.length
    val types = input.columns.map(_.dataType).toArray
    val numbered = StructType(input.columns ++ Seq(StructField("_fileNo", IntegerType), StructField("_row", LongType),
      StructField("_part", IntegerType)))
    val rows = input.scan.queryExecution.toRdd.mapPartitions[InternalRow] { rows =>
      val files = TaskFiles.current()
      val project = UnsafeProjection.create(numbered)
      val out = new GenericInternalRow(width + 3)
      rows.map { row =>
        for (i <- 0 until width) out.update(i, row.get(i, types(i)))
        out.setInt(width, files.number(row.getUTF8String(width)))
        out.setLong(width + 1, row.getLong(width + 1))
        out.setInt(width + 2, row.getInt(width + 2))
        project(out)
      }
    }
    val order = (input.columns.map(_.name) ++ Seq("_fileNo", "_row")).map(name => col(s"`$name`"))
    val sorted = Dataset.ofRows(input.scan.sparkSession, LogicalRDD(DataTypeUtils.toAttributes(numbered), rows)(
      input.scan.sparkSession)).sortWithinPartitions(order: _*)
    val conf = input.conf
    sorted.queryExecution.toRdd.mapPartitions { rows =>
      val names = TaskFiles.current()
      val groups = new RowGroups(conf.value.value)
      val offsets = new mutable.ArrayBuilder.ofLong
      new Iterator[InternalRow] {
        private val in = rows.buffered
        override def hasNext: Boolean = in.hasNext
        override def next(): InternalRow = {
          val first = in.next().copy()
          val file = groups.of(names.path(first.getInt(width)))
          offsets.clear()
          var last = file.find(first.getLong(width + 1)).offset
          offsets += last
          while (in.hasNext && same(first, in.head)) {       // rows of a file in row order: offsets ascend
            val offset = file.find(in.next().getLong(width + 1)).offset
            if (offset != last) { offsets += offset; last = offset }
          }
          val values = new Array[Any](width + 3)
          for (i <- 0 until width) values(i) = first.get(i, types(i))
          values(width) = file.bucket
          values(width + 1) = UnsafeArrayData.fromPrimitiveArray(offsets.result())
          values(width + 2) = first.getInt(width + 2)
          new GenericInternalRow(values)
        }
        private def same(a: InternalRow, b: InternalRow): Boolean =
          a.getInt(width) == b.getInt(width) && (0 until width).forall(i => a.get(i, types(i)) == b.get(i, types(i)))
      }
    }
  }

  override def candidates(session: SparkSession, dataDirs: Seq[String], columns: Seq[StructField],
      conjuncts: Seq[Expression]): Option[Map[String, Set[Long]]] = {
    if (conjuncts.isEmpty) return None
    val key = s"compact|${dataDirs.sorted.mkString(",")}|${conjuncts.map(_.sql).mkString(" AND ")}"
    Some(IndexCache.getOrCompute(key) {
      val index = session.read.schema(schema(columns)).parquet(dataDirs: _*).queryExecution.analyzed
      val byName = index.output.map(a => a.name.toLowerCase -> a).toMap
      val condition = conjuncts.map(_.transform { case a: AttributeReference => byName(a.name.toLowerCase) })
        .reduce[Expression](And)
      Dataset.ofRows(session, Filter(condition, index))
        .select(col(Bucket), explode(col(Offsets)).as("offset"))
        .groupBy(Bucket).agg(collect_set("offset"))
        .collect().map(row => IndexState.pathKey(row.getString(0)) -> row.getSeq[Long](1).toSet).toMap
    })
  }
}
