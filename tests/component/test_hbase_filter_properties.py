"""Random typed filters over tables of 1-4 partition columns of mixed types: the HBase plan
(Gets, Scans with start/stop rows and server-side filters in our HBase server, residual
evaluated here) selects exactly what the in-memory evaluator selects.  The MariaDB store is
held to the same evaluator by test_filter_mariadb, so the three agree."""

from __future__ import annotations

import itertools
import json

import happybase
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hopshive.metastore.filter import compile_predicate, render
from hopshive.metastore.filter.keytypes import key_type
from hopshive.metastore.stores.hbase import rowkey
from hopshive.metastore.stores.hbase.planner import hbase_calls, plan_filter
from tests.support.hbase import HBaseServerProcess
from tests.unit.test_filter_properties import _borrow, _usable_literal, bound_or_none, filters, tables

_tables = itertools.count()


@pytest.fixture(scope="module")
def parts(tmp_path_factory):
    server = HBaseServerProcess(tmp_path_factory.mktemp("hbase-props")).start()
    conn = happybase.Connection("127.0.0.1", server.port)
    conn.create_table("parts", {"i": dict(max_versions=1)})
    yield conn.table("parts")
    conn.close()
    server.stop()


@st.composite
def cases(draw):
    keys, rows = draw(tables(max_partitions=20))
    order = draw(st.permutations(range(len(keys))))[:draw(st.integers(1, len(keys)))]
    keys = [keys[i] for i in order]
    rows = [tuple(row[i] for i in order) for row in rows]
    pools = {name: [row[i] for row in rows if _usable_literal(hive_type, row[i])]
             for i, (name, hive_type) in enumerate(keys)}
    nodes = [_borrow(draw, draw(filters(tuple(keys))), pools) for _ in range(3)]
    return keys, rows, nodes


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(cases())
def test_hbase_plans_select_what_the_evaluator_selects(parts, case):
    keys, rows, nodes = case
    name = f"t{next(_tables)}"
    kinds = [key_type(t) for _, t in keys]
    stored = {}
    for row in rows:
        stored.setdefault(rowkey.row_key("d", name, kinds, row), row)   # "05" and "5": one partition
    with parts.batch() as batch:
        for key, row in stored.items():
            batch.put(key, {b"i:v": json.dumps(row).encode()})
    for node in nodes:
        if bound_or_none(node, keys) is None:
            continue
        text = render(node)
        plan = plan_filter(text, keys)
        predicate = compile_predicate(text, keys)
        found = {}
        for call in hbase_calls(plan, rowkey.table_prefix("d", name)):
            if call.kind == "get":
                found.update(parts.rows(list(call.rows)))
            else:
                found.update(parts.scan(row_start=call.start, row_stop=call.stop, filter=call.filter))
        got = {tuple(json.loads(d[b"i:v"])) for d in found.values()}
        if plan.residual:     # otherwise HBase alone must return exactly the matches
            got = {row for row in got if predicate(row)}
        expected = {row for row in stored.values() if predicate(row)}
        assert got == expected, (text, plan.render())
