// In Spark's package: the rule runs a query of its own and chooses partitions with Spark's own
// rules, which are private[sql].
package org.apache.spark.sql.hopshive

import scala.collection.mutable.ArrayBuffer
import scala.util.control.NonFatal

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Alias, And, Attribute, BindReferences, Cast, EqualTo, EvalMode,
  Expression, InSubquery, IsNotNull, ListQuery, Literal, PredicateHelper}
import org.apache.spark.sql.catalyst.optimizer.{BuildLeft, BuildRight, BuildSide, JoinSelectionHelper}
import org.apache.spark.sql.catalyst.plans.{ExistenceJoin, InnerLike, JoinType, LeftAnti, LeftOuter, LeftSemi,
  RightOuter}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, Join, JoinHint, LeafNode, LocalRelation, LogicalPlan,
  Project}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.classic.ClassicConversions.castToImpl
import org.apache.spark.sql.execution.SQLExecution
import org.apache.spark.sql.types.{DataType, IntegralType}

/** Settings of [[MapJoinPruning]]: session SQL settings, so `SET` changes them for a session. */
object MapJoinPruning {
  /** Off unless "true". */
  val Enabled = "spark.hopshive.mapJoinPruning.enabled"
  /** Distinct values of a column above which the metastore gets a min/max range, not an IN list. */
  val MaxValues = "spark.hopshive.mapJoinPruning.maxValues"
  val DefaultMaxValues = 1000
}

/**
 * Map-join partition pruning (HIVE-5119): for an equi-join whose big side reads a partitioned
 * catalog table and joins on its partition columns, the small side's key values are known
 * before the big table is read, so only the partitions they can match are fetched from the
 * metastore (`get_partitions_by_filter` with an IN list, or a range) and listed.  Spark's
 * dynamic partition pruning cannot do this: it fetches and lists every partition at planning
 * and only skips files when the query runs.
 *
 * It runs in the optimizer's "Pre CBO Rules" batch: after joins, filters and projections are
 * in their final places, and right before the "Early Filter and Projection Push-Down" batch in
 * which Spark's `PruneHiveTablePartitions` / `PruneFileSourcePartitions` fetch partitions.
 * There, for each join (outermost first):
 *
 *  1. The big side is the one Spark streams: the other side is the one Spark broadcasts
 *     (hints first, then `spark.sql.autoBroadcastJoinThreshold`, as Spark's JoinSelection
 *     decides).  Pruning it must not change the join's result: the big side must be one whose
 *     unmatched rows the join drops (inner; the left of a left semi join, the null-supplying
 *     side of an outer join: Spark's `canPruneLeft/Right`, the rule of its own DPP).  Anti and
 *     full outer joins and the preserved side of an outer join are left alone.
 *  2. Keys are the `a = b` conjuncts of the condition (an OR of equalities gives none).  The
 *     big-side expression must be a partition column of a table read, unchanged on its way up:
 *     through Projects (renames), deterministic Filters and joins that pass the column's rows
 *     through, and at most widening casts between integral types (tinyint < smallint < int <
 *     bigint), which keep equality.  Any other cast or function leaves that key unused.
 *  3. The small side's key values come from the metastore when every small key is a partition
 *     column of one table read there (its partitions' values, read without reading its data;
 *     no broadcast needed); otherwise the small side, if Spark broadcasts it and it is
 *     deterministic, runs once as its own query (shown in the Spark UI) and is replaced by a
 *     LocalRelation of its rows, which the broadcast then ships: the small tables are scanned
 *     once.  A small side over the broadcast threshold is never run.
 *
 * Then each big table read gets one Filter with every key set that applies to it (several joins
 * on the same columns intersect), Spark's own rules choose its partitions right away (one
 * metastore call), and a [[MapJoinPruned]] conjunct shows the result in EXPLAIN.  An empty key
 * set replaces the read by an empty relation: nothing is fetched.  A join the rule cannot handle
 * keeps its plan; an added predicate that the join condition already implies cannot change a
 * result.
 */
