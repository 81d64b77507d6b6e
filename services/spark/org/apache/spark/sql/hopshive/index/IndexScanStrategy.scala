package org.apache.spark.sql.hopshive.index

import scala.util.control.NonFatal

import org.apache.spark.internal.Logging
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression, SortOrder, SubqueryExpression}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.plans.physical.Partitioning
import org.apache.spark.sql.catalyst.planning.PhysicalOperation
import org.apache.spark.sql.execution.{FileSourceScanExec, SparkPlan, SparkStrategy, UnaryExecNode}
import org.apache.spark.sql.execution.datasources.{FileSourceStrategy, HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.vectorized.ColumnarBatch

/** Settings of [[IndexScanStrategy]]. */
object IndexScanStrategy {
  /** On unless "false": a session's SET turns index use off and on. */
  val Enabled = "spark.hopshive.index.enabled"
}

/**
 * Queries use indexes: a scan of a Parquet catalog table with a predicate on the columns of
 * one of its indexes reads only the files the index says can hold matching rows, and of those
 * only the row groups it names ([[IndexedParquetFileFormat]]), in the partitions whose index is
 * fresh; stale partitions (and those never indexed) are read whole.
 * Results cannot change: a file is left out only when a fresh index partition says no row of
 * it can match, and Spark still applies the whole predicate to the rows it reads.
 *
 * A planner strategy, tried before Spark's: it hands the scan to Spark's own
 * `FileSourceStrategy` with the table's file listing narrowed ([[IndexedFileIndex]]), and puts
 * an [[IndexedScanExec]] over the scan that says in EXPLAIN which index was used and what it
 * skipped.  (A physical rule would see only the adaptive plan's shell; the optimizer has no
 * file listing yet.)  Any failure to consult an index falls back to the plain scan.
 */
case class IndexScanStrategy(session: SparkSession) extends SparkStrategy with Logging {
  override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
    case PhysicalOperation(_, filters, relation: LogicalRelation) if enabled && filters.nonEmpty =>
      relation.relation match {
        case fs: HadoopFsRelation if relation.catalogTable.isDefined && fs.fileFormat.isInstanceOf[ParquetFileFormat] &&
            !fs.location.isInstanceOf[IndexedFileIndex] =>
          val selection = try IndexSelection.choose(session, relation.catalogTable.get, fs, filters) catch {
            case NonFatal(e) =>
              logWarning(s"HopsHive: indexes of ${relation.catalogTable.get.identifier} not used", e)
              None
          }
          selection.map { chosen =>
            val format = if (chosen.rowGroups.isEmpty) fs.fileFormat else new IndexedParquetFileFormat(chosen.rowGroups)
            val narrowed = relation.copy(relation = fs.copy(location = new IndexedFileIndex(fs.location, chosen.skipped),
              fileFormat = format)(fs.sparkSession))
            FileSourceStrategy(plan.transformUp { case r: LogicalRelation if r eq relation => narrowed })
              .map(_.transformUp {
                case scan: FileSourceScanExec if scan.relation.location.isInstanceOf[IndexedFileIndex] =>
                  IndexedScanExec(scan, chosen.description)
              })
          }.getOrElse(Nil)
        case _ => Nil
      }
    case _ => Nil
  }

  private def enabled: Boolean = session.sessionState.conf.getConfString(IndexScanStrategy.Enabled, "true").toBoolean
}

/** The scan of an indexed table, unchanged; its line in EXPLAIN tells what the index did. */
case class IndexedScanExec(child: SparkPlan, description: String) extends UnaryExecNode {
  override def output: Seq[Attribute] = child.output
  override def outputPartitioning: Partitioning = child.outputPartitioning
  override def outputOrdering: Seq[SortOrder] = child.outputOrdering
  override def supportsColumnar: Boolean = child.supportsColumnar
  override def supportsRowBased: Boolean = child.supportsRowBased
  override def vectorTypes: Option[Seq[String]] = child.vectorTypes
  override protected def doExecute(): RDD[InternalRow] = child.execute()
  override protected def doExecuteColumnar(): RDD[ColumnarBatch] = child.executeColumnar()
  override def simpleString(maxFields: Int): String = s"IndexedScan $description"
  override protected def withNewChildInternal(newChild: SparkPlan): IndexedScanExec = copy(child = newChild)
}

/** The predicates of a scan, split as Spark splits them: on partition columns, on data. */
private[index] case class ScanFilters(partition: Seq[Expression], data: Seq[Expression])

private[index] object ScanFilters {
  def apply(fs: HadoopFsRelation, filters: Seq[Expression]): ScanFilters = {
    val partitionColumns = fs.partitionSchema.fieldNames.map(_.toLowerCase).toSet
    val usable = filters.filter(f => f.deterministic && !SubqueryExpression.hasSubquery(f))
    val (partition, data) = usable.partition(f =>
      f.references.nonEmpty && f.references.forall(a => partitionColumns(a.name.toLowerCase)))
    ScanFilters(partition, data)
  }
}
