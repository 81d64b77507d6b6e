package org.apache.spark.sql.hopshive.index

import java.util.Locale

import scala.jdk.CollectionConverters._

import org.apache.hadoop.hive.metastore.api.{FieldSchema, Index, NoSuchObjectException, SerDeInfo, StorageDescriptor,
  Table}
import org.apache.thrift.TException

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.catalog.{CatalogTable, CatalogTableType}
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.classic.ClassicConversions.castToImpl
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.hive.HopsHiveMetastore
import org.apache.spark.sql.types.{StringType, StructField}

/** What the index statements share: names as Hive normalises them, metastore calls with
 *  the metastore's own words on failure. */
private[index] object Indexes {
  val IndexTableType = "INDEX_TABLE"
  val ParquetSerde = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
  val ParquetInput = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
  val ParquetOutput = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"

  def lower(name: String): String = name.toLowerCase(Locale.ROOT)

  def qualify(session: SparkSession, table: TableIdentifier): TableIdentifier =
    TableIdentifier(lower(table.table), Some(lower(table.database.getOrElse(session.sessionState.catalog.getCurrentDatabase))))

  /** `f` with the session's metastore client; a Thrift error becomes an IndexException with its message. */
  def metastore[A](session: SparkSession)(f: org.apache.hadoop.hive.metastore.IMetaStoreClient => A): A =
    try HopsHiveMetastore.withClient(session)(f) catch {
      case e: IndexException => throw e
      case e: TException => throw IndexErrors(s"FAILED: Execution Error, return code 1 from org.apache.hadoop.hive.ql." +
        s"exec.DDLTask. ${e.getClass.getSimpleName}(message:${e.getMessage})", e)
    }

  /** The index of `table` named `name`, with Hive's error when there is none. */
  def index(session: SparkSession, table: TableIdentifier, name: String): Index =
    try HopsHiveMetastore.withClient(session)(_.getIndex(table.database.get, table.table, lower(name))) catch {
      case _: NoSuchObjectException => throw IndexErrors(s"FAILED: SemanticException [Error 10003]: Invalid index name $name")
    }

  def field(f: StructField): FieldSchema = new FieldSchema(f.name, f.dataType.catalogString, f.getComment().orNull)

  /** The base table, which must be a Parquet table and not a view (Hive's wording for a view). */
  def baseTable(session: SparkSession, table: TableIdentifier): CatalogTable = {
    val base = session.sessionState.catalog.getTableMetadata(table)
    if (base.tableType == CatalogTableType.VIEW) {
      throw IndexErrors(s"FAILED: Execution Error, return code 1 from org.apache.hadoop.hive.ql.exec.DDLTask. " +
        s"tableName=${table.table} is a VIRTUAL VIEW. Index on VIRTUAL VIEW is not supported.")
    }
    val parquet = base.provider.exists(p => lower(p) == "parquet") ||
      base.storage.serde.contains(ParquetSerde)
    if (!parquet) {
      throw IndexErrors(s"FAILED: indexes need a Parquet table: ${table.unquotedString} is stored as " +
        base.provider.filter(_ != "hive").orElse(base.storage.serde).getOrElse("unknown"))
    }
    base
  }
}

/** CREATE INDEX: the index and its index table in one metastore call (add_index), then, unless
 *  WITH DEFERRED REBUILD, its first build. */
