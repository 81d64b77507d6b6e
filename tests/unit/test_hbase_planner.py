"""The seed's table of partition-filter plans (HIVE-9452, "Hbase execution plans for
RawStore partition filter condition"), one test per row, asserting the plan in the seed's
notation, plus the plans beyond it (later columns as HBase RowFilters, the residual)."""

from __future__ import annotations

import re

import pytest

from hopshive.hbase_server.filterparse import BUILDERS, parse_filter
from hopshive.metastore.filter import FilterError
from hopshive.metastore.stores.hbase.calls import hbase_calls
from hopshive.metastore.stores.hbase.planner import plan_filter

ONE = [("p1", "int")]
TWO = [("p1", "int"), ("c1", "int")]
FOUR = [("p1", "int"), ("c1", "int"), ("c2", "int"), ("c3", "string")]


def plan(text, keys):
    return plan_filter(text, keys).render()


# (seed row, filter, partition keys, the seed's HBase calls)
SEED_TABLE = [
    ("p1 > 10 and p1 < 20", "p1 > 10 and p1 < 20", ONE, "Scan(X10+, X20)"),
    ("p1 = 10 (if single partition column)", "p1 = 10", ONE, "Get(X10)"),
    ("if all partition columns are specified", "p1 = 10 and c1 = 4", TWO, "Get(X10,4)"),
    # Seed: Scan(X10, X+) -- a typo: with no filter that returns every partition with
    # p1 >= 10 (p1 = 11 included).  The seed's own single-column row and its note ("<= and
    # = are similar": the stop row gets a zero byte) give the end of the p1=10 rows, X10+.
    ("p1 = 10 (multiple partition column)", "p1 = 10", TWO, "Scan(X10, X10+)"),
    ("p1 = 9 or p1 = 10", "p1 = 9 or p1 = 10", ONE, "merge(Get(X9), Get(X10))"),
    # Seed: merge(scan(X10, X+), scan(X, X20)) -- the first scan starts at X10, against the
    # seed's first row (p1 > 10 -> X10+).  Here the union is the same (p1 = 10 meets p1 < 20),
    # but the same slip in "p1 > 10 or p1 < 5" would return p1 = 10; we keep X10+.
    ("p1 > 10 or p1 < 20", "p1 > 10 or p1 < 20", ONE, "merge(Scan(X10+, X+), Scan(X, X20))"),
    ("condition1 (not on p1)", "c1 = 5", TWO, "Scan(X, X+).setFilter(c1 = 5)"),
    # Seed: scan(X10, X+).setFilter(condition1) -- wrong rows: it returns the p1 = 10
    # partitions that meet condition1, which fail p1 > 10.
    ("p1 > 10 and condition1", "p1 > 10 and c1 = 5", TWO, "Scan(X10+, X+).setFilter(c1 = 5)"),
    ("p1 < 20 and condition1", "p1 < 20 and c1 = 5", TWO, "Scan(X, X20).setFilter(c1 = 5)"),
    ("p1 > 10 and p1 > 20 and p1 < 30 and p1 < 40", "p1 > 10 and p1 > 20 and p1 < 30 and p1 < 40", ONE,
     "Scan(X20+, X30)"),
    ("p1 > 10 and (p1 > 20 or c1 = 5)", "p1 > 10 and (p1 > 20 or c1 = 5)", TWO,
     "merge(Scan(X20+, X+), Scan(X10+, X+).setFilter(c1 = 5))"),
    ("condition1 or condition2, one a full scan", "p1 = 5 or c1 = 3", TWO, "Scan(X, X+).setFilter(p1 = 5 or c1 = 3)"),
    ("condition1 or condition2, general case", "p1 < 5 or p1 > 8", TWO, "merge(Scan(X, X5), Scan(X8+, X+))"),
    ("c1 and (c2 or c3) => (c1 and c2) or (c1 and c3)", "p1 = 1 and (c1 = 2 or c2 = 3)", FOUR,
     "merge(Scan(X1, X1+).setFilter(c1 = 2), Scan(X1, X1+).setFilter(c2 = 3))"),
    ("(c1 or c2) and (c3 or c4) => (c1 and c3) or (c2 and c3) or (c1 and c4) or (c2 and c4)",
     "(p1 = 1 or p1 = 2) and (p1 > 0 or p1 < 9)", ONE, "merge(Get(X1), Get(X2), Get(X1), Get(X2))"),
]


@pytest.mark.parametrize("row,text,keys,expected", SEED_TABLE, ids=[r[0] for r in SEED_TABLE])
def test_seed_table(row, text, keys, expected):
    assert plan(text, keys) == expected


