"""A plan (``planner``) as HBase calls: one multi-row Get for the plans that name whole
partitions, and a Scan per other plan -- its start and stop rows, the HBase filter string
of the conditions HBase's filter language holds (``keyregex``), and the residual the
metastore checks on what comes back."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from ...filter.evaluate import Predicate
from ...filter.keytypes import STRING, KeyType
from . import keyregex, rowkey
from .planner import AllOf, Cond, Like, Marker, Plan, ScanPlan, as_bound, plan_filter, residual_leaves, tighter


@dataclass(frozen=True)
class HBaseCall:
    """One request: ``get`` of ``rows``, or ``scan`` of [start, stop) with ``filter``
    (HBase's filter language), then ``residual`` (AND-ed plan filters) checked here."""
    kind: str
    rows: tuple[bytes, ...] = ()
    start: bytes = b""
    stop: bytes = b""
    filter: bytes | None = None
    residual: tuple = ()
    bounds: tuple = ()              # (start, stop) described in values, for explain
    filters: tuple = ()             # the plan filters HBase runs, for explain


def hbase_filter(node, prefix: bytes, kinds: Sequence[KeyType]) -> bytes | None:
    """A plan filter in HBase's filter language; None where it is "true" (residual leaves
    read as true: the metastore re-checks what holds them)."""
    if isinstance(node, (Cond, Like)):
        if node.regex is None:
            return None
        index = node.index if isinstance(node, Cond) else node.test.key
        return keyregex.row_filter(prefix, kinds, index, node.regex, negate=getattr(node, "negated", False))
    parts = [hbase_filter(p, prefix, kinds) for p in node.parts]
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


class _Range:
    """The row range of one ScanPlan: the first column's markers, narrowed by the longest
    run of leading columns fixed by "=" and a range on the column after them."""

    def __init__(self, plan: "Plan", scan: ScanPlan, prefix: bytes):
        gen = plan.generator
        self.gen, self.scan, self.used = gen, scan, set()
        equal = {index: (fld, text) for index, fld, text, _ in scan.equal}
        fixed = 0
        while fixed in equal:
            fixed += 1
        self.fixed = [equal[i] for i in range(fixed)]
        head = prefix + b"".join(fld for fld, _ in self.fixed)
        if fixed == 0:
            low, high = scan.start, scan.end
        else:
            low, high = self.column_bounds(fixed) if fixed < len(gen.kinds) else (None, None)
            self.used.update(c for c in scan.filters if isinstance(c, Cond) and c.index < fixed and c.op == "=")
        self.low, self.high = low, high
        self.start = head if low is None else head + low.field if low.inclusive else \
            rowkey.prefix_successor(head + low.field)
        self.stop = rowkey.prefix_successor(head) if high is None else \
            rowkey.prefix_successor(head + high.field) if high.inclusive else head + high.field

    def column_bounds(self, index: int) -> tuple:
        low = high = None
        for cond in self.scan.filters:
            if isinstance(cond, Cond) and cond.index == index and cond.op in ("<", "<=", ">", ">="):
                marker = Marker(cond.field, cond.op in ("<=", ">="), cond.text.split(" ", 2)[2], cond.value)
                if cond.op in (">", ">="):
                    low = tighter(low, marker, low=True)
                else:
                    high = tighter(high, marker, low=False)
                self.used.add(cond)
        if high is not None and low is None and self.gen.kinds[index].domain != STRING:
            low = Marker(rowkey.TYPED, True, None)
        return low, high

    def describe(self) -> tuple[str, str]:
        """("start (p1=10, p2='a') inclusive", "stop (p1=10) inclusive"), in values."""
        names = self.gen.names
        fixed = [f"{names[i]}={text}" for i, (_, text) in enumerate(self.fixed)]
        column = names[min(len(fixed), len(names) - 1)]

        def side(word: str, marker: Marker | None, open_end: str) -> str:
            if marker is None:
                return f"{word} ({', '.join(fixed)}) inclusive" if fixed else f"{word} {open_end}"
            if marker.text is None:
                return f"{word} ({', '.join(fixed + [f'{column}: first typed value'])}) inclusive"
            return f"{word} ({', '.join(fixed + [f'{column}={marker.text}'])}) " + \
                ("inclusive" if marker.inclusive else "exclusive")

        return side("start", self.low, "at the table's first partition"), \
            side("stop", self.high, "after the table's last partition")


def hbase_calls(plan: "Plan", prefix: bytes) -> list[HBaseCall]:
    """The Gets (one call for all of them) and Scans that run ``plan`` for the table whose
    partition keys start with ``prefix``."""
    kinds = plan.generator.kinds
    gets, calls = [], []
    for scan in plan.scans:
        fields = scan.get_values(len(kinds))
        if fields is not None:
            gets.append(rowkey.key_from_fields(prefix, fields))
            continue
        bounds = _Range(plan, scan, prefix)
        left = tuple(f for f in scan.filters if f not in bounds.used)
        kept = [t for t in (hbase_filter(f, prefix, kinds) for f in left) if t is not None]
        text = None if not kept else kept[0] if len(kept) == 1 else b" AND ".join(kept)
        calls.append(HBaseCall("scan", start=bounds.start, stop=bounds.stop, filter=text,
                               residual=tuple(f for f in left if residual_leaves(f)), bounds=bounds.describe(),
                               filters=left))
    if gets:
        calls.insert(0, HBaseCall("get", rows=tuple(dict.fromkeys(gets))))
    return calls


def residual_predicate(call: HBaseCall, kinds: Sequence[KeyType]) -> Predicate | None:
    """What the metastore checks on the rows of ``call`` (None: HBase returned only matches)."""
    if not call.residual:
        return None
    node = call.residual[0] if len(call.residual) == 1 else AllOf(call.residual)
    return Predicate(as_bound(node, kinds), kinds)


@lru_cache(maxsize=512)
def plan_calls(text: str, keys: tuple, prefix: bytes) -> tuple[Plan, tuple[HBaseCall, ...]]:
    """``planner.plan_filter`` and its ``hbase_calls`` for the table whose keys start with
    ``prefix``, kept per filter text (Spark sends the same filters again and again)."""
    plan = plan_filter(text, keys)
    return plan, tuple(hbase_calls(plan, prefix))
