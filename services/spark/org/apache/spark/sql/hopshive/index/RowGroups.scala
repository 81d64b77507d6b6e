package org.apache.spark.sql.hopshive.index

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.HadoopReadOptions
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.metadata.ParquetMetadata
import org.apache.parquet.hadoop.util.HadoopInputFile

import org.apache.spark.unsafe.types.UTF8String

/** One Parquet row group: its first row's index in the file, its rows, and its bytes. */
case class RowGroup(firstRow: Long, rows: Long, offset: Long, length: Long)

/** The row groups of one file, and its path as an index names it (`_bucketname`). */
case class FileRowGroups(bucket: UTF8String, groups: Array[RowGroup]) {
  /** The row group holding row `row` of the file. */
  def find(row: Long): RowGroup = {
    var low = 0
    var high = groups.length - 1
    while (low < high) {     // the last group whose first row is <= row
      val mid = (low + high + 1) >>> 1
      if (groups(mid).firstRow <= row) low = mid else high = mid - 1
    }
    groups(low)
  }
}

/**
 * The row groups of Parquet files, from their footers: a row's `_metadata.row_index` says which
 * row group holds it, and a row group is named by its starting offset, as Hive's compact index
 * names blocks.  A build's tasks take them from the footers their scan read ([[TaskFiles]]).
 */
object RowGroups {
  def read(conf: Configuration, path: Path): Array[RowGroup] = {
    val reader = ParquetFileReader.open(HadoopInputFile.fromPath(path, conf), HadoopReadOptions.builder(conf).build())
    try {
      var first = 0L
      reader.getFooter.getBlocks.asScala.map { block =>
        val group = RowGroup(first, block.getRowCount, block.getStartingPos, block.getCompressedSize)
        first += block.getRowCount
        group
      }.toArray
    } finally reader.close()
  }

  /** The row groups of a footer read for a split: those of the split, with their first rows in the file
   *  (None when the reader did not say). */
  def of(footer: ParquetMetadata): Option[Array[RowGroup]] = {
    val blocks = footer.getBlocks.asScala
    if (blocks.exists(_.getRowIndexOffset < 0)) None
    else Some(blocks.map(b => RowGroup(b.getRowIndexOffset, b.getRowCount, b.getStartingPos, b.getCompressedSize)).toArray)
  }
}