case class MapJoinPruning(session: SparkSession) extends Rule[LogicalPlan] with JoinSelectionHelper
  with PredicateHelper {

  /** A partition column of a table read, as a join key reaches it. */
  private case class Traced(read: LeafNode, column: Attribute)

  override def apply(plan: LogicalPlan): LogicalPlan = {
    if (!conf.getConfString(MapJoinPruning.Enabled, "false").toBoolean) {
      return plan
    }
    val found = ArrayBuffer.empty[KeySet]
    val rewritten = plan.transformDown {
      case join: Join => prune(join, found)
      case filter: Filter => pruneBySubquery(filter, found)
    }
    rewritten.invalidateStatsCache()   // sizes were estimated before any partition was chosen
    if (found.isEmpty) rewritten else restrictReads(rewritten, found.toSeq)
  }

  private def maxValues: Int =
    conf.getConfString(MapJoinPruning.MaxValues, MapJoinPruning.DefaultMaxValues.toString).toInt

  /** The join with its small side's key values known (recorded in `found`), or the join as it was. */
  private def prune(join: Join, found: ArrayBuffer[KeySet]): LogicalPlan = {
    if (join.isStreaming) {
      return join
    }
    val equalities = join.condition.toSeq.flatMap(splitConjunctivePredicates).collect { case EqualTo(l, r) => (l, r) }
    val build = broadcastSide(join)
    orientations(join, build).iterator.flatMap(bigIsLeft => keySets(join, bigIsLeft, equalities, build)).nextOption()
      .map { case (rewritten, sets) => found ++= sets; rewritten }
      .getOrElse(join)
  }

  /**
   * `WHERE key IN (SELECT ...)`, uncorrelated: the left semi join Spark makes of it only after
   * partitions are fetched (RewritePredicateSubquery), handled as that join (the subquery is
   * the small side, broadcast when small enough).
   */
  private def pruneBySubquery(filter: Filter, found: ArrayBuffer[KeySet]): LogicalPlan = {
    splitConjunctivePredicates(filter.condition).collectFirst {
      case in @ InSubquery(_, query: ListQuery) if query.outerAttrs.isEmpty && !filter.isStreaming => (in, query)
    }.flatMap { case (in, query) =>
      val semi = Join(filter.child, query.plan, LeftSemi, None, JoinHint.NONE)
      val equalities = in.values.zip(query.plan.output)
      val build = withStatistics(Option.empty[BuildSide]) {
        Some(BuildRight).filter(_ => canBroadcastBySize(query.plan, conf))
      }
      keySets(semi, bigIsLeft = true, equalities, build).map { case (rewritten, sets) =>
        found ++= sets
        val materialized = in.copy(query = query.withNewPlan(rewritten.right))
        filter.copy(condition = filter.condition.transform { case e if e eq in => materialized })
      }
    }.getOrElse(filter)
  }

  /** The side Spark will broadcast, if any: hints first; a hint for another strategy wins over sizes. */
  private def broadcastSide(join: Join): Option[BuildSide] = withStatistics(Option.empty[BuildSide]) {
    getBroadcastBuildSide(join, hintOnly = true, conf).orElse {
      val otherHint = hintToSortMergeJoin(join.hint) || hintToShuffleHashJoin(join.hint) ||
        hintToShuffleReplicateNL(join.hint)
      if (otherHint) None else getBroadcastBuildSide(join, hintOnly = false, conf)
    }
  }

  /** `decide`, which reads plan statistics; `default` for a plan that cannot estimate its size. */
  private def withStatistics[T](default: T)(decide: => T): T =
    try decide catch { case NonFatal(_) => default }

  /** The sides that may be the big one (true: the left), the one Spark streams first. */
  private def orientations(join: Join, build: Option[BuildSide]): Seq[Boolean] = {
    val allowed = Seq(true, false).filter(bigIsLeft => if (bigIsLeft) canPruneLeft(join.joinType)
      else canPruneRight(join.joinType))
    val streamedLeft = build.map(_ == BuildRight).getOrElse(
      withStatistics(true)(getSmallerSide(join.left, join.right) == BuildRight))
    allowed.sortBy(_ != streamedLeft)
  }

  /** The join with its small side rewritten, and the key sets it gives the big side's reads. */
  private def keySets(join: Join, bigIsLeft: Boolean, equalities: Seq[(Expression, Expression)],
      build: Option[BuildSide]): Option[(Join, Seq[KeySet])] = {
    val (big, small) = if (bigIsLeft) (join.left, join.right) else (join.right, join.left)
    val keys = equalities.flatMap { case (l, r) =>
      val (bigKey, smallKey) = if (l.references.subsetOf(big.outputSet)) (l, r) else (r, l)
      if (bigKey.references.subsetOf(big.outputSet) && smallKey.references.nonEmpty &&
          smallKey.references.subsetOf(small.outputSet)) {
        partitionColumn(big, bigKey, unchosenOnly = true).map((_, smallKey))
      } else {
        None
      }
    }
    if (keys.isEmpty) {
      return None
    }
    val smallKeys = keys.map(_._2)
    val broadcastsSmall = build.contains(if (bigIsLeft) BuildRight else BuildLeft)
    fromPartitions(small, smallKeys)
      .orElse(if (broadcastsSmall && small.deterministic) Some(materialize(small, smallKeys)) else None)
      .map { case (newSmall, tuples) =>
        val rewritten = if (bigIsLeft) join.copy(right = newSmall) else join.copy(left = newSmall)
        val sets = keys.zipWithIndex.groupBy(_._1._1.read.outputSet).values.map { members =>
          KeySet(members.map(_._1._1.column), tuples.flatMap { tuple =>
            val values = members.map { case ((traced, smallKey), i) =>
              recast(tuple(i), smallKey.dataType, traced.column.dataType)
            }
            if (values.forall(_.isDefined)) Some(values.map(_.get)) else None
          }.toSet)
        }
        (rewritten, sets.toSeq)
      }
  }

  /**
   * The table read and partition column whose values `key` carries unchanged to the top of
   * `plan`, through operators under which dropping that read's rows with other key values drops
   * only rows the join drops too.
   */
  private def partitionColumn(plan: LogicalPlan, key: Expression, unchosenOnly: Boolean): Option[Traced] =
    key match {
      case cast: Cast if widening(cast.child.dataType, cast.dataType) => partitionColumn(plan, cast.child, unchosenOnly)
      case attr: Attribute => plan match {
        case Project(list, child) if list.forall(_.deterministic) =>
          list.find(_.exprId == attr.exprId).flatMap {
            case a: Attribute => partitionColumn(child, a, unchosenOnly)
            case Alias(e, _) => partitionColumn(child, e, unchosenOnly)
            case _ => None
          }
        case Filter(condition, child) if condition.deterministic => partitionColumn(child, attr, unchosenOnly)
        case j: Join if j.condition.forall(_.deterministic) =>
          if (j.left.outputSet.contains(attr) && passesLeftRows(j.joinType)) {
            partitionColumn(j.left, attr, unchosenOnly)
          } else if (j.right.outputSet.contains(attr) && passesRightRows(j.joinType)) {
            partitionColumn(j.right, attr, unchosenOnly)
          } else {
            None
          }
        case read: LeafNode =>
          val columns = PartitionedScan.unchosen(read)
            .orElse(if (unchosenOnly) None else PartitionedScan.chosen(read).map(_._1))
          columns.filter(_.exists(_.exprId == attr.exprId)).map(_ => Traced(read, attr))
        case _ => None
      }
      case _ => None
    }

  /** Join types whose output rows each carry one left (right) row's columns unchanged. */
  private def passesLeftRows(joinType: JoinType): Boolean = joinType match {
    case _: InnerLike | LeftOuter | LeftSemi | LeftAnti | _: ExistenceJoin => true
    case _ => false
  }

  private def passesRightRows(joinType: JoinType): Boolean = joinType match {
    case _: InnerLike | RightOuter => true
    case _ => false
  }

  private def widening(from: DataType, to: DataType): Boolean = (from, to) match {
    case (f: IntegralType, t: IntegralType) => f.defaultSize < t.defaultSize
    case _ => false
  }

  /** `value` of type `from` as type `to` when it has an equal value there (None for null, or
   *  out of a narrower type's range: no partition can match it). */
  private def recast(value: Any, from: DataType, to: DataType): Option[Any] =
    if (value == null || from == to) Option(value)
    else Option(Cast(Literal(value, from), to, Some(conf.sessionLocalTimeZone), EvalMode.TRY).eval())

  /**
   * The small side's key tuples without reading its data, when every key is a partition column
   * of the same table read there: one per partition, from the metastore.  Its partitions are
   * chosen here (Spark's rules would choose them a moment later anyway, with the same filters);
   * `IS NOT NULL` on the keys, implied by the equi-join, makes sure Spark's rules act.
   */
  private def fromPartitions(small: LogicalPlan, smallKeys: Seq[Expression]): Option[(LogicalPlan, Seq[Seq[Any]])] = {
    val traced = smallKeys.map(partitionColumn(small, _, unchosenOnly = false))
    if (traced.exists(_.isEmpty) || traced.flatten.map(_.read.outputSet).distinct.size != 1) {
      return None
    }
    val columns = traced.flatten.map(_.column)
    val read = traced.head.get.read
    val chosen = if (PartitionedScan.unchosen(read).isEmpty) small
      else PartitionedScan.choose(session, small, read, columns.map(IsNotNull(_)).reduce[Expression](And))
    PartitionedScan.find(chosen, read).flatMap(PartitionedScan.chosen(_)).map { case (partitionColumns, rows) =>
      val positions = columns.map(c => partitionColumns.indexWhere(_.exprId == c.exprId))
      val tuples = rows.map(row => positions.zip(columns).zip(smallKeys).map { case ((i, column), key) =>
        recast(row.get(i, column.dataType), column.dataType, key.dataType).orNull
      })
      (chosen, tuples)
    }
  }

  /**
   * Runs the small side once, as its own query, and returns it as a LocalRelation of its rows
   * (the broadcast then ships these rows: no second scan) with its key tuples.  A failure is
   * the query's failure, with Spark's error.
   */
  private def materialize(small: LogicalPlan, smallKeys: Seq[Expression]): (LogicalPlan, Seq[Seq[Any]]) = {
    val plan = small.clone()
    plan.setAnalyzed()   // resolved already: run it as it is
    val execution = session.sessionState.executePlan(plan)
    val rows = SQLExecution.withNewExecutionId(execution, Some("HopsHive map-join pruning: small side")) {
      execution.executedPlan.executeCollect().toSeq
    }
    val keys = smallKeys.map(BindReferences.bindReference(_, small.output))
    (LocalRelation(small.output, rows), rows.map(row => keys.map(_.eval(row))))
  }

  /** Every table read some key set applies to, with its partitions chosen by them (see the class). */
  private def restrictReads(plan: LogicalPlan, sets: Seq[KeySet]): LogicalPlan = {
    val reads = plan.collect { case read: LeafNode if PartitionedScan.unchosen(read).isDefined => read }
    reads.foldLeft(plan) { (current, read) =>
      val mine = KeySet.merge(sets.filter(_.columns.forall(read.outputSet.contains)))
      if (mine.isEmpty) {
        current
      } else if (mine.exists(_.tuples.isEmpty)) {
        current.transformUp { case node if node eq read => LocalRelation(read.output, Nil) }
      } else {
        val max = maxValues
        val chosen = PartitionedScan.choose(session, current, read, mine.map(_.condition(max)).reduce[Expression](And))
        val kept = PartitionedScan.find(chosen, read).flatMap(PartitionedScan.chosen(_)).map(_._2.size)
        val tag = MapJoinPruned(mine.map(_.describe(max)).mkString(", ") +
          kept.map(n => s" -> $n partitions").getOrElse(""))
        chosen.transformUp { case node: LeafNode if node.outputSet == read.outputSet => Filter(tag, node) }
      }
    }
  }
}
