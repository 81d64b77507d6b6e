package org.apache.spark.sql.hopshive.index

import java.util.UUID
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.hadoop.fs.{FileStatus, FileSystem, Path}
import org.apache.hadoop.hive.metastore.{LockComponentBuilder, LockRequestBuilder}
import org.apache.hadoop.hive.metastore.api.{DataOperationType, Index, LockState, Partition}

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.catalyst.expressions.{Ascending, SortOrder}
import org.apache.spark.sql.catalyst.plans.logical.Union
import org.apache.spark.sql.catalyst.types.DataTypeUtils
import org.apache.spark.sql.classic.ClassicConversions.castToImpl
import org.apache.spark.sql.classic.Dataset
import org.apache.spark.sql.execution.LogicalRDD
import org.apache.spark.sql.execution.datasources.InMemoryFileIndex
import org.apache.spark.sql.functions.{col, lit}
import org.apache.spark.sql.types.{IntegerType, StructField}
import org.apache.spark.util.SerializableConfiguration

/**
 * ALTER INDEX ... REBUILD, atomically (the seed: "if a rebuild fails, then the stale index
 * remains untouched").
 *
 *  1. The index table's EXCLUSIVE Hive lock, heartbeated while the rebuild runs: a second
 *     rebuild of the same index fails at once, naming the lock; a killed one's lock expires.
 *  2. The base partitions chosen (all, or those of the PARTITION spec) are listed, and their
 *     digests ([[IndexState.digest]]) taken from that listing; exactly those files are read.
 *  3. One Spark job reads them (as listed: [[BuildScan]]) and writes every partition's index into a
 *     staging directory below the index table (`_part=N`, one base partition per task, no shuffle).
 *  4. Each partition's output moves to a new version directory `v<version>` below its index
 *     partition; nothing reads it yet.
 *  5. One metastore call (alter_partitions; alter_table when the base is unpartitioned)
 *     points the index partitions at their new versions and records the base state: the
 *     new index becomes visible at once, and only then.
 *  6. Old versions and the staging directory are deleted, as are what killed rebuilds left.
 *
 * A failure before 5 leaves the metastore, and so the index queries see, as it was.
 */
