"""Partition filters -> HBase calls: the seed's FilterPlan / ScanPlan / MultiScanPlan and
PartitionFilterGenerator, over the metastore's typed filter tree (``filter.bind``).

Steps: the typed tree is put in negation normal form (NOT pushed to the leaves: ``<>``,
``in``, ``not in``, ``between``, ``not between`` become ORs/ANDs of ``= < <= > >=``
tests; a negated LIKE stays one residual leaf), then in disjunctive normal form (``c1 and
(c2 or c3)`` -> ``(c1 and c2) or (c1 and c3)``, in the seed's order); each conjunction
becomes one ``ScanPlan`` by AND-ing leaf plans (ranges intersect, filters concatenate);
the OR of them is a ``MultiScanPlan`` (a union), except that when one of them has no
condition on the first partition column the whole OR is one full scan of the table whose
filter is the OR of every branch (the seed's rule).  More than ``MAX_BRANCHES``
conjunctions also give one filtered full scan (the filter keeps the original nesting).

Leaves: a test of the first partition column narrows the scan's row range; a test of a
later column becomes our server-side ``KeyFieldFilter`` (HBase filter language, run in the
region server: rows that fail never leave it); ``=`` on every partition column is a Get.
LIKE cannot be expressed in the filter language (Java regex semantics and typed guards
differ), so it is **residual**: the scan returns a superset (the LIKE read as "true") and
the metastore evaluates the whole filter on what comes back; ``explain`` says so.

Typed keys (numbers, dates): values that do not parse (``__HIVE_DEFAULT_PARTITION__``)
never match a test, so a test's range starts at the first typed value (tag 0x01).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Sequence

from ...filter import ast
from ...filter.bind import Bound, Test, bind
from ...filter.keytypes import STRING, KeyType, key_type
from ...filter.parser import parse
from . import rowkey

MAX_BRANCHES = 64
_NEGATE = {"=": "<>", "<>": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">", "in": "not in", "not in": "in",
           "between": "not between", "not between": "between"}


# ----------------------------------------------------------------- filter leaves
@dataclass(frozen=True)
class Cond:
    """``key[index] op value`` on encoded fields."""
    index: int
    op: str                 # = < <= > >=
    field: bytes            # the literal as a row-key field
    text: str               # for plans: "p2 = 5"

    def render(self) -> str:
        return self.text


@dataclass(frozen=True)
class Residual:
    """A test the filter language cannot run; the metastore evaluates it."""
    text: str

    def render(self) -> str:
        return self.text


@dataclass(frozen=True)
class AllOf:
    parts: tuple

    def render(self) -> str:
        return " and ".join(_nested(p) for p in self.parts) if self.parts else "true"


@dataclass(frozen=True)
class AnyOf:
    parts: tuple

    def render(self) -> str:
        return " or ".join(_nested(p) for p in self.parts) if self.parts else "false"


def _nested(part) -> str:
    return f"({part.render()})" if isinstance(part, (AllOf, AnyOf)) and len(part.parts) > 1 else part.render()


def has_residual(node) -> bool:
    if isinstance(node, Residual):
        return True
    return isinstance(node, (AllOf, AnyOf)) and any(has_residual(p) for p in node.parts)


# ------------------------------------------------------------------------ plans
@dataclass(frozen=True)
class Marker:
    """A bound on the first partition column: ``field`` (None: the first typed value)."""
    field: bytes
    inclusive: bool
    text: str | None        # the value as written in plans; None for "the start of the values"


class FilterPlan:
    def and_(self, other: "FilterPlan") -> "FilterPlan":
        raise NotImplementedError

    def or_(self, other: "FilterPlan") -> "FilterPlan":
        return MultiScanPlan(tuple(self.plans()) + tuple(other.plans()))

    def plans(self) -> list["ScanPlan"]:
        raise NotImplementedError


@dataclass(frozen=True)
class ScanPlan(FilterPlan):
    start: Marker | None = None
    end: Marker | None = None
    filters: tuple = ()                       # AND-ed: Cond, AnyOf, AllOf, Residual
    equal: tuple = ()                         # (index, field, text) of every "=" leaf
    empty: bool = False                       # provably no row (p1 = 1 and p1 = 2)

    def plans(self):
        return [] if self.empty else [self]

    def and_(self, other: FilterPlan) -> FilterPlan:
        if isinstance(other, MultiScanPlan):
            return MultiScanPlan(tuple(self.and_(p) for p in other.items)).pruned()
        start = _tighter(self.start, other.start, low=True)
        end = _tighter(self.end, other.end, low=False)
        equal = self.equal + tuple(e for e in other.equal if e not in self.equal)
        empty = self.empty or other.empty or _crossed(start, end) or _conflict(equal)
        return ScanPlan(start, end, self.filters + tuple(f for f in other.filters if f not in self.filters),
                        equal, empty)

    @property
    def bounded(self) -> bool:
        """Whether the first partition column limits the rows read."""
        return any(m is not None and m.text is not None for m in (self.start, self.end))

    @property
    def residual(self) -> bool:
        return any(has_residual(f) for f in self.filters)

    def get_values(self, width: int) -> list[bytes] | None:
        """The fields of the one partition a Get reads, when the plan is only "=" on every key."""
        fields = {index: value for index, value, _ in self.equal}
        if len(fields) != width or self.filters and any(not _is_equal_cond(f) for f in self.filters):
            return None
        return [fields[i] for i in range(width)]

    def as_filter(self):
        """The plan as one filter (range on the first column included), for the OR rule."""
        parts: list = []
        if self.start is not None and self.end is not None and self.start.text is not None \
                and self.start == replace(self.end) and self.start.inclusive:
            parts.append(Cond(0, "=", self.start.field, f"{{0}} = {self.start.text}"))
        else:
            if self.start is not None:
                parts.append(Cond(0, ">=" if self.start.inclusive else ">", self.start.field,
                                  f"{{0}} {'>=' if self.start.inclusive else '>'} {self.start.text}"
                                  if self.start.text is not None else "{0} is typed"))
            if self.end is not None:
                parts.append(Cond(0, "<=" if self.end.inclusive else "<", self.end.field,
                                  f"{{0}} {'<=' if self.end.inclusive else '<'} {self.end.text}"))
        parts.extend(self.filters)
        return parts[0] if len(parts) == 1 else AllOf(tuple(parts))


def _is_equal_cond(node) -> bool:
    return isinstance(node, Cond) and node.op == "="


def _tighter(a: Marker | None, b: Marker | None, low: bool) -> Marker | None:
    if a is None or b is None:
        return a or b
    if a.field != b.field:
        return (max if low else min)(a, b, key=lambda m: m.field)
    return a if not a.inclusive else b


def _crossed(start: Marker | None, end: Marker | None) -> bool:
    if start is None or end is None:
        return False
    return start.field > end.field or (start.field == end.field and not (start.inclusive and end.inclusive))


def _conflict(equal: tuple) -> bool:
    seen: dict[int, bytes] = {}
    for index, value, _ in equal:
        if seen.setdefault(index, value) != value:
            return True
    return False


@dataclass(frozen=True)
class MultiScanPlan(FilterPlan):
    items: tuple = field(default=())

    def plans(self):
        return [p for item in self.items for p in item.plans()]

    def and_(self, other: FilterPlan) -> FilterPlan:
        # the seed's order: (c1 or c2) and (c3 or c4) -> c1c3, c2c3, c1c4, c2c4
        return MultiScanPlan(tuple(mine.and_(theirs) for theirs in other.plans() for mine in self.plans())).pruned()

    def pruned(self) -> "MultiScanPlan":
        return MultiScanPlan(tuple(p for item in self.items for p in item.plans()))


# ------------------------------------------------------------------- generator
class PartitionFilterGenerator:
    """Visitor over the typed filter tree producing a FilterPlan (the seed's class)."""

    def __init__(self, keys: Sequence[tuple[str, str]]):
        self.names = [name.lower() for name, _ in keys]
        self.kinds: list[KeyType] = [key_type(t) for _, t in keys]

    # NNF with leaves: Cond, Residual, AllOf/AnyOf
    def nnf(self, node: Bound, negate: bool = False):
        if isinstance(node, ast.Not):
            return self.nnf(node.operand, not negate)
        if isinstance(node, (ast.And, ast.Or)):
            is_and = isinstance(node, ast.And) != negate
            parts = tuple(self.nnf(child, negate) for child in node.operands)
            return AllOf(parts) if is_and else AnyOf(parts)
        return self.leaf(node, negate)

    def leaf(self, test: Test, negate: bool):
        name = self.names[test.key]
        op = _NEGATE[test.op] if negate and test.op != "like" else test.op
        if test.op == "like":
            return Residual(f"{name} {'not like' if negate else 'like'} {_shown(test.values[0].source)}")
        cond = lambda o, v: self.cond(test.key, o, v)  # noqa: E731
        if op in ("=", "<", "<=", ">", ">="):
            return cond(op, test.values[0])
        if op == "<>":
            return AnyOf((cond("<", test.values[0]), cond(">", test.values[0])))
        if op == "in":
            return AnyOf(tuple(cond("=", v) for v in test.values))
        if op == "not in":
            return AllOf(tuple(AnyOf((cond("<", v), cond(">", v))) for v in test.values))
        if op == "between":
            return AllOf((cond(">=", test.values[0]), cond("<=", test.values[1])))
        return AnyOf((cond("<", test.values[0]), cond(">", test.values[1])))

    def cond(self, index: int, op: str, value) -> Cond:
        kind = self.kinds[index]
        shown = _shown(value) if kind.domain == STRING else str(value)
        return Cond(index, op, rowkey.encode_typed(kind.domain, value), f"{self.names[index]} {op} {shown}")

    def leaf_plan(self, leaf) -> ScanPlan:
        if isinstance(leaf, Cond) and leaf.index == 0:
            value = leaf.text.split(" ", 2)[2]
            typed_start = Marker(rowkey.TYPED, True, None) if self.kinds[0].domain != STRING else None
            if leaf.op == "=":
                marker = Marker(leaf.field, True, value)
                return ScanPlan(marker, marker, (), ((0, leaf.field, value),))
            if leaf.op in (">", ">="):
                return ScanPlan(Marker(leaf.field, leaf.op == ">=", value), None)
            return ScanPlan(typed_start, Marker(leaf.field, leaf.op == "<=", value))
        if isinstance(leaf, Cond) and leaf.op == "=":
            return ScanPlan(filters=(leaf,), equal=((leaf.index, leaf.field, leaf.text.split(" ", 2)[2]),))
        return ScanPlan(filters=(leaf,))

    def visit(self, node) -> FilterPlan:
        """AND -> FilterPlan.and_, OR -> FilterPlan.or_ (DNF by construction)."""
        if isinstance(node, AllOf):
            plan: FilterPlan = ScanPlan()
            for part in node.parts:
                plan = plan.and_(self.visit(part))
                if len(plan.plans()) > MAX_BRANCHES:
                    raise _TooMany()
            return plan
        if isinstance(node, AnyOf):
            plan = MultiScanPlan(())
            for part in node.parts:
                plan = plan.or_(self.visit(part))
                if len(plan.plans()) > MAX_BRANCHES:
                    raise _TooMany()
            return plan
        return self.leaf_plan(node)

    def generate(self, bound: Bound) -> "Plan":
        tree = self.nnf(bound)
        try:
            plans = self.visit(tree).plans()
        except _TooMany:
            return Plan(self, [ScanPlan(filters=(tree,))], collapsed=f"more than {MAX_BRANCHES} branches")
        if len(plans) > 1 and any(not p.bounded for p in plans):
            combined = AnyOf(tuple(p.as_filter() for p in plans))
            return Plan(self, [ScanPlan(filters=(combined,))], collapsed="a branch has no condition on "
                        f"{self.names[0]}: one filtered scan")
        return Plan(self, plans)


def _shown(text: str) -> str:
    """A string literal for plans (quoted as Hive would; JSON-quoted when Hive cannot)."""
    for quote in ('"', "'"):
        if ast.fits_quotes(text, quote):
            return quote + text + quote
    return json.dumps(text)


class _TooMany(Exception):
    pass


@dataclass
class Plan:
    """The plans of one filter, what the store runs and ``explain`` prints."""
    generator: PartitionFilterGenerator
    scans: list[ScanPlan]
    collapsed: str | None = None

    @property
    def residual(self) -> bool:
        return any(p.residual for p in self.scans)

    def gets(self) -> list[ScanPlan]:
        return [p for p in self.scans if p.get_values(len(self.generator.kinds)) is not None]

    def render(self) -> str:
        """The seed's notation: Get(X10), Scan(X10+, X20).setFilter(p2 = 5), merge(...)."""
        rendered = [self.render_one(p) for p in self.scans]
        if not rendered:
            return "nothing"
        return rendered[0] if len(rendered) == 1 else "merge(" + ", ".join(rendered) + ")"

    def render_one(self, plan: ScanPlan) -> str:
        names = self.generator.names
        width = len(names)
        values = plan.get_values(width)
        if values is not None:
            texts = {index: text for index, _, text in plan.equal}
            return "Get(X" + ",".join(texts[i] for i in range(width)) + ")"
        start = "X" if plan.start is None or plan.start.text is None else \
            f"X{plan.start.text}" + ("" if plan.start.inclusive else "+")
        end = "X+" if plan.end is None else f"X{plan.end.text}" + ("+" if plan.end.inclusive else "")
        out = f"Scan({start}, {end})"
        if plan.filters:
            text = AllOf(plan.filters).render() if len(plan.filters) > 1 else plan.filters[0].render()
            out += f".setFilter({text.replace('{0}', names[0])})"
        return out


@dataclass(frozen=True)
class HBaseCall:
    """One request: ``get`` of ``rows``, or ``scan`` of [start, stop) with ``filter``."""
    kind: str
    rows: tuple[bytes, ...] = ()
    start: bytes = b""
    stop: bytes = b""
    filter: bytes | None = None


def hbase_filter(node, kinds: Sequence[KeyType]) -> bytes | None:
    """A plan filter in HBase's filter language; None where it is "true" (residual leaves
    read as true: the metastore re-checks the filter)."""
    if isinstance(node, Residual):
        return None
    if isinstance(node, Cond):
        text = _key_field_filter(node.index, node.op, node.field)
        if node.op in ("<", "<=") and kinds[node.index].domain != STRING:
            text = b"(" + _key_field_filter(node.index, ">=", rowkey.TYPED) + b" AND " + text + b")"
        return text
    parts = [hbase_filter(p, kinds) for p in node.parts]
    if isinstance(node, AllOf):
        kept = [p for p in parts if p is not None]
        if not kept:
            return None
        return kept[0] if len(kept) == 1 else b"(" + b" AND ".join(kept) + b")"
    if not parts:                       # an empty OR: nothing matches
        return b"RowFilter(<, 'binary:')"
    if any(p is None for p in parts):
        return None
    return parts[0] if len(parts) == 1 else b"(" + b" OR ".join(parts) + b")"


def _key_field_filter(index: int, op: str, value: bytes) -> bytes:
    return b"KeyFieldFilter(%d, %s, 'binary:%s')" % (index, op.encode(), value.replace(b"'", b"''"))


def hbase_calls(plan: "Plan", prefix: bytes) -> list[HBaseCall]:
    """The Gets (one call for all of them) and Scans that run ``plan`` for the table whose
    partition keys start with ``prefix``."""
    width = len(plan.generator.kinds)
    gets, calls = [], []
    for scan in plan.scans:
        fields = scan.get_values(width)
        if fields is not None:
            gets.append(rowkey.key_from_fields(prefix, fields))
            continue
        start = prefix if scan.start is None else (
            prefix + scan.start.field if scan.start.inclusive else rowkey.prefix_successor(prefix + scan.start.field))
        stop = rowkey.prefix_successor(prefix) if scan.end is None else (
            rowkey.prefix_successor(prefix + scan.end.field) if scan.end.inclusive else prefix + scan.end.field)
        filters = [hbase_filter(f, plan.generator.kinds) for f in scan.filters]
        kept = [f for f in filters if f is not None]
        text = None if not kept else kept[0] if len(kept) == 1 else b" AND ".join(kept)
        calls.append(HBaseCall("scan", start=start, stop=stop, filter=text))
    if gets:
        calls.insert(0, HBaseCall("get", rows=tuple(dict.fromkeys(gets))))
    return calls


def plan_filter(text: str, keys: Sequence[tuple[str, str]]) -> Plan:
    """Parse, type and plan a Hive filter for a table with these (name, type) keys.
    Raises: FilterError."""
    return PartitionFilterGenerator(keys).generate(bind(parse(text), keys))
