package org.apache.spark.sql.hopshive.index

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.util.TypeUtils
import org.apache.spark.sql.types.{DataType, StructField}

/**
 * Whether a row group, summarised by the data-skipping index, can hold a row for which a
 * predicate on indexed columns is true.  It answers `=`, `<=>`, IN, `<`, `<=`, `>`, `>=`
 * between an indexed column and literals of its type, IS [NOT] NULL, and AND, OR of those;
 * anything else can match (the row group is read), so results never change.  NULL compares
 * to nothing, as in SQL.
 */
class SkippingPredicate(columns: Seq[StructField]) {
  private val positions = columns.map(_.name.toLowerCase).zipWithIndex.toMap
  private val orderings = columns.map(c => TypeUtils.getInterpretedOrdering(c.dataType))

  /** A conjunct this index can decide for some row group. */
  def usable(e: Expression): Boolean = e match {
    case And(l, r) => usable(l) || usable(r)
    case Or(l, r) => usable(l) && usable(r)
    case _ => leaf(e).isDefined
  }

  def mayMatch(e: Expression, s: DataSkippingIndexHandler.Summary): Boolean = e match {
    case And(l, r) => mayMatch(l, s) && mayMatch(r, s)
    case Or(l, r) => mayMatch(l, s) || mayMatch(r, s)
    case _ => s.rows > 0 && leaf(e).forall(test => test(s))
  }

  private type Test = DataSkippingIndexHandler.Summary => Boolean

  /** The test of one comparison, None when it is not one this index decides. */
  private def leaf(e: Expression): Option[Test] = e match {
    case IsNull(Column(i)) => Some(s => s.nulls(i) > 0)
    case IsNotNull(Column(i)) => Some(s => s.nulls(i) < s.rows)
    case In(Column(i), list) if list.forall(literalOf(i, _).isDefined) =>
      val values = list.flatMap(literalOf(i, _))
      Some(s => values.exists(v => equal(s, i, v)))
    case InSet(Column(i), set) if set.size <= 1024 => Some(s => set.exists(v => equal(s, i, v)))
    case b: BinaryComparison => (b.left, b.right) match {
      case (Column(i), right) => literalOf(i, right).flatMap(v => compare(b, i, v, flipped = false))
      case (left, Column(i)) => literalOf(i, left).flatMap(v => compare(b, i, v, flipped = true))
      case _ => None
    }
    case _ => None
  }

  /** `column OP v` (or `v OP column`, flipped). */
  private def compare(b: BinaryComparison, i: Int, v: Any, flipped: Boolean): Option[Test] = b match {
    case _: EqualNullSafe if v == null => Some(s => s.nulls(i) > 0)
    case _: EqualTo | _: EqualNullSafe => Some(s => equal(s, i, v))
    case _: LessThan => Some(s => if (flipped) above(s, i, v, strict = true) else below(s, i, v, strict = true))
    case _: LessThanOrEqual => Some(s => if (flipped) above(s, i, v, strict = false) else below(s, i, v, strict = false))
    case _: GreaterThan => Some(s => if (flipped) below(s, i, v, strict = true) else above(s, i, v, strict = true))
    case _: GreaterThanOrEqual => Some(s => if (flipped) below(s, i, v, strict = false) else above(s, i, v, strict = false))
    case _ => None
  }

  /** The value of a literal of column i's type. */
  private def literalOf(i: Int, e: Expression): Option[Any] = e match {
    case Literal(v, t) if t == columns(i).dataType => Some(v)
    case _ => None
  }

  private def equal(s: DataSkippingIndexHandler.Summary, i: Int, v: Any): Boolean =
    v != null && s.mins(i) != null && orderings(i).lteq(s.mins(i), v) && orderings(i).lteq(v, s.maxs(i)) &&
      (s.blooms(i) == null || s.blooms(i).mightContainLong(DataSkippingIndexHandler.hash(v, columns(i).dataType)))

  /** Some value of the row group is below `v` (or equal, unless strict). */
  private def below(s: DataSkippingIndexHandler.Summary, i: Int, v: Any, strict: Boolean): Boolean =
    v != null && s.mins(i) != null && (if (strict) orderings(i).lt(s.mins(i), v) else orderings(i).lteq(s.mins(i), v))

  private def above(s: DataSkippingIndexHandler.Summary, i: Int, v: Any, strict: Boolean): Boolean =
    v != null && s.maxs(i) != null && (if (strict) orderings(i).gt(s.maxs(i), v) else orderings(i).gteq(s.maxs(i), v))

  /** An indexed column (its position), read as it is stored. */
  private object Column {
    def unapply(e: Expression): Option[Int] = e match {
      case a: AttributeReference => positions.get(a.name.toLowerCase).filter(i => columns(i).dataType == a.dataType)
      case _ => None
    }
  }
}
