"""Hive indexes over the wire, on both stores: the Hive 2 index calls through hmsclient's
client (the IDL a Hive 2.3 client speaks: Hive 3 removed indexes), index tables and their
directories, Hive's errors, and the cascades of table, partition and database drops."""

from __future__ import annotations

import copy
from concurrent.futures import ThreadPoolExecutor

import pytest
from hmsclient.genthrift.hive_metastore import ttypes as h2
from pymetastore.hive_metastore import ttypes as h3

from hopshive.metastore.api import api
from tests.support.hms import index
from tests.support.metastore import thrift_client
from tests.support.metastore_fixtures import (WAREHOUSE, both_stores, fs, hbase_server, hms, hms2,  # noqa: F401
                                               metastore, partition, table)

# One contract, both stores.
store_backend = both_stores

pytestmark = pytest.mark.metastore
WAREHOUSE_PATH = "/user/hive/warehouse"


@pytest.fixture
def base(hms):
    """default.t (a int, b string, c double) partitioned by ds, with partitions 1 and 2."""
    t = table("default", "t", cols=("a int", "b string", "c double"), parts=("ds string",))
    hms.create_table(t)
    hms.add_partitions([partition(t, [d]) for d in ("1", "2")])
    return hms.get_table("default", "t")


def names(indexes) -> list[tuple[str, str, str | None]]:
    return [(i.origTableName, i.indexName, i.indexTableName) for i in indexes]


def test_index_lifecycle(hms, hms2, base, fs):
    made = hms2.add_index(*index(base, "x", ["b"], params={"k": "v"}))
    assert isinstance(made, h2.Index)
    assert (made.dbName, made.origTableName, made.indexName, made.indexTableName) == \
        ("default", "t", "x", "default__t_x__")
    assert made.indexHandlerClass == "org.apache.hadoop.hive.ql.index.compact.CompactIndexHandler"
    assert [(c.name, c.type) for c in made.sd.cols] == [("b", "string")] and made.sd.location is None
    assert made.deferredRebuild is True and made.createTime > 0
    assert made.parameters["k"] == "v" and "transient_lastDdlTime" in made.parameters

    index_table = hms.get_table("default", "default__t_x__")
    assert index_table.tableType == "INDEX_TABLE"
    assert index_table.sd.location == f"{WAREHOUSE}/default__t_x__"
    assert [c.name for c in index_table.sd.cols] == ["b", "_bucketname", "_offsets"]
    assert [k.name for k in index_table.partitionKeys] == ["ds"]
    assert fs.exists(f"{WAREHOUSE_PATH}/default__t_x__")

    assert hms2.get_index_by_name("Default", "T", "X") == made
    hms2.add_index(*index(base, "y", ["c", "a"], index_table="t_y", deferred=False))
    assert hms2.get_index_names("default", "t", -1) == ["x", "y"]
    assert hms2.get_index_names("default", "t", 1) == ["x"]
    assert names(hms2.get_indexes("default", "t", -1)) == [("t", "x", "default__t_x__"), ("t", "y", "t_y")]
    y = hms2.get_index_by_name("default", "t", "y")
    assert [c.name for c in y.sd.cols] == ["c", "a"] and y.deferredRebuild is False
    assert fs.exists(f"{WAREHOUSE_PATH}/t_y")

    changed = copy.deepcopy(made)
    changed.parameters = {"k": "w"}
    changed.indexHandlerClass = "ignored"
    hms2.alter_index("default", "t", "x", changed)
    altered = hms2.get_index_by_name("default", "t", "x")
    assert altered.parameters["k"] == "w" and altered.indexHandlerClass == made.indexHandlerClass

    assert hms2.drop_index_by_name("default", "t", "x", True) is True
    assert not fs.exists(f"{WAREHOUSE_PATH}/default__t_x__")
    with pytest.raises(h3.NoSuchObjectException):
        hms.get_table("default", "default__t_x__")
    assert hms2.drop_index_by_name("default", "t", "y", False) is True
    assert fs.exists(f"{WAREHOUSE_PATH}/t_y"), "deleteData=false keeps the index table's data"
    assert hms.get_all_tables("default") == ["t"]
    assert hms2.get_indexes("default", "t", -1) == []


def test_hive_errors(hms, hms2, base):
    hms2.add_index(*index(base, "x", ["b"]))
    with pytest.raises(h2.AlreadyExistsException, match="Index already exists: default.t.x"):
        hms2.add_index(*index(base, "X", ["a"], index_table="other"))
    missing = copy.deepcopy(base)
    missing.tableName = "nope"
    with pytest.raises(h2.InvalidObjectException, match="database or the original table do not exist"):
        hms2.add_index(*index(missing, "x", ["a"]))
    with pytest.raises(h2.InvalidObjectException, match="Check the index columns, they should appear in the table"):
        hms2.add_index(*index(base, "z", ["a", "nope"]))
    with pytest.raises(h2.InvalidObjectException, match="Unable to add index because index table already exists"):
        hms2.add_index(*index(base, "w", ["a"], index_table="t"))
    view = table("default", "v")
    view.tableType, view.viewOriginalText, view.viewExpandedText = "VIRTUAL_VIEW", "select 1", "select 1"
    hms.create_table(view)
    with pytest.raises(h2.InvalidObjectException, match="tableName=v is a VIRTUAL VIEW. Index on VIRTUAL VIEW is not"):
        hms2.add_index(*index(hms.get_table("default", "v"), "x", ["a"]))
    with pytest.raises(h2.NoSuchObjectException, match="default.t index=nope not found"):
        hms2.get_index_by_name("default", "t", "nope")
    with pytest.raises(h2.NoSuchObjectException, match="default.t index=nope not found"):
        hms2.drop_index_by_name("default", "t", "nope", True)
    with pytest.raises(h2.MetaException, match="index=nope not found"):
        hms2.alter_index("default", "t", "nope", hms2.get_index_by_name("default", "t", "x"))
    with pytest.raises(h2.MetaException, match="The table default__t_x__ is an index table. Please do drop index"):
        hms2.drop_table("default", "default__t_x__", True)
    with pytest.raises(h3.MetaException, match="is an index table"):
        hms.drop_table("default", "default__t_x__", True)
    assert hms2.get_indexes("default", "nope", -1) == [] and hms2.get_index_names("nodb", "t", -1) == []
    # nothing a refused call touched changed
    assert hms2.get_index_names("default", "t", -1) == ["x"]
    assert hms.get_all_tables("default") == ["default__t_x__", "t", "v"]


