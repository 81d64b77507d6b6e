package org.apache.spark.sql.hopshive.index

import scala.collection.mutable

import org.apache.spark.sql.{Column, DataFrame}
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData
import org.apache.spark.sql.functions.{col, explode}
import org.apache.spark.sql.types.{ArrayType, LongType, StructField}

/**
 * Hive's compact index (`CompactIndexHandler`): one row per distinct value of the indexed
 * columns and file holding it, with the file (`_bucketname`) and the starting offsets of the
 * Parquet row groups holding it (`_offsets`), sorted on the indexed columns (see
 * [[KeyedIndexHandler]]).
 */
object CompactIndexHandler extends KeyedIndexHandler {
  override val shortName = "COMPACT"
  override val className: String = IndexHandlers.CompactClass
  val Offsets = "_offsets"

  override protected val placeFields: Seq[StructField] =
    Seq(StructField(Offsets, ArrayType(LongType, containsNull = false)))

  override protected def offsets(index: DataFrame): Column = explode(col(Offsets))

  /** A file: the offsets of its row groups holding the value (rows ascend, so offsets do). */
  override protected def place(file: FileRowGroups, first: Long): Place = new Place {
    private val offsets = new mutable.ArrayBuilder.ofLong
    private var last = -1L
    override def holds(row: Long): Boolean = true
    override def add(row: Long): Unit = {
      val offset = file.find(row).offset
      if (offset != last) { offsets += offset; last = offset }
    }
    override def values: Seq[Any] = Seq(UnsafeArrayData.fromPrimitiveArray(offsets.result()))
  }
}