case class IndexRebuild(session: SparkSession, base: CatalogTable, index: Index, spec: Option[Map[String, String]]) {
  private val db = index.getDbName
  private val handler = IndexHandlers.stored(index.getIndexHandlerClass).getOrElse(
    throw IndexErrors(s"FAILED: index ${index.getIndexName} uses handler ${index.getIndexHandlerClass}, which " +
      "HopsHive does not implement: it cannot be rebuilt"))
  private val hadoopConf = session.sessionState.newHadoopConf()

  /** A base partition to index: its values (as the index table's), location and digest. */
  private case class Target(values: Seq[String], location: String, ddlTime: String, files: Seq[FileStatus])

  def run(): Unit = {
    val lockId = lock()
    val heartbeat = Heartbeat.start(session, lockId)
    try rebuild() finally {
      heartbeat.finish()
      Indexes.metastore(session)(_.unlock(lockId))
    }
  }

  private def lock(): Long = {
    val component = new LockComponentBuilder().setExclusive().setDbName(db).setTableName(index.getIndexTableName)
      .setOperationType(DataOperationType.NO_TXN).build()
    val request = new LockRequestBuilder("hopshive-index-rebuild").setUser(session.sparkContext.sparkUser)
      .addLockComponent(component).build()
    val response = Indexes.metastore(session)(_.lock(request))
    if (response.getState != LockState.ACQUIRED) {
      Indexes.metastore(session)(_.unlock(response.getLockid))
      throw IndexErrors(s"FAILED: index ${index.getIndexName} on $db.${index.getOrigTableName} is being rebuilt by " +
        s"another session (its index table $db.${index.getIndexTableName} is locked): try again when it is done")
    }
    response.getLockid
  }

  private def rebuild(): Unit = {
    val indexTable = Indexes.metastore(session)(_.getTable(db, index.getIndexTableName))
    val root = new Path(indexTable.getSd.getLocation)
    val fs = root.getFileSystem(hadoopConf)
    removeStaging(fs, root)
    val targets = chosen()
    val partitions = if (base.partitionColumnNames.isEmpty) Nil else indexPartitions(targets)
    val locations = if (partitions.isEmpty) Seq(root.toString) else partitions.map(_.getSd.getLocation)
    val staging = new Path(root, s".hopshive-staging-${UUID.randomUUID()}")
    val version = s"${System.currentTimeMillis()}-${UUID.randomUUID().toString.take(8)}"
    try {
      build(targets, staging)
      val states = targets.zip(locations).zipWithIndex.map { case ((target, location), i) =>
        val dir = new Path(IndexState.dataDir(location, version))
        val output = new Path(staging, s"_part=$i")
        if (fs.exists(output)) rename(fs, output, dir) else fs.mkdirs(dir)
        IndexState(version, System.currentTimeMillis(), target.location,
          IndexState.digest(target.location, target.files.map(f => (f.getPath.toString, f.getLen, f.getModificationTime))),
          target.files.length, target.files.map(_.getLen).sum, target.ddlTime)
      }
      commit(indexTable, partitions, states)
    } finally {
      fs.delete(staging, true)
    }
    val stale = locations.flatMap { location =>
      Option(fs.listStatus(new Path(location))).toSeq.flatten.map(_.getPath)
        .filter(p => p.getName.startsWith("v") && p.getName != s"v$version")
    }
    stale.foreach(fs.delete(_, true))
    handler.dropHook(stale.map(p => IndexState.pathKey(p.toString)))
  }

  /** The base partitions of the spec (all without one), listed as queries list them. */
  private def chosen(): Seq[Target] = {
    val catalog = session.sessionState.catalog
    val places = if (base.partitionColumnNames.isEmpty) {
      if (spec.isDefined) throw IndexErrors(s"FAILED: ${base.identifier.unquotedString} is not partitioned")
      Seq((Seq.empty[String], base.location.toString, base.properties.getOrElse("transient_lastDdlTime", "")))
    } else {
      val keys = base.partitionColumnNames.map(Indexes.lower)
      for (given <- spec; key <- given.keys if !keys.contains(Indexes.lower(key))) {
        throw IndexErrors(s"FAILED: $key is not a partition column of ${base.identifier.unquotedString}")
      }
      val found = catalog.listPartitions(base.identifier, spec)
      if (spec.isDefined && found.isEmpty) {
        throw IndexErrors(s"FAILED: SemanticException [Error 10006]: Partition not found ${spec.get.mkString(", ")}")
      }
      found.map(p => (base.partitionColumnNames.map(p.spec), p.location.toString,
        p.parameters.getOrElse("transient_lastDdlTime", "")))
    }
    val listed = InMemoryFileIndex.bulkListLeafFiles(places.map(p => new Path(p._2)), hadoopConf, null, session)
      .map { case (path, files) => IndexState.pathKey(path.toString) -> files }.toMap
    places.map { case (values, location, ddlTime) =>
      Target(values, location, ddlTime, listed.getOrElse(IndexState.pathKey(location), Nil))
    }
  }

  /** The index partitions of the targets, made (empty, never built: stale) where missing. */
  private def indexPartitions(targets: Seq[Target]): Seq[Partition] = {
    val name = index.getIndexTableName
    def existing = Indexes.metastore(session)(_.listPartitions(db, name, (-1).toShort)).asScala
      .map(p => p.getValues.asScala.toSeq -> p).toMap
    val missing = targets.map(_.values).filterNot(existing.contains)
    if (missing.nonEmpty) {
      val table = Indexes.metastore(session)(_.getTable(db, name))
      val made = missing.map { values =>
        val sd = table.getSd.deepCopy()
        sd.setLocation(null)
        new Partition(values.asJava, db, name, 0, 0, sd, new java.util.HashMap[String, String]())
      }
      Indexes.metastore(session)(_.add_partitions(made.asJava))
    }
    val all = existing    // read again: with the partitions just made
    targets.map(t => all(t.values))
  }

  /** The one Spark job: every target's index rows into `staging/_part=N`. */
  private def build(targets: Seq[Target], staging: Path): Unit = {
    val columns = index.getSd.getCols.asScala.map(c =>
      base.dataSchema.find(f => Indexes.lower(f.name) == Indexes.lower(c.getName)).getOrElse(
        throw IndexErrors(s"FAILED: column ${c.getName} of index ${index.getIndexName} is gone from the base table"))).toSeq
    val scans = targets.zipWithIndex.filter(_._1.files.nonEmpty).map { case (target, i) =>
      BuildScan(session, base.dataSchema, target.files)
        .select(columns.map(c => col(s"`${c.name}`")) ++ Seq(col("_metadata.file_path").as("_file"),
          col("_metadata.row_index").as("_row"), lit(i).as("_part")): _*)
        .queryExecution.analyzed
    }
    if (scans.isEmpty) return
    val input = BuildInput(Dataset.ofRows(session, Union(scans)), columns,
      Option(index.getParameters).map(_.asScala.toMap).getOrElse(Map.empty),
      session.sparkContext.broadcast(new SerializableConfiguration(hadoopConf)))
    val output = DataTypeUtils.toAttributes(handler.analyzeIndexDefinition(base, columns).add(StructField("_part", IntegerType)))
    val rows = LogicalRDD(output, handler.buildPlan(input), outputOrdering = Seq(SortOrder(output.last, Ascending)))(session)
    session.sparkContext.setJobDescription(s"HopsHive: rebuild index ${index.getIndexName} on $db.${index.getOrigTableName}")
    try {
      Dataset.ofRows(session, rows).write.partitionBy("_part").option("compression", "zstd")
        .option("parquet.writer.version", "PARQUET_2_0").parquet(staging.toString)
    } finally session.sparkContext.setJobDescription(null)
  }

  private def rename(fs: FileSystem, from: Path, to: Path): Unit =
    if (!fs.rename(from, to)) throw IndexErrors(s"FAILED: could not move the rebuilt index from $from to $to")

  /** The commit: one metastore call makes every new version visible. */
  private def commit(indexTable: org.apache.hadoop.hive.metastore.api.Table, partitions: Seq[Partition],
      states: Seq[IndexState]): Unit = {
    if (partitions.isEmpty) {
      indexTable.getParameters.putAll(states.head.toParameters.asJava)
      Indexes.metastore(session)(_.alter_table(db, indexTable.getTableName, indexTable))
    } else {
      partitions.zip(states).foreach { case (p, state) => p.getParameters.putAll(state.toParameters.asJava) }
      Indexes.metastore(session)(_.alter_partitions(db, indexTable.getTableName, partitions.asJava))
    }
  }

  /** Staging directories of rebuilds that died (the lock held here says none is running). */
  private def removeStaging(fs: FileSystem, root: Path): Unit =
    Option(fs.listStatus(root)).toSeq.flatten.map(_.getPath).filter(_.getName.startsWith(".hopshive-staging-"))
      .foreach(fs.delete(_, true))
}