def test_an_index_without_an_index_table(hms, hms2, base, fs):
    idx, _ = index(base, "x", ["a"], index_table="ignored")
    made = hms2.add_index(idx, None)
    assert made.indexTableName is None
    assert hms.get_all_tables("default") == ["t"] and not fs.exists(f"{WAREHOUSE_PATH}/ignored")
    hms2.drop_index_by_name("default", "t", "x", True)
    assert hms2.get_indexes("default", "t", -1) == []


def test_dropping_the_base_table_drops_its_indexes_and_index_tables(hms, hms2, base, fs):
    hms2.add_index(*index(base, "x", ["b"]))
    hms2.add_index(*index(base, "y", ["a"], index_table="t_y"))
    hms.drop_table("default", "t", True)
    assert hms.get_all_tables("default") == []
    assert not fs.exists(f"{WAREHOUSE_PATH}/default__t_x__") and not fs.exists(f"{WAREHOUSE_PATH}/t_y")
    hms.create_table(table("default", "t"))
    assert hms2.get_indexes("default", "t", -1) == [], "a new table of the old name has no index"


def test_an_external_base_table_dropped_keeps_its_data_not_its_index_tables(hms, hms2, fs):
    fs.mkdirs("/data/ext", 0o777)
    hms.create_table(table("default", "ext", location="webhdfs://127.0.0.1:1/data/ext", external=True))
    hms2.add_index(*index(hms.get_table("default", "ext"), "x", ["a"]))
    hms.drop_table("default", "ext", True)
    assert fs.exists("/data/ext") and not fs.exists(f"{WAREHOUSE_PATH}/default__ext_x__")


def test_dropping_a_base_partition_drops_the_index_partition(hms, hms2, base, fs):
    hms2.add_index(*index(base, "x", ["b"]))
    other, other_table = index(base, "y", ["a"])
    other_table.partitionKeys = [h2.FieldSchema("day", "string", None)]       # partitioned otherwise
    hms2.add_index(other, other_table)
    for name, values in (("default__t_x__", ("1", "2")), ("default__t_y__", ("1",))):
        hms.add_partitions([partition(hms.get_table("default", name), [v]) for v in values])
    hms.drop_partition("default", "t", ["1"], True)
    assert hms.get_partition_names("default", "t", -1) == ["ds=2"]
    assert hms.get_partition_names("default", "default__t_x__", -1) == ["ds=2"]
    assert not fs.exists(f"{WAREHOUSE_PATH}/default__t_x__/ds=1") and fs.exists(f"{WAREHOUSE_PATH}/default__t_x__/ds=2")
    assert hms.get_partition_names("default", "default__t_y__", -1) == ["day=1"], "partitioned otherwise: left alone"


def test_drop_database_cascade_takes_indexes_and_index_tables(hms, hms2, fs):
    hms.create_database(api.Database(name="sales", locationUri=None, parameters={}))
    hms.create_table(table("sales", "orders"))
    hms2.add_index(*index(hms.get_table("sales", "orders"), "x", ["a"]))
    hms.create_table(table("sales", "zz"))
    hms.drop_database("sales", True, True)
    assert not fs.exists(f"{WAREHOUSE_PATH}/sales.db")
    with pytest.raises(h3.NoSuchObjectException):
        hms.get_database("sales")


def test_a_renamed_base_table_keeps_its_indexes(hms, hms2, base):
    hms2.add_index(*index(base, "x", ["b"]))
    renamed = hms.get_table("default", "t")
    renamed.tableName = "t2"
    hms.alter_table("default", "t", renamed)
    assert names(hms2.get_indexes("default", "t2", -1)) == [("t2", "x", "default__t_x__")]
    assert hms2.get_indexes("default", "t", -1) == []
    hms.drop_table("default", "t2", True)
    assert hms.get_all_tables("default") == []


def test_hive3_clients_are_unaffected(hms, hms2, base):
    """The index methods are Hive 2's; a Hive 3.1 client sees the index table as a table."""
    hms2.add_index(*index(base, "x", ["b"]))
    assert hms.get_tables_by_type("default", "*", "INDEX_TABLE") == ["default__t_x__"]
    assert hms.get_table("default", "t").tableType == "MANAGED_TABLE"


def test_racing_creates_of_one_index_give_one_index(metastore, hms, base):
    """Two connections add the same index at once, again and again: one index and one index
    table each time, AlreadyExists for the other."""
    with thrift_client(metastore.port, hive2=True) as a, thrift_client(metastore.port, hive2=True) as b:
        with ThreadPoolExecutor(2) as pool:
            for _ in range(8):
                futures = [pool.submit(c.add_index, *index(base, "x", ["a"])) for c in (a, b)]
                outcomes = sorted(type(f.exception() or f.result()).__name__ for f in futures)
                assert outcomes == ["AlreadyExistsException", "Index"]
                assert hms.get_all_tables("default") == ["default__t_x__", "t"]
                a.drop_index_by_name("default", "t", "x", True)
