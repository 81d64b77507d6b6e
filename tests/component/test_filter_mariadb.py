"""The compiled SQL selects exactly the partitions the in-memory evaluator selects.

Runs on the private MariaDB of the test session, in a scratch schema shaped like the
store's key-value rows: the stored string (utf8mb4_nopad_bin) beside its typed shadows,
filled by ``typed_shadow_values`` exactly as the store fills them.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hopshive.core.db import Database
from hopshive.metastore.filter import (NUMBER_SQL_TYPE, KeyColumn, compile_filter, compile_value_sets, render,
                                       typed_shadow_values)
from hopshive.metastore.filter.ast import Compare, Str, fits_quotes
from tests.unit.test_filter_properties import VALUES, bound_or_none, like_patterns, tables, tables_and_filters
from tests.unit.test_filter_semantics import COLUMNS, PARTITIONS

SQL_PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TEXT = "VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL"
SHADOWS = {"h_num": None, "s_num": None, "n_num": None, "d_date": None}


@pytest.fixture(scope="module")
def scratch(mariadb):
    database = Database(mariadb.config)
    with database.transaction() as tx:
        tx.execute("DROP DATABASE IF EXISTS filtertest")
        tx.execute("CREATE DATABASE filtertest")
        tx.execute(f"""CREATE TABLE filtertest.parts (
            id INT NOT NULL PRIMARY KEY,
            h {TEXT}, h_num {NUMBER_SQL_TYPE} NULL, ds {TEXT}, s {TEXT}, s_num {NUMBER_SQL_TYPE} NULL,
            d {TEXT}, d_date DATE NULL, n {TEXT}, n_num {NUMBER_SQL_TYPE} NULL)""")
    yield database
    with database.transaction() as tx:
        tx.execute("DROP DATABASE filtertest")
    database.close()


def key_columns(keys, typed: bool) -> list[KeyColumn]:
    """The table's keys, with the shadow columns (typed) or without them (CAST fallback)."""
    def shadow(column: str) -> str | None:
        return column if typed and column in SHADOWS else None
    return [KeyColumn(name, hive_type, name, shadow(f"{name}_num"), shadow(f"{name}_date")) for name, hive_type in keys]


def load(tx, keys, rows) -> None:
    """One row per partition; columns of keys the table lacks stay empty."""
    tx.execute("DELETE FROM filtertest.parts")
    records = []
    for index, row in enumerate(rows):
        columns = {"id": index, "h": "", "ds": "", "s": "", "d": "", "n": "", **SHADOWS}
        for (name, hive_type), value in zip(keys, row):
            number, day = typed_shadow_values(hive_type, value)
            columns[name] = value
            columns.update((column, typed) for column, typed in ((f"{name}_num", number), (f"{name}_date", day))
                           if column in SHADOWS)
        records.append(columns)
    if records:
        names = sorted(records[0])
        tx.executemany(f"INSERT INTO filtertest.parts ({', '.join(names)}) VALUES ({', '.join(['%s'] * len(names))})",
                       [[record[name] for name in names] for record in records])


def selected_by_sql(tx, compiled) -> set[int]:
    return {row[0] for row in tx.query(f"SELECT id FROM filtertest.parts WHERE {compiled.sql}", compiled.params)}


def selected_in_memory(compiled, rows) -> set[int]:
    return {index for index, row in enumerate(rows) if compiled.matches(row)}


