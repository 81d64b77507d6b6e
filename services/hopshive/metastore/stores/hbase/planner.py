"""Partition filters -> HBase calls: the seed's FilterPlan / ScanPlan / MultiScanPlan and
PartitionFilterGenerator, over the metastore's typed filter tree (``filter.bind``).

Steps: the typed tree is put in negation normal form (NOT pushed to the leaves: ``<>``,
``in``, ``not in``, ``between``, ``not between`` become ORs/ANDs of ``= < <= > >=``
tests; a negated LIKE stays one leaf), then in disjunctive normal form (``c1 and (c2 or
c3)`` -> ``(c1 and c2) or (c1 and c3)``, in the seed's order); each conjunction becomes one
``ScanPlan`` by AND-ing leaf plans (ranges intersect, filters concatenate); the OR of them
is a ``MultiScanPlan`` (a union), except that when one of them has no condition on the
first partition column the whole OR is one full scan of the table whose filter is the OR of
every branch (the seed's rule).  More than ``MAX_BRANCHES`` conjunctions also give one
filtered full scan (the filter keeps the original nesting).  ``=`` on every partition
column is a Get.

Where the plans differ from the seed's example table (its rows are tests: see
tests/unit/test_hbase_planner.py), the seed's entry is a slip that its own notation exposes:
``p1 = 10`` over several partition columns is ``Scan(X10, X10+)`` (the seed writes
``Scan(X10, X+)``, which returns every partition with ``p1 >= 10``); ``p1 > 10`` starts at
``X10+`` also inside ``p1 > 10 or p1 < 20`` and ``p1 > 10 and condition1`` (the seed writes
``X10`` there, against its own first row ``p1 > 10 and p1 < 20 -> Scan(X10+, X20)``; with
``condition1`` that returns the ``p1 = 10`` partitions meeting it).

Leaves: a test of the first partition column narrows the scan's row range; when the first
columns are fixed by ``=``, a range on the next column narrows it further (``calls``);
every other test becomes a ``RowFilter`` with a ``regexstring`` comparator (``keyregex``):
HBase's own filter language, run in the region server, so rows that fail never leave it.
A test the filter language cannot express is **residual**: the scan returns a superset
(the test read as "true") and the metastore evaluates those tests on what comes back --
LIKE on a non-string key (the key holds the typed value, not the text LIKE reads), a LIKE
with an inner ``^``/``$``, a range literal over ``keyregex.MAX_RANGE_LITERAL`` characters.
``explain`` names them.

Typed keys (numbers, dates): values that do not parse (``__HIVE_DEFAULT_PARTITION__``)
never match a test, so a test's range starts at the first typed value (tag 0x01).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Sequence

from ...filter import ast
from ...filter.bind import Bound, Test, bind
from ...filter.keytypes import DATE, STRING, KeyType, key_type
from ...filter.parser import parse
from . import keyregex, rowkey

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
    value: object = None    # the typed literal (Decimal, date, str)

    def render(self) -> str:
        return self.text

    @cached_property
    def regex(self):
        """The keyregex condition, or None where the filter language cannot hold it."""
        return keyregex.compare(self.op, self.field)

    @property
    def why(self) -> str | None:
        return None if self.regex is not None else \
            f"a range literal over {keyregex.MAX_RANGE_LITERAL} characters is not written as a regex"


@dataclass(frozen=True)
class Like:
    """``key[index] [not] like pattern``: a regex over the key where the value's text is
    in the key (string keys), residual otherwise."""
    test: Test
    negated: bool
    text: str
    regex: tuple | None     # keyregex.like of the pattern, None: residual
    why: str | None = None

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


def residual_leaves(node) -> list:
    """The leaves of ``node`` that HBase's filter language cannot run."""
    if isinstance(node, (AllOf, AnyOf)):
        return [leaf for part in node.parts for leaf in residual_leaves(part)]
    return [node] if node.regex is None else []


def as_bound(node, kinds: Sequence[KeyType]) -> Bound:
    """A plan filter back as a typed filter tree, for the in-memory evaluator."""
    if isinstance(node, Cond):
        return Test(node.index, kinds[node.index].domain, node.op, (node.value,))
    if isinstance(node, Like):
        return ast.Not(node.test) if node.negated else node.test
    children = tuple(as_bound(p, kinds) for p in node.parts)
    return (ast.And if isinstance(node, AllOf) else ast.Or)(children)


