package org.apache.spark.sql.hopshive.index

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.HadoopReadOptions
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.util.HadoopInputFile

/** One Parquet row group: its first row's index in the file, its rows, and its bytes. */
case class RowGroup(firstRow: Long, rows: Long, offset: Long, length: Long)

/**
 * The row groups of Parquet files, from their footers, read where the rows are (in the
 * build's tasks): a row's `_metadata.row_index` says which row group holds it, and a row
 * group is named by its starting offset, as Hive's compact index names blocks.
 */
class RowGroups(conf: Configuration) {
  private var path: String = _
  private var groups: Array[RowGroup] = Array.empty

  /** The row group of `file` holding row `row` (footers are read once per file in a row). */
  def find(file: String, row: Long): RowGroup = {
    if (file != path) {
      groups = RowGroups.read(conf, new Path(new java.net.URI(file)))
      path = file
    }
    var low = 0
    var high = groups.length - 1
    while (low < high) {     // the last group whose first row is <= row
      val mid = (low + high + 1) >>> 1
      if (groups(mid).firstRow <= row) low = mid else high = mid - 1
    }
    groups(low)
  }
}

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
}
