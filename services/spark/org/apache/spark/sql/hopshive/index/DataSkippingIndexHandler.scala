package org.apache.spark.sql.hopshive.index

import java.io.{ByteArrayInputStream, ByteArrayOutputStream}

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.catalyst.expressions.{Expression, GenericInternalRow, XxHash64Function}
import org.apache.spark.sql.catalyst.util.TypeUtils
import org.apache.spark.sql.classic.ClassicConversions.castToImpl
import org.apache.spark.sql.types._
import org.apache.spark.util.sketch.BloomFilter

/**
 * A data-skipping index (beyond Hive; Hyperspace's kind): one row per Parquet row group of the
 * base table -- its file, offset, length and rows -- with, per indexed column, the minimum,
 * maximum, null count and a bloom filter of the values' 64-bit xxHash.  A file's own summary is
 * that of its row groups.  It is small enough to read whole at planning (and is kept in the
 * driver afterwards, see [[IndexCache]]); [[SkippingPredicate]] decides which row groups an
 * equality, IN, range or IS [NOT] NULL predicate can match.
 *
 * Built in one pass over the base rows, with no shuffle: rows of one row group arrive together.
 */
object DataSkippingIndexHandler extends IndexHandler {
  override val shortName = "DATASKIPPING"
  override val className = "io.hopshive.spark.index.DataSkippingIndexHandler"
  val Fpp = "dataskipping.bloom.fpp"
  private val DefaultFpp = 0.01
  private val HashSeed = 42L
  val Fixed: Seq[StructField] = Seq(StructField("_bucketname", StringType), StructField("_offset", LongType),
    StructField("_length", LongType), StructField("_rows", LongType))

  def schema(columns: Seq[StructField]): StructType = StructType(Fixed ++ columns.flatMap { c =>
    Seq(StructField(s"${c.name}__min", c.dataType), StructField(s"${c.name}__max", c.dataType),
      StructField(s"${c.name}__nulls", LongType), StructField(s"${c.name}__bloom", BinaryType))
  })

  /** Types whose values have one hash per SQL-equal value (not floats: -0.0 = 0.0 and NaNs). */
  def hashable(dataType: DataType): Boolean = dataType match {
    case _: IntegralType | _: StringType | _: DecimalType | DateType | TimestampType | TimestampNTZType | BinaryType => true
    case _ => false
  }

  def hash(value: Any, dataType: DataType): Long = XxHash64Function.hash(value, dataType, HashSeed)

  override def analyzeIndexDefinition(base: CatalogTable, columns: Seq[StructField]): StructType = {
    IndexHandlers.requireAtomic("DATASKIPPING", columns)
    schema(columns)
  }

  override def buildPlan(input: BuildInput): RDD[InternalRow] = {
    val width = input.columns.length
    val types = input.columns.map(_.dataType).toArray
    val fpp = input.properties.get(Fpp).map(_.toDouble).getOrElse(DefaultFpp)
    val conf = input.conf
    input.scan.queryExecution.toRdd.mapPartitions { rows =>
      val files = TaskFiles.current()
      val orderings = types.map(TypeUtils.getInterpretedOrdering)
      val in = rows.buffered
      new Iterator[InternalRow] {
        override def hasNext: Boolean = in.hasNext
        override def next(): InternalRow = {
          val name = in.head.getUTF8String(width).copy()
          val file = files.rowGroups(files.number(name), conf.value.value)
          val group = file.find(in.head.getLong(width + 1))
          val part = in.head.getInt(width + 2)
          val mins, maxs = new Array[Any](width)
          val nulls = new Array[Long](width)
          val blooms = types.map(t => if (hashable(t)) BloomFilter.create(math.max(group.rows, 1L), fpp) else null)
          var count = 0L
          while (in.hasNext && in.head.getLong(width + 1) < group.firstRow + group.rows &&
              in.head.getUTF8String(width) == name) {
            val row = in.next()
            count += 1
            for (i <- 0 until width) {
              if (row.isNullAt(i)) nulls(i) += 1
              else {
                val value = row.get(i, types(i))
                if (mins(i) == null || orderings(i).lt(value, mins(i))) mins(i) = InternalRow.copyValue(value)
                if (maxs(i) == null || orderings(i).gt(value, maxs(i))) maxs(i) = InternalRow.copyValue(value)
                if (blooms(i) != null) blooms(i).putLong(hash(value, types(i)))
              }
            }
          }
          val values = Array[Any](file.bucket, group.offset, group.length,
            count) ++ (0 until width).flatMap(i => Seq(mins(i), maxs(i), nulls(i), bytes(blooms(i)))) :+ part
          new GenericInternalRow(values)
        }
      }
    }
  }

  private def bytes(bloom: BloomFilter): Array[Byte] = if (bloom == null) null else {
    val out = new ByteArrayOutputStream()
    bloom.writeTo(out)
    out.toByteArray
  }

  /** One row group's summary, as read back. */
  case class Summary(file: String, offset: Long, rows: Long, mins: Array[Any], maxs: Array[Any], nulls: Array[Long],
      blooms: Array[BloomFilter])

  override def candidates(session: SparkSession, dataDirs: Seq[String], columns: Seq[StructField],
      conjuncts: Seq[Expression]): Option[Map[String, Set[Long]]] = {
    val predicate = new SkippingPredicate(columns)
    if (!conjuncts.exists(predicate.usable)) return None
    val summaries = IndexCache.getOrCompute(s"dataskipping|${dataDirs.sorted.mkString(",")}") {
      val types = columns.map(_.dataType)
      session.read.schema(schema(columns)).parquet(dataDirs: _*).queryExecution.toRdd.map(_.copy()).collect().map { row =>
        val at = (i: Int, k: Int) => Fixed.length + i * 4 + k
        Summary(IndexState.pathKey(row.getUTF8String(0).toString), row.getLong(1), row.getLong(3),
          types.indices.map(i => if (row.isNullAt(at(i, 0))) null else row.get(at(i, 0), types(i))).toArray,
          types.indices.map(i => if (row.isNullAt(at(i, 1))) null else row.get(at(i, 1), types(i))).toArray,
          types.indices.map(i => row.getLong(at(i, 2))).toArray,
          types.indices.map(i => if (row.isNullAt(at(i, 3))) null
            else BloomFilter.readFrom(new ByteArrayInputStream(row.getBinary(at(i, 3))))).toArray)
      }
    }
    Some(summaries.filter(s => conjuncts.forall(predicate.mayMatch(_, s)))
      .groupBy(_.file).map { case (file, groups) => file -> groups.map(_.offset).toSet })
  }
}