@pytest.mark.parametrize("text", [
    'ds = "2024-01-02"', 'ds > "2024-01-01" and h < 5', '(ds) in ("a", "b")', "(h) in (1, 3)", "(n) not in (5, 6)",
    'ds like "2024.*"', 'ds like ".*01"', 'ds like ".*-01-.*"', "h >= 2 and h <= 8", 'ds != "a"',
    '(ds = "2024-01-01" or h = 7)', 'ds >= "a" and ds <= "b"', 'ds = "it\'s"', 'd > "2024-01-15"',
    "n = 10000000000 and s < 2", "not (h between 1 and 5 or d = date'2024-01-01')", "h like '0.*'",
])
@pytest.mark.parametrize("typed", [True, False], ids=["shadow-columns", "cast-fallback"])
def test_spark_filters_select_the_same_in_sql(scratch, text, typed):
    keys = [(key.name, key.hive_type) for key in COLUMNS]
    compiled = compile_filter(text, key_columns(keys, typed))
    with scratch.transaction() as tx:
        load(tx, keys, PARTITIONS)
        assert selected_by_sql(tx, compiled) == selected_in_memory(compiled, PARTITIONS)


@SQL_PROPERTY
@given(tables_and_filters(count=3))
def test_sql_selects_exactly_what_the_evaluator_selects(scratch, case):
    keys, rows, nodes = case
    with scratch.transaction() as tx:
        load(tx, keys, rows)
        for node in nodes:
            if bound_or_none(node, keys) is None:
                continue
            text = render(node)
            for typed in (True, False):
                compiled = compile_filter(text, key_columns(keys, typed))
                assert selected_by_sql(tx, compiled) == selected_in_memory(compiled, rows), (text, compiled.sql)


@st.composite
def tables_and_value_sets(draw):
    keys, rows = draw(tables())
    pool = {name: st.one_of(VALUES[name], st.sampled_from([row[i] for row in rows] or [""]))
            for i, (name, _) in enumerate(keys)}
    names = draw(st.lists(st.sampled_from([name for name, _ in keys]), unique=True, max_size=3))
    return keys, rows, {name: draw(st.lists(pool[name], max_size=6)) for name in names}


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables_and_value_sets())
def test_value_sets_select_the_same_in_sql(scratch, case):
    keys, rows, value_sets = case
    compiled = compile_value_sets(value_sets, key_columns(keys, typed=True))
    with scratch.transaction() as tx:
        load(tx, keys, rows)
        assert selected_by_sql(tx, compiled) == selected_in_memory(compiled, rows)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(like_patterns.filter(lambda p: fits_quotes(p, '"') or fits_quotes(p, "'")), st.lists(VALUES["ds"], max_size=20))
def test_like_patterns_mean_the_same_to_pcre2_and_python(scratch, pattern, values):
    keys = [("ds", "string")]
    rows = [(value,) for value in values]
    compiled = compile_filter(render(Compare("ds", "like", Str(pattern))), key_columns(keys, typed=True))
    with scratch.transaction() as tx:
        load(tx, keys, rows)
        assert selected_by_sql(tx, compiled) == selected_in_memory(compiled, rows), compiled.params


def test_a_hundred_thousand_element_in_list_runs(scratch):
    keys = [(key.name, key.hive_type) for key in COLUMNS]
    values = ", ".join(f'"{i}"' for i in range(100_000))
    compiled = compile_filter(f'(ds) in ({values}, "a") or (h) not in ({values.replace(chr(34), "")})',
                              key_columns(keys, typed=True))
    with scratch.transaction() as tx:
        load(tx, keys, PARTITIONS)
        assert selected_by_sql(tx, compiled) == selected_in_memory(compiled, PARTITIONS) == {4}


def test_padding_collations_break_hive_string_semantics(scratch):
    """Why the store's value column must be utf8mb4_nopad_bin, not utf8mb4_bin."""
    with scratch.transaction() as tx:
        row = tx.query_one("SELECT _utf8mb4'a' COLLATE utf8mb4_bin = 'a ', "
                           "_utf8mb4'a\t' COLLATE utf8mb4_bin < 'a', "
                           "_utf8mb4'a' COLLATE utf8mb4_nopad_bin = 'a ', "
                           "_utf8mb4'a\t' COLLATE utf8mb4_nopad_bin < 'a'")
    assert row == (1, 1, 0, 0)
