package org.apache.spark.sql.hopshive

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{And, Attribute, EqualTo, Expression, GreaterThanOrEqual, In,
  LeafExpression, LessThanOrEqual, Literal, Or}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, EmptyBlock, ExprCode, FalseLiteral,
  TrueLiteral}
import org.apache.spark.sql.catalyst.util.TypeUtils
import org.apache.spark.sql.types.{BooleanType, DataType}

/**
 * The values a join lets partition columns of one table read take: the small side's key values
 * (one tuple per distinct key, nulls left out: `=` never matches them), typed as the columns.
 * Several joins on the same read give several key sets; the read keeps the rows all of them
 * allow.
 */
private[hopshive] case class KeySet(columns: Seq[Attribute], tuples: Set[Seq[Any]]) {

  /** The same columns as `other` (by expression id, in order). */
  def sameColumns(other: KeySet): Boolean = columns.map(_.exprId) == other.columns.map(_.exprId)

  /**
   * A partition predicate Spark's Hive client sends to the metastore as a filter: one column,
   * `col IN (v1, ...)`; several, `(c1 = v1 AND c2 = w1) OR ...` (a balanced tree, so that the
   * filter text stays shallow).  Over `maxValues` values a column gets `col >= min AND col <= max`.
   */
  def condition(maxValues: Int): Expression =
    if (columns.size == 1) {
      column(0, maxValues)
    } else if (tuples.size <= maxValues) {
      balancedOr(tuples.toSeq.map(tuple => columns.zip(tuple).map { case (c, v) => EqualTo(c, Literal(v, c.dataType)) }
        .reduce[Expression](And)))
    } else {
      columns.indices.map(column(_, maxValues)).reduce[Expression](And)
    }

  /** What EXPLAIN shows of this key set, e.g. `ds IN 3 values`, `(ds, region) 4 tuples`,
   *  `ds range of 1500 values`. */
  def describe(maxValues: Int): String =
    if (columns.size > 1 && tuples.size <= maxValues) {
      s"(${columns.map(_.name).mkString(", ")}) ${tuples.size} tuples"
    } else {
      columns.indices.map { i =>
        val count = values(i).size
        s"${columns(i).name} ${if (count <= maxValues) "IN" else "range of"} $count values"
      }.mkString(", ")
    }

  private def values(i: Int): Seq[Any] =
    tuples.toSeq.map(_(i)).distinct.sorted(TypeUtils.getInterpretedOrdering(columns(i).dataType))

  private def column(i: Int, maxValues: Int): Expression = {
    val col = columns(i)
    val sorted = values(i)
    if (sorted.size <= maxValues) {
      In(col, sorted.map(Literal(_, col.dataType)))
    } else {
      And(GreaterThanOrEqual(col, Literal(sorted.head, col.dataType)),
        LessThanOrEqual(col, Literal(sorted.last, col.dataType)))
    }
  }

  private def balancedOr(terms: Seq[Expression]): Expression =
    if (terms.size == 1) terms.head
    else terms.splitAt(terms.size / 2) match { case (l, r) => Or(balancedOr(l), balancedOr(r)) }
}

private[hopshive] object KeySet {
  /** One key set per distinct column list, those of the same columns intersected. */
  def merge(sets: Seq[KeySet]): Seq[KeySet] =
    sets.foldLeft(Seq.empty[KeySet]) { (merged, set) =>
      merged.find(_.sameColumns(set)) match {
        case Some(same) => merged.map(m => if (m eq same) KeySet(m.columns, m.tuples.intersect(set.tuples)) else m)
        case None => merged :+ set
      }
    }
}

/**
 * A conjunct that is always true, added to the Filter over a pruned table read so that the
 * optimized and physical plans (EXPLAIN, the Spark UI) show what map-join pruning did:
 * `mapjoin_pruning(ds IN 3 values -> 3 partitions)`.  It references no column, so Spark never
 * sends it to the metastore.
 */
private[hopshive] case class MapJoinPruned(description: String) extends LeafExpression {
  override def dataType: DataType = BooleanType
  override def nullable: Boolean = false
  override def eval(input: InternalRow): Any = true
  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode =
    ev.copy(code = EmptyBlock, isNull = FalseLiteral, value = TrueLiteral)
  override def toString: String = s"mapjoin_pruning($description)"
  override def sql: String = toString
}
