// In Spark's package: choosing partitions reuses Spark's own pruning rules, which are private[sql].
package org.apache.spark.sql.hopshive

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.catalog.HiveTableRelation
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression}
import org.apache.spark.sql.catalyst.planning.PhysicalOperation
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LeafNode, LogicalPlan}
import org.apache.spark.sql.execution.datasources.{CatalogFileIndex, HadoopFsRelation, LogicalRelation,
  PartitioningAwareFileIndex, PruneFileSourcePartitions}
import org.apache.spark.sql.hive.execution.PruneHiveTablePartitions
import org.apache.spark.sql.internal.SQLConf

/**
 * Reads of partitioned catalog tables, in the two forms Spark plans them: a Hive serde table
 * (`HiveTableRelation`) and a file-source table on the catalog's partitions (`LogicalRelation`
 * over a `CatalogFileIndex`, which is also what a converted Hive Parquet/ORC table becomes).
 * Until Spark's `PruneHiveTablePartitions` / `PruneFileSourcePartitions` run (the optimizer's
 * "Early Filter and Projection Push-Down" batch) their partitions are not chosen; afterwards
 * the read holds the partitions the metastore returned.
 */
private[hopshive] object PartitionedScan {

  /** The partition columns of a table read whose partitions are not chosen yet. */
  def unchosen(plan: LogicalPlan): Option[Seq[Attribute]] = plan match {
    case hive: HiveTableRelation if hive.isPartitioned && hive.prunedPartitions.isEmpty => Some(hive.partitionCols)
    case files: LogicalRelation => files.relation match {
      case fs: HadoopFsRelation if fs.location.isInstanceOf[CatalogFileIndex] && fs.partitionSchema.nonEmpty =>
        Some(files.resolve(fs.partitionSchema, SQLConf.get.resolver))
      case _ => None
    }
    case _ => None
  }

  /** The partition columns of a table read whose partitions are chosen, and one row of their
   *  values per chosen partition. */
  def chosen(plan: LogicalPlan): Option[(Seq[Attribute], Seq[InternalRow])] = plan match {
    case hive: HiveTableRelation if hive.prunedPartitions.isDefined =>
      val zone = SQLConf.get.sessionLocalTimeZone
      Some((hive.partitionCols, hive.prunedPartitions.get.map(_.toRow(hive.tableMeta.partitionSchema, zone))))
    case files: LogicalRelation if files.catalogTable.isDefined => files.relation match {
      case fs: HadoopFsRelation if fs.partitionSchema.nonEmpty => fs.location match {
        case index: PartitioningAwareFileIndex =>
          val columns = files.resolve(fs.partitionSchema, SQLConf.get.resolver)
          Some((columns, index.partitionSpec().partitions.map(_.values)))
        case _ => None
      }
      case _ => None
    }
    case _ => None
  }

  /**
   * `plan` with the partitions of the table read `leaf` chosen, `filter` added right above the
   * read: Spark's own rules do the choosing, from every partition predicate of the Projects and
   * Filters over the read, in one metastore call (`get_partitions_by_filter`, or
   * `get_partitions` when no predicate translates).  Spark does not choose them again later: both
   * rules skip a read whose partitions are chosen.
   */
  def choose(session: SparkSession, plan: LogicalPlan, leaf: LeafNode, filter: Expression): LogicalPlan =
    plan.transformDown {
      case scan @ PhysicalOperation(_, _, read: LeafNode) if read eq leaf =>
        val filtered = scan.transformUp { case node if node eq leaf => Filter(filter, leaf) }
        new PruneHiveTablePartitions(session)(PruneFileSourcePartitions(filtered))
    }

  /** The table read in `plan` that produces the same attributes as `leaf` (found again after a
   *  rewrite copied it). */
  def find(plan: LogicalPlan, leaf: LeafNode): Option[LeafNode] =
    plan.collectFirst { case read: LeafNode if read.outputSet == leaf.outputSet => read }
}
