"""``hopshive-metatool explain-filter``: a partition filter's plan, in values.

The first line is the seed's notation (``Scan(X10+, X20).setFilter(p2 = 5)``); then each
HBase call: Gets with the partition values their row keys hold (read back through the keys'
trailers), Scans with their start and stop rows as the values they bound, the conditions
HBase runs and the filter string it gets, and the residual -- the conditions the metastore
checks on what HBase returns because HBase's filter language cannot hold them, with why.
"""

from __future__ import annotations

import json

from . import rowkey
from .calls import HBaseCall
from .planner import Plan, residual_leaves


def _get(plan: Plan, row: bytes) -> str:
    gen = plan.generator
    values = []
    for index, (name, kind) in enumerate(zip(gen.names, gen.kinds)):
        field = rowkey.key_field(row, index)
        text = rowkey.decode_field(kind.domain, field)
        values.append(f"{name}={gen.shown(index, text) if field[:1] == rowkey.TYPED else _quoted(text)}")
    return "(" + ", ".join(values) + ")"


def _quoted(text: str) -> str:
    return json.dumps(text)


def _scan(plan: Plan, call: HBaseCall) -> list[str]:
    start, stop = call.bounds
    lines = [f"scan {start}; {stop}"]
    exact = [f for f in call.filters if not residual_leaves(f)]
    if exact:
        lines.append(f"  in HBase: {plan.text(exact)}")
    if call.filter:
        lines.append(f"  HBase filter: {call.filter.decode('ascii')}")
    if not call.residual:
        lines.append("  residual: none (HBase returns exactly the matching partitions)")
        return lines
    lines.append(f"  residual: {plan.text(call.residual)}")
    for leaf in dict.fromkeys(leaf for item in call.residual for leaf in residual_leaves(item)):
        lines.append(f"    {plan.text([leaf])}: {leaf.why}")
    whole = [item for item in call.residual if item not in residual_leaves(item)]
    if whole:
        lines.append("    (an OR or AND holding such a condition is checked whole)")
    return lines


def render(plan: Plan, calls) -> str:
    lines = [f"plan: {plan.render()}"]
    if plan.collapsed:
        lines.append(f"collapsed to one scan: {plan.collapsed}")
    for call in calls:
        if call.kind == "get":
            lines.append(f"get {len(call.rows)} row(s): " + ", ".join(_get(plan, row) for row in call.rows))
        else:
            lines.extend(_scan(plan, call))
    if not calls:
        lines.append("no call: the filter matches no partition")
    return "\n".join(lines)
