// In Spark's package: the command reuses Spark's own checks and error messages, which are
// private[sql].
package org.apache.spark.sql.hopshive

import org.apache.hadoop.fs.Path

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.catalog.{CatalogTable, CatalogTableType}
import org.apache.spark.sql.catalyst.catalog.CatalogTypes.TablePartitionSpec
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.classic.ClassicConversions.castToImpl
import org.apache.spark.sql.errors.QueryCompilationErrors
import org.apache.spark.sql.execution.command.{CommandUtils, DDLUtils, TruncateTableCommand}
import org.apache.spark.sql.util.PartitioningUtils

import io.hopshive.spark.DirectoryContents

/** Plans every `TRUNCATE TABLE` (the root of its statement's plan) as [[KeepDirectoriesTruncate]]. */
object TruncateKeepingDirectories extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan = plan match {
    case truncate: TruncateTableCommand if truncate.getClass == classOf[TruncateTableCommand] =>
      new KeepDirectoriesTruncate(truncate.tableName, truncate.partitionSpec)
    case _ => plan
  }
}

/**
 * `TRUNCATE TABLE t [PARTITION (...)]` that empties the table's or the partitions'
 * directories instead of deleting and re-creating them: in HopsHive the delete would take
 * the table's or partitions' metadata with it (their foreign key to the inode).
 *
 * The checks, the partitions chosen, the cache refresh and the statistics update are
 * Spark's; only the delete-and-mkdir is replaced.  Permissions and ACLs need no restoring:
 * the directory is never re-created.
 */
class KeepDirectoriesTruncate(tableName: TableIdentifier, partitionSpec: Option[TablePartitionSpec])
  extends TruncateTableCommand(tableName, partitionSpec) {

  override def run(spark: SparkSession): Seq[Row] = {
    val catalog = spark.sessionState.catalog
    val table = catalog.getTableMetadata(tableName)
    val quotedName = table.identifier.quotedString
    if (table.tableType == CatalogTableType.EXTERNAL) {
      throw QueryCompilationErrors.truncateTableOnExternalTablesError(quotedName)
    }
    if (table.partitionColumnNames.isEmpty && partitionSpec.isDefined) {
      throw QueryCompilationErrors.truncateTablePartitionNotSupportedForNotPartitionedTablesError(quotedName)
    }
    if (partitionSpec.isDefined) {
      DDLUtils.verifyPartitionProviderIsHive(spark, table, "TRUNCATE TABLE ... PARTITION")
    }
    val hadoopConf = spark.sessionState.newHadoopConf()
    locations(spark, table).foreach { location =>
      val path = new Path(location)
      try {
        DirectoryContents.clear(path.getFileSystem(hadoopConf), path)
      } catch {
        case scala.util.control.NonFatal(e) =>
          throw QueryCompilationErrors.failToTruncateTableWhenRemovingDataError(quotedName, path, e)
      }
    }
    spark.catalog.refreshTable(quotedName)
    CommandUtils.updateTableStats(spark, table)
    Seq.empty
  }

  /** The table's directory, or those of the partitions the spec selects (all without one). */
  private def locations(spark: SparkSession, table: CatalogTable): Seq[java.net.URI] = {
    if (table.partitionColumnNames.isEmpty) {
      return table.storage.locationUri.toSeq
    }
    val spec = partitionSpec.map(PartitioningUtils.normalizePartitionSpec(
      _, table.partitionSchema, table.identifier.quotedString, spark.sessionState.conf.resolver))
    val found = spark.sessionState.catalog.listPartitions(table.identifier, spec).flatMap(_.storage.locationUri)
    for (given <- partitionSpec if found.isEmpty && given.size == table.partitionColumnNames.length) {
      throw QueryCompilationErrors.noSuchPartitionError(table.database, table.identifier.table, given)
    }
    found
  }
}
