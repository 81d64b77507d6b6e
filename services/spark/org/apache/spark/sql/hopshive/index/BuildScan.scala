package org.apache.spark.sql.hopshive.index

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.hadoop.mapred.FileSplit
import org.apache.hadoop.mapreduce.{JobID, TaskAttemptID, TaskID, TaskType}
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl

import org.apache.spark.TaskContext
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.util.DateTimeUtils
import org.apache.spark.sql.classic.ClassicConversions.castToImpl
import org.apache.spark.sql.classic.Dataset
import org.apache.spark.sql.execution.datasources.{DataSourceUtils, FileIndex, HadoopFsRelation, LogicalRelation,
  PartitionDirectory, PartitionedFile, RecordReaderIterator}
import org.apache.spark.sql.execution.datasources.parquet.{ParquetFileFormat, ParquetFooterReader, ParquetOptions,
  ParquetUtils, VectorizedParquetRecordReader}
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types.StructType
import org.apache.spark.util.{SerializableConfiguration, Utils}

/**
 * The base rows a rebuild reads: exactly the files [[IndexRebuild]] listed (no second existence
 * check and listing of each file, which `read.parquet(files)` does), read by
 * [[RowGroupsParquetFileFormat]], which keeps each file's row groups from the footer it reads
 * anyway, so that the handlers need not read it again.
 */
object BuildScan {
  def apply(session: SparkSession, dataSchema: StructType, files: Seq[FileStatus]): DataFrame = {
    val relation = HadoopFsRelation(new ListedFiles(files), StructType(Nil), dataSchema, None,
      new RowGroupsParquetFileFormat, Map.empty)(session)
    Dataset.ofRows(session, LogicalRelation(relation, isStreaming = false))
  }
}

/** A fixed list of files, listed already: no partitions, nothing to refresh. */
private class ListedFiles(files: Seq[FileStatus]) extends FileIndex {
  override def rootPaths: Seq[Path] = files.map(_.getPath)
  override def listFiles(partitionFilters: Seq[Expression], dataFilters: Seq[Expression]): Seq[PartitionDirectory] =
    Seq(PartitionDirectory(InternalRow.empty, files.toArray))
  override def inputFiles: Array[String] = files.map(_.getPath.toString).toArray
  override def refresh(): Unit = ()
  override def sizeInBytes: Long = files.map(_.getLen).sum
  override def partitionSchema: StructType = StructType(Nil)
}

/**
 * Parquet read as Spark's vectorized reader reads it -- given the footer read once with the file
 * open, as Spark does -- keeping the footer's row groups for the task ([[TaskFiles.scanned]]).
 * What Spark would not read vectorized (complex types, the reader turned off) or with pushed
 * filters is read by Spark's own reader; the handlers then read those footers themselves.
 */
class RowGroupsParquetFileFormat extends ParquetFileFormat {
  override def buildReaderWithPartitionValues(session: SparkSession, dataSchema: StructType,
      partitionSchema: StructType, requiredSchema: StructType, filters: Seq[Filter], options: Map[String, String],
      hadoopConf: Configuration): PartitionedFile => Iterator[InternalRow] = {
    // Spark's reader, which also sets in hadoopConf what its vectorized reader reads from it
    // (the requested schema among others).
    val spark = super.buildReaderWithPartitionValues(session, dataSchema, partitionSchema, requiredSchema, filters,
      options, hadoopConf)
    val sqlConf = session.sessionState.conf
    val resultSchema = StructType(partitionSchema.fields ++ requiredSchema.fields)
    if (filters.nonEmpty || !ParquetUtils.isBatchReadSupportedForSchema(sqlConf, resultSchema)) return spark
    val conf = session.sparkContext.broadcast(new SerializableConfiguration(hadoopConf))
    val parquetOptions = new ParquetOptions(options, sqlConf)
    val datetimeMode = parquetOptions.datetimeRebaseModeInRead
    val int96Mode = parquetOptions.int96RebaseModeInRead
    val returningBatch = supportBatch(session, resultSchema)
    val offHeap = sqlConf.offHeapColumnVectorEnabled
    val capacity = sqlConf.parquetVectorizedReaderBatchSize
    val int96Conversion = sqlConf.isParquetINT96TimestampConversion
    val zone = sqlConf.sessionLocalTimeZone

    (file: PartitionedFile) => {
      val hadoop = conf.value.value
      val opened = ParquetFooterReader.openFileAndReadFooter(hadoop, file, true)
      var owned = true           // the stream is the reader's once it is initialized
      try {
        TaskFiles.current().scanned(file.toPath, RowGroups.of(opened.footer))
        val meta = opened.footer.getFileMetaData
        val datetime = DataSourceUtils.datetimeRebaseSpec(meta.getKeyValueMetaData.get, datetimeMode)
        val int96 = DataSourceUtils.int96RebaseSpec(meta.getKeyValueMetaData.get, int96Mode)
        val convertTz = if (int96Conversion && !meta.getCreatedBy.startsWith("parquet-mr")) {
          DateTimeUtils.getZoneId(zone)
        } else null
        val task = Option(TaskContext.get())
        val reader = new VectorizedParquetRecordReader(convertTz, datetime.mode.toString, datetime.timeZone,
          int96.mode.toString, int96.timeZone, offHeap && task.isDefined, capacity)
        val rows = new RecordReaderIterator(reader)
        task.foreach(_.addTaskCompletionListener[Unit](_ => rows.close()))
        val attempt = new TaskAttemptContextImpl(hadoop, new TaskAttemptID(new TaskID(new JobID(), TaskType.MAP, 0), 0))
        reader.initialize(new FileSplit(file.toPath, file.start, file.length, Array.empty[String]), attempt,
          Some(opened.inputFile), Some(opened.inputStream), Some(opened.footer))
        owned = false
        reader.initBatch(partitionSchema, file.partitionValues)
        if (returningBatch) reader.enableReturningBatches()
        rows.asInstanceOf[Iterator[InternalRow]]   // rows or, when returningBatch, batches: as Spark's
      } finally {
        if (owned) opened.inputStreamOpt.ifPresent(s => Utils.closeQuietly(s))
      }
    }
  }

  override def toString: String = "Parquet (row groups kept for an index build)"
}
