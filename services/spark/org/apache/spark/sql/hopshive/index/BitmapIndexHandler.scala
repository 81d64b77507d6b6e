package org.apache.spark.sql.hopshive.index

import scala.collection.mutable

import org.apache.spark.sql.{Column, DataFrame}
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.types.{ArrayType, LongType, StructField}

/**
 * Hive's bitmap index (`BitmapIndexHandler`): one row per distinct value of the indexed columns
 * and Parquet row group holding it, with the file (`_bucketname`), the row group's starting
 * offset (`_offset`; Hive's block offset) and the bitmap of the rows of the row group holding
 * the value (`_bitmaps`, see [[RowBitmap]]), sorted on the indexed columns (see
 * [[KeyedIndexHandler]]).  A query keeps the row groups of the index rows its predicate
 * matches, as the compact index keeps the offsets of its rows.
 */
object BitmapIndexHandler extends KeyedIndexHandler {
  override val shortName = "BITMAP"
  override val className: String = IndexHandlers.BitmapClass
  val Offset = "_offset"
  val Bitmaps = "_bitmaps"

  override protected val placeFields: Seq[StructField] =
    Seq(StructField(Offset, LongType), StructField(Bitmaps, ArrayType(LongType, containsNull = false)))

  override protected def offsets(index: DataFrame): Column = col(Offset)

  /** A row group: the bitmap of its rows holding the value. */
  override protected def place(file: FileRowGroups, first: Long): Place = new Place {
    private val group = file.find(first)
    private val bitmap = new RowBitmap
    override def holds(row: Long): Boolean = row < group.firstRow + group.rows
    override def add(row: Long): Unit = bitmap.add(row - group.firstRow)
    override def values: Seq[Any] = Seq(group.offset, UnsafeArrayData.fromPrimitiveArray(bitmap.result()))
  }
}

/**
 * A bitmap of row positions within a row group (bit `p % 64` of word `p / 64` set when row `p`
 * holds the value), as `array<bigint>`.  Hive compressed these words with EWAH (javaewah's
 * `EWAHCompressedBitmap`); this is a simpler word-aligned run-length code of the same words:
 * chunks of a marker -- the number of all-zero words before the chunk (high 32 bits) and of
 * literal words in it (low 32 bits) -- followed by those literal words.  A value on one row
 * costs two longs; a value on every row one long more than its words.  Positions are added in
 * ascending order.
 */
final class RowBitmap {
  private val out = new mutable.ArrayBuilder.ofLong
  private val literals = new mutable.ArrayBuilder.ofLong
  private var count = 0           // literal words of the open chunk
  private var skipped = 0L        // zero words before the open chunk
  private var next = 0L           // the word after the last one coded (or in the open chunk)
  private var index = -1L         // the word being filled
  private var word = 0L

  def add(position: Long): Unit = {
    val at = position >>> 6
    if (at != index) { flush(); index = at }
    word |= 1L << (position & 63)
  }

  def result(): Array[Long] = {
    flush()
    close()
    out.result()
  }

  private def flush(): Unit = if (index >= 0) {
    if (count == 0 || index != next) {
      close()
      skipped = index - next
    }
    literals += word
    count += 1
    next = index + 1
    word = 0L
    index = -1L
  }

  private def close(): Unit = if (count > 0) {
    out += (skipped << 32) | count
    out ++= literals.result()
    literals.clear()
    count = 0
  }
}
