package org.apache.spark.sql.hopshive.index

import org.apache.hadoop.conf.Configuration

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.datasources.PartitionedFile
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types.StructType
import org.apache.spark.util.SerializableConfiguration

/**
 * Parquet, reading of some files only the row groups an index named (by starting offset).
 * Spark's Parquet reader reads, of a file split, the row groups whose midpoint lies in it; so
 * each named row group of a split is read as a split of its own (its offset and length, from
 * the footer), and a split with none is not opened at all.  Files not named are read as usual.
 */
class IndexedParquetFileFormat(val rowGroups: Map[String, Set[Long]]) extends ParquetFileFormat {
  override def buildReaderWithPartitionValues(sparkSession: SparkSession, dataSchema: StructType,
      partitionSchema: StructType, requiredSchema: StructType, filters: Seq[Filter], options: Map[String, String],
      hadoopConf: Configuration): PartitionedFile => Iterator[InternalRow] = {
    val read = super.buildReaderWithPartitionValues(sparkSession, dataSchema, partitionSchema, requiredSchema,
      filters, options, hadoopConf)
    val conf = sparkSession.sparkContext.broadcast(new SerializableConfiguration(hadoopConf))
    val named = rowGroups
    (file: PartitionedFile) => named.get(IndexState.pathKey(file.toPath.toString)) match {
      case None => read(file)
      case Some(offsets) =>
        RowGroups.read(conf.value.value, file.toPath).iterator
          .filter { g =>
            val middle = g.offset + g.length / 2
            offsets(g.offset) && middle >= file.start && middle < file.start + file.length
          }
          .flatMap(g => read(file.copy(start = g.offset, length = g.length)))
    }
  }

  override def toString: String = "Parquet (row groups named by an index)"
}