case class CreateIndexCommand(definition: IndexDefinition) extends LeafRunnableCommand {
  override def run(session: SparkSession): Seq[Row] = {
    val d = definition
    val handler = IndexHandlers.named(d.handler)
    val table = Indexes.qualify(session, d.table)
    val base = Indexes.baseTable(session, table)
    val wanted = d.columns.map(Indexes.lower)
    val columns = wanted.flatMap(name => base.dataSchema.find(f => Indexes.lower(f.name) == name))
    if (columns.length != wanted.length || wanted.distinct.length != wanted.length) {
      throw IndexErrors("FAILED: Execution Error, return code 1 from org.apache.hadoop.hive.ql.exec.DDLTask. " +
        "Check the index columns, they should appear in the table being indexed.")
    }
    for (given <- d.partitionedBy if given.map(Indexes.lower) != base.partitionColumnNames.map(Indexes.lower)) {
      throw IndexErrors(s"FAILED: PARTITIONED BY (${given.mkString(", ")}): an index is partitioned like its base " +
        s"table here, by (${base.partitionColumnNames.mkString(", ")})")
    }
    val s = d.storage
    if (s.rowFormat.isDefined || s.storedBy.isDefined || s.storedAs.exists(f => Indexes.lower(f) != "parquet")) {
      throw IndexErrors(s"FAILED: the ${handler.shortName} index handler keeps its index table as Parquet: " +
        "only STORED AS PARQUET is accepted")
    }
    val indexTableName = d.inTable.map { t =>
      if (t.database.exists(db => Indexes.lower(db) != table.database.get)) {
        throw IndexErrors("FAILED: IN TABLE names a table of the base table's database")
      }
      Indexes.lower(t.table)
    }.getOrElse(s"${table.database.get}__${table.table}_${Indexes.lower(d.name)}__")
    val now = (System.currentTimeMillis() / 1000).toInt
    val serde = new SerDeInfo(null, Indexes.ParquetSerde, Map("serialization.format" -> "1").asJava)
    val indexSd = new StorageDescriptor(columns.map(Indexes.field).asJava, null, Indexes.ParquetInput,
      Indexes.ParquetOutput, false, -1, serde, null, null, Map.empty[String, String].asJava)
    val index = new Index(Indexes.lower(d.name), handler.className, table.database.get, table.table, now, 0,
      indexTableName, indexSd, (d.idxProperties ++ d.comment.map("comment" -> _)).asJava, d.deferred)
    val indexTable = new Table()
    indexTable.setDbName(table.database.get)
    indexTable.setTableName(indexTableName)
    indexTable.setOwner(session.sparkContext.sparkUser)
    indexTable.setCreateTime(now)
    indexTable.setTableType(Indexes.IndexTableType)
    indexTable.setParameters(d.tblProperties.asJava)
    indexTable.setPartitionKeys(base.partitionSchema.map(Indexes.field).asJava)
    val tableSd = new StorageDescriptor(indexSd)
    tableSd.setCols(handler.analyzeIndexDefinition(base, columns).map(Indexes.field).asJava)
    tableSd.setLocation(s.location.orNull)
    indexTable.setSd(tableSd)
    if (!handler.usesIndexTable && (d.inTable.isDefined || s.storedAs.isDefined || s.location.isDefined)) {
      throw IndexErrors(s"FAILED: the ${handler.shortName} index handler keeps no index table: IN TABLE, STORED AS " +
        "and LOCATION do not apply")
    }
    Indexes.metastore(session)(_.createIndex(index, if (handler.usesIndexTable) indexTable else null))
    if (!d.deferred) {
      IndexRebuild(session, base, Indexes.index(session, table, d.name), None).run()
    }
    Seq.empty
  }
}

/** ALTER INDEX name ON table [PARTITION (...)] REBUILD. */
case class RebuildIndexCommand(name: String, table: TableIdentifier, spec: Option[Seq[(String, String)]])
  extends LeafRunnableCommand {
  override def run(session: SparkSession): Seq[Row] = {
    val qualified = Indexes.qualify(session, table)
    val base = Indexes.baseTable(session, qualified)
    IndexRebuild(session, base, Indexes.index(session, qualified, name), spec.map(_.toMap)).run()
    Seq.empty
  }
}

/** DROP INDEX [IF EXISTS] name ON table: the index and its index table (the metastore drops both). */
case class DropIndexCommand(name: String, table: TableIdentifier, ifExists: Boolean) extends LeafRunnableCommand {
  override def run(session: SparkSession): Seq[Row] = {
    val qualified = Indexes.qualify(session, table)
    val found = try Some(Indexes.index(session, qualified, name)) catch {
      case _: IndexException if ifExists => None
    }
    found.foreach { index =>
      val location = Option(index.getIndexTableName).flatMap(name =>
        scala.util.Try(Indexes.metastore(session)(_.getTable(index.getDbName, name)).getSd.getLocation).toOption)
      Indexes.metastore(session)(_.dropIndex(index.getDbName, index.getOrigTableName, index.getIndexName, true))
      IndexHandlers.stored(index.getIndexHandlerClass).foreach(_.dropHook(location.map(IndexState.pathKey).toSeq))
    }
    Seq.empty
  }
}

/** SHOW [FORMATTED] INDEXES ON table: Hive's columns; FORMATTED adds Hive's header row. */
case class ShowIndexesCommand(table: TableIdentifier, formatted: Boolean) extends LeafRunnableCommand {
  private val names = Seq("idx_name", "tab_name", "col_names", "idx_tab_name", "idx_type", "comment")

  override val output: Seq[Attribute] = names.map(n => AttributeReference(n, StringType, nullable = true)())

  override def run(session: SparkSession): Seq[Row] = {
    val qualified = Indexes.qualify(session, table)
    val indexes = Indexes.metastore(session)(_.listIndexes(qualified.database.get, qualified.table, -1)).asScala
    val rows = indexes.toSeq.map { index =>
      Row(index.getIndexName, index.getOrigTableName, index.getSd.getCols.asScala.map(_.getName).mkString(", "),
        index.getIndexTableName,
        IndexHandlers.stored(index.getIndexHandlerClass).map(_.typeName).getOrElse(index.getIndexHandlerClass),
        Option(index.getParameters).flatMap(p => Option(p.get("comment"))).orNull)
    }
    if (formatted) Row(names: _*) +: rows else rows
  }
}