/** Keeps a Hive lock alive: a heartbeat every third of the metastore's lock timeout. */
private class Heartbeat(session: SparkSession, lockId: Long, intervalMs: Long) extends Thread("hopshive-index-heartbeat") {
  setDaemon(true)
  @volatile private var running = true

  override def run(): Unit = while (running) {
    try {
      TimeUnit.MILLISECONDS.sleep(intervalMs)
      if (running) Indexes.metastore(session)(_.heartbeat(0L, lockId))
    } catch {
      case _: InterruptedException => ()
      case NonFatal(_) => ()    // the rebuild's own calls report a lost metastore
    }
  }

  def finish(): Unit = {
    running = false
    interrupt()
    join()
  }
}

private object Heartbeat {
  def start(session: SparkSession, lockId: Long): Heartbeat = {
    val timeout = Indexes.metastore(session)(_.getConfigValue("hive.txn.timeout", "300s"))
    val seconds = """(\d+)\s*([smh]?)""".r.findFirstMatchIn(timeout.trim).map { m =>
      m.group(1).toLong * (m.group(2) match { case "m" => 60; case "h" => 3600; case _ => 1 })
    }.getOrElse(300L)
    val beat = new Heartbeat(session, lockId, math.max(1000L, seconds * 1000 / 3))
    beat.start()
    beat
  }
}