# ------------------------------------------------------------------------ plans
@dataclass(frozen=True)
class Marker:
    """A bound on the first partition column: ``field`` (text None: the first typed value)."""
    field: bytes
    inclusive: bool
    text: str | None        # the value as written in plans; None for "the start of the values"
    value: object = None


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
    filters: tuple = ()                       # AND-ed: Cond, Like, AnyOf, AllOf
    equal: tuple = ()                         # (index, field, text, value) of every "=" leaf
    empty: bool = False                       # provably no row (p1 = 1 and p1 = 2)

    def plans(self):
        return [] if self.empty else [self]

    def and_(self, other: FilterPlan) -> FilterPlan:
        if isinstance(other, MultiScanPlan):
            return MultiScanPlan(tuple(self.and_(p) for p in other.items)).pruned()
        start = tighter(self.start, other.start, low=True)
        end = tighter(self.end, other.end, low=False)
        equal = self.equal + tuple(e for e in other.equal if e not in self.equal)
        empty = self.empty or other.empty or _crossed(start, end) or _conflict(equal)
        return ScanPlan(start, end, self.filters + tuple(f for f in other.filters if f not in self.filters),
                        equal, empty)

    @property
    def bounded(self) -> bool:
        """Whether the first partition column limits the rows read."""
        return any(m is not None and m.text is not None for m in (self.start, self.end))

    def get_values(self, width: int) -> list[bytes] | None:
        """The fields of the one partition a Get reads, when the plan is only "=" on every key."""
        fields = {index: value for index, value, _, _ in self.equal}
        if len(fields) != width or self.filters and any(not _is_equal_cond(f) for f in self.filters):
            return None
        return [fields[i] for i in range(width)]

    def as_filter(self):
        """The plan as one filter (range on the first column included), for the OR rule."""
        parts: list = []
        start, end = self.start, self.end
        if start is not None and start == end and start.inclusive:
            parts.append(Cond(0, "=", start.field, f"{{0}} = {start.text}", start.value))
        else:
            if start is not None and start.text is not None:    # a typed start adds nothing to an end
                op = ">=" if start.inclusive else ">"
                parts.append(Cond(0, op, start.field, f"{{0}} {op} {start.text}", start.value))
            if end is not None:
                op = "<=" if end.inclusive else "<"
                parts.append(Cond(0, op, end.field, f"{{0}} {op} {end.text}", end.value))
        parts.extend(self.filters)
        return parts[0] if len(parts) == 1 else AllOf(tuple(parts))


def _is_equal_cond(node) -> bool:
    return isinstance(node, Cond) and node.op == "="


def tighter(a: Marker | None, b: Marker | None, low: bool) -> Marker | None:
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
    for index, value, _, _ in equal:
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

    # NNF with leaves: Cond, Like, AllOf/AnyOf
    def nnf(self, node: Bound, negate: bool = False):
        if isinstance(node, ast.Not):
            return self.nnf(node.operand, not negate)
        if isinstance(node, (ast.And, ast.Or)):
            is_and = isinstance(node, ast.And) != negate
            parts = tuple(self.nnf(child, negate) for child in node.operands)
            return AllOf(parts) if is_and else AnyOf(parts)
        return self.leaf(node, negate)

    def leaf(self, test: Test, negate: bool):
        op = _NEGATE[test.op] if negate and test.op != "like" else test.op
        if test.op == "like":
            return self.like(test, negate)
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

    def like(self, test: Test, negate: bool) -> Like:
        pattern = test.values[0]
        text = f"{self.names[test.key]} {'not like' if negate else 'like'} {_shown(pattern.source)}"
        if self.kinds[test.key].domain != STRING:
            return Like(test, negate, text, None, f"the row key holds {self.names[test.key]} as a typed "
                                                  f"{self.kinds[test.key].hive_type}, not the text LIKE matches")
        regex = keyregex.like(pattern.tree)
        return Like(test, negate, text, regex, None if regex is not None else "the pattern anchors inside")

    def cond(self, index: int, op: str, value) -> Cond:
        return Cond(index, op, rowkey.encode_typed(self.kinds[index].domain, value),
                    f"{self.names[index]} {op} {self.shown(index, value)}", value)

    def shown(self, index: int, value) -> str:
        domain = self.kinds[index].domain
        return _shown(value) if domain == STRING else f"'{value}'" if domain == DATE else str(value)

    def leaf_plan(self, leaf) -> ScanPlan:
        if isinstance(leaf, Cond) and leaf.index == 0:
            value = leaf.text.split(" ", 2)[2]
            typed_start = Marker(rowkey.TYPED, True, None) if self.kinds[0].domain != STRING else None
            if leaf.op == "=":
                marker = Marker(leaf.field, True, value, leaf.value)
                return ScanPlan(marker, marker, (), ((0, leaf.field, value, leaf.value),))
            if leaf.op in (">", ">="):
                return ScanPlan(Marker(leaf.field, leaf.op == ">=", value, leaf.value), None)
            return ScanPlan(typed_start, Marker(leaf.field, leaf.op == "<=", value, leaf.value))
        if isinstance(leaf, Cond) and leaf.op == "=":
            return ScanPlan(filters=(leaf,), equal=((leaf.index, leaf.field, leaf.text.split(" ", 2)[2],
                                                     leaf.value),))
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
            texts = {index: text for index, _, text, _ in plan.equal}
            return "Get(X" + ",".join(texts[i] for i in range(width)) + ")"
        start = "X" if plan.start is None or plan.start.text is None else \
            f"X{plan.start.text}" + ("" if plan.start.inclusive else "+")
        end = "X+" if plan.end is None else f"X{plan.end.text}" + ("+" if plan.end.inclusive else "")
        out = f"Scan({start}, {end})"
        if plan.filters:
            out += f".setFilter({self.text(plan.filters)})"
        return out

    def text(self, filters) -> str:
        text = AllOf(tuple(filters)).render() if len(filters) > 1 else filters[0].render()
        return text.replace("{0}", self.generator.names[0])


def plan_filter(text: str, keys: Sequence[tuple[str, str]]) -> Plan:
    """Parse, type and plan a Hive filter for a table with these (name, type) keys (plans
    are kept: Spark sends the same filters again and again).  Raises: FilterError."""
    return _plan(text, tuple((name, hive_type) for name, hive_type in keys))


@lru_cache(maxsize=512)
def _plan(text: str, keys: tuple) -> Plan:
    return PartitionFilterGenerator(keys).generate(bind(parse(text), keys))