def test_dnf_order_of_the_seed():
    """(c1 or c2) and (c3 or c4): c1c3, c2c3, c1c4, c2c4, the seed's order, on later columns."""
    got = plan("p1 > 0 and (c1 = 1 or c1 = 2) and (c2 = 3 or c2 = 4)", FOUR)
    assert got == ("merge(Scan(X0+, X+).setFilter(c1 = 1 and c2 = 3), Scan(X0+, X+).setFilter(c1 = 2 and c2 = 3), "
                   "Scan(X0+, X+).setFilter(c1 = 1 and c2 = 4), Scan(X0+, X+).setFilter(c1 = 2 and c2 = 4))")


@pytest.mark.parametrize("text,expected", [
    ("p1 >= 10 and p1 <= 20", "Scan(X10, X20+)"),
    ("p1 between 3 and 4", "Scan(X3, X4+)"),
    ("p1 in (1, 2)", "merge(Scan(X1, X1+), Scan(X2, X2+))"),
    ("p1 <> 5", "merge(Scan(X, X5), Scan(X5+, X+))"),
    ("not p1 >= 5", "Scan(X, X5)"),
    ("p1 = 1 and p1 = 2", "nothing"),
    ("p1 > 5 and p1 < 3", "nothing"),
    ("c1 in (1, 2)", "Scan(X, X+).setFilter(c1 = 1 or c1 = 2)"),
    ("c1 not between 1 and 5", "Scan(X, X+).setFilter(c1 < 1 or c1 > 5)"),
    ("c3 like 'a%' and p1 = 2", "Scan(X2, X2+).setFilter(c3 like \"a%\")"),
])
def test_leaf_plans(text, expected):
    assert plan(text, FOUR if "c3" in text or "c1" in text else TWO) == expected


def _filters(text, keys):
    return [call.filter for call in hbase_calls(plan_filter(text, keys), b"X") if call.kind == "scan"]


@pytest.mark.parametrize("text", ["c1 >= 7", "c1 < 7 and c3 > 'b'", "p1 = 5 or c1 = 3", "c3 like 'a.*'",
                                  "not c3 like '.*z'", "c2 in (1, 2, 3)", "c1 = 1 or c1 = 2 and c3 <> 'q'"])
def test_only_hbase_filters_are_emitted(text):
    """What the planner sends parses with HBase's grammar, names only filters of HBase's
    ParseFilter (RowFilter here), and writes regexes in ASCII (HBase decodes the filter
    string as UTF-8)."""
    for text_filter in _filters(text, FOUR):
        assert text_filter.isascii()
        parse_filter(text_filter)
        names = set(re.findall(rb"([A-Za-z]+)\(", text_filter.replace(b"(?:", b"")))
        assert names <= {b"RowFilter"} and set(BUILDERS) >= {n.decode() for n in names}


def test_residual_only_where_hbase_cannot_run_the_test():
    [call] = hbase_calls(plan_filter("p1 > 1 and c1 < 3", TWO), b"X")
    assert not call.residual and call.filter.startswith(b"RowFilter(=, 'regexstring:^X")
    [call] = hbase_calls(plan_filter("c3 like 'a.*' and c1 = 2", FOUR), b"X")
    assert not call.residual and call.filter.count(b"RowFilter") == 2     # LIKE on a string key runs in HBase
    [call] = hbase_calls(plan_filter("c2 like '1.*' and c1 = 2", FOUR), b"X")
    assert [r.render() for r in call.residual] == ['c2 like "1.*"']          # LIKE on an int key does not
    assert call.filter.count(b"RowFilter") == 1
    [call] = hbase_calls(plan_filter("c2 like '1.*' or c1 = 2", FOUR), b"X")
    assert call.filter is None and [r.render() for r in call.residual] == ['c2 like "1.*" or c1 = 2']


def test_fixed_leading_columns_narrow_the_row_range():
    """p1 = v fixes the first field: a range on the second column becomes start/stop rows."""
    [call] = hbase_calls(plan_filter("p1 = 3 and c1 >= 7 and c1 < 9", FOUR), b"X")
    assert call.filter is None and call.bounds == ("start (p1=3, c1=7) inclusive", "stop (p1=3, c1=9) exclusive")
    [call] = hbase_calls(plan_filter("p1 = 3 and c1 = 4 and c3 like 'x.*'", FOUR), b"X")
    assert call.bounds == ("start (p1=3, c1=4) inclusive", "stop (p1=3, c1=4) inclusive")


def test_gets_are_one_call():
    calls = hbase_calls(plan_filter("p1 = 9 or p1 = 10", ONE), b"X")
    assert [c.kind for c in calls] == ["get"] and len(calls[0].rows) == 2


def test_too_many_branches_collapse_to_one_filtered_scan():
    text = " and ".join(f"(c1 > {i} or c2 > {i})" for i in range(8))
    got = plan_filter(text, FOUR)
    assert len(got.scans) == 1 and got.collapsed


def test_bad_filters_are_filter_errors():
    with pytest.raises(FilterError):
        plan_filter("nokey = 1", TWO)
    with pytest.raises(FilterError):
        plan_filter("p1 = 'abc'", TWO)
