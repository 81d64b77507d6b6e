"""Random typed filters over tables of 1-4 partition columns of mixed types: the HBase
store, the MariaDB store and the in-memory evaluator select the same partitions.

Both stores are real metastores (one per store, in this process, on the session's MariaDB
and our HBase server) loaded through the Hive Metastore Thrift API with the same partitions,
and asked the same ``get_partitions_by_filter``: on the HBase side that runs the planner's
Gets and Scans, HBase's RowFilters in the server and the residual in the metastore."""

from __future__ import annotations

import contextlib
import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pymetastore.hive_metastore import ttypes as api

from hopshive.core.db import Database
from hopshive.metastore.filter import compile_predicate, render
from hopshive.metastore.filter.keytypes import key_type
from hopshive.metastore.stores.hbase import rowkey
from tests.support.hms import partition, table, thrift_client
from tests.support.metastore import InThreadMetastore, settings as metastore_settings
from tests.support.metastore_fixtures import FAKE_NAMENODE
from tests.support.schemas import reset_schemas
from tests.unit.test_filter_properties import _borrow, _usable_literal, bound_or_none, filters, tables

pytestmark = pytest.mark.metastore
_tables = itertools.count()


@pytest.fixture(scope="module")
def clients(mariadb, hbase_server):
    """{"mysql": client, "hbase": client}: a metastore on each store, sharing one MariaDB."""
    database = Database(mariadb.config)
    reset_schemas(database)
    with contextlib.ExitStack() as stack:
        out = {}
        for backend in ("mysql", "hbase"):
            config = metastore_settings(database.config, FAKE_NAMENODE, backend=backend)
            config["hbase"].update(port=hbase_server.port, table_prefix="props_", pool_size=2)
            server = InThreadMetastore(config).start()
            stack.callback(server.stop)
            out[backend] = stack.enter_context(thrift_client(server.port))
        yield out
    database.close()


@st.composite
def cases(draw):
    keys, rows = draw(tables(max_partitions=10))
    order = draw(st.permutations(range(len(keys))))[:draw(st.integers(1, len(keys)))]
    keys = [keys[i] for i in order]
    kinds = [key_type(t) for _, t in keys]
    unique = {}        # one partition per typed identity ("05" and "5" of an int key are one)
    for row in rows:
        values = tuple(row[i] for i in order)
        if all(values) and not any("\x00" in v for v in values):    # names a directory: no NUL, not empty
            unique.setdefault(rowkey.row_key("d", "t", kinds, values), values)
    pools = {name: [row[i] for row in unique.values() if _usable_literal(hive_type, row[i])]
             for i, (name, hive_type) in enumerate(keys)}
    nodes = [_borrow(draw, draw(filters(tuple(keys), max_leaves=5)), pools) for _ in range(3)]
    return keys, list(unique.values()), nodes


def _selected(client, name: str, text: str):
    try:
        return {tuple(p.values) for p in client.get_partitions_by_filter("default", name, text, -1)}
    except api.MetaException as exc:
        return f"refused: {exc.message}"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(cases())
def test_both_stores_select_what_the_evaluator_selects(clients, case):
    keys, rows, nodes = case
    name = f"t{next(_tables)}"
    for client in clients.values():
        client.create_table(table("default", name, parts=[f"{k} {t}" for k, t in keys]))
        made = client.get_table("default", name)
        client.add_partitions([partition(made, row) for row in rows])
    for node in nodes:
        if bound_or_none(node, keys) is None:
            continue
        text = render(node)
        predicate = compile_predicate(text, keys)
        expected = {row for row in rows if predicate(row)}
        assert _selected(clients["hbase"], name, text) == expected, text
        assert _selected(clients["mysql"], name, text) == expected, text
