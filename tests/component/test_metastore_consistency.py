"""Directories and metadata stay consistent: thesis Table 3.1 row by row, atomic creates
(a failure between directory and metadata leaves neither), rename, and concurrent DDL on
one table.  Every scenario ends with the invariant check."""

from __future__ import annotations

import threading

import pytest
from pymetastore.hive_metastore import ttypes as h3

from hopshive.metastore.api import api
from tests.support.metastore import invariant_violations, thrift_client
from tests.support.metastore_fixtures import WAREHOUSE, fs, hms, metastore, partition, table  # noqa: F401

pytestmark = pytest.mark.metastore
DB_PATH = "/user/hive/warehouse/sales.db"


@pytest.fixture
def sales(hms):
    """Database `sales` with a managed table `orders` (ds, h) holding four partitions."""
    hms.create_database(api.Database(name="sales", locationUri=None, parameters={}))
    t = table("sales", "orders", parts=("ds string", "h int"))
    hms.create_table(t)
    hms.add_partitions([partition(t, [d, h]) for d in ("2024-01-01", "2024-01-02") for h in ("1", "2")])
    return t


def counts(db) -> dict:
    with db.transaction() as tx:
        return {t: tx.query_one(f"SELECT COUNT(*) FROM metastore.{t}")[0]
                for t in ("DBS", "TBLS", "PARTITIONS", "PARTITION_KEY_VALS", "TABLE_PARAMS")}


# ------------------------------------------------------------------ Table 3.1
def test_drop_through_the_metastore_removes_metadata_and_managed_directories(hms, sales, fs, db):
    hms.drop_partition("sales", "orders", ["2024-01-01", "1"], True)
    assert not fs.exists(f"{DB_PATH}/orders/ds=2024-01-01/h=1")
    assert fs.exists(f"{DB_PATH}/orders/ds=2024-01-01"), "a parent holding other partitions stays"
    hms.drop_partition("sales", "orders", ["2024-01-01", "2"], True)
    assert not fs.exists(f"{DB_PATH}/orders/ds=2024-01-01"), "an emptied parent goes"
    hms.drop_table("sales", "orders", True)
    assert not fs.exists(f"{DB_PATH}/orders")
    hms.drop_database("sales", True, False)
    assert not fs.exists(DB_PATH)
    assert counts(db) == {"DBS": 1, "TBLS": 0, "PARTITIONS": 0, "PARTITION_KEY_VALS": 0, "TABLE_PARAMS": 0}
    assert invariant_violations(db) == {}


def test_dropping_an_external_table_keeps_its_data(hms, fs, db):
    fs.mkdirs("/data/ext", 0o777)    # creating a table on a directory needs write access to it
    fs.write("/data/ext/part-0")
    hms.create_table(table("default", "ext", location="webhdfs://127.0.0.1:1/data/ext", external=True))
    hms.drop_table("default", "ext", True)
    assert fs.exists("/data/ext/part-0")
    assert invariant_violations(db) == {}


def test_directory_deleted_with_skip_trash_takes_its_metadata(hms, sales, fs, db):
    fs.delete(f"{DB_PATH}/orders/ds=2024-01-02/h=2")
    assert hms.get_partition_names("sales", "orders", -1) == ["ds=2024-01-01/h=1", "ds=2024-01-01/h=2",
                                                              "ds=2024-01-02/h=1"]
    fs.delete(f"{DB_PATH}/orders")
    with pytest.raises(h3.NoSuchObjectException):
        hms.get_table("sales", "orders")
    fs.delete(DB_PATH)
    with pytest.raises(h3.NoSuchObjectException):
        hms.get_database("sales")
    assert counts(db)["PARTITIONS"] == 0
    assert invariant_violations(db, owned=False) == {}


def test_directory_moved_or_trashed_takes_its_object_and_everything_below(hms, sales, fs, db):
    fs.delete(DB_PATH, skip_trash=False)          # moved to /user/hdfs/.Trash/...: a new inode key
    assert fs.exists("/user/hdfs/.Trash/Current" + DB_PATH)
    with pytest.raises(h3.NoSuchObjectException):
        hms.get_database("sales")
    assert counts(db) == {"DBS": 1, "TBLS": 0, "PARTITIONS": 0, "PARTITION_KEY_VALS": 0, "TABLE_PARAMS": 0}
    assert invariant_violations(db, owned=False) == {}   # the tables' own SDs are fsck's to clean


def test_deleting_only_the_files_keeps_the_metadata(hms, sales, fs, db):
    fs.write(f"{DB_PATH}/orders/ds=2024-01-01/h=1/part-0")
    fs.delete(f"{DB_PATH}/orders/ds=2024-01-01/h=1/part-0")
    assert len(hms.get_partitions("sales", "orders", -1)) == 4
    assert invariant_violations(db) == {}


def test_entire_warehouse_deleted_with_skip_trash(hms, sales, fs, db):
    fs.delete("/user/hive/warehouse")
    assert hms.get_all_databases() == []
    assert counts(db)["TBLS"] == 0
    assert invariant_violations(db, owned=False) == {}


# ------------------------------------------------------------------- atomicity
@pytest.mark.parametrize("module, function", [
    ("hopshive.metastore.stores.mysql.databases", "insert_location_sd"),
    ("hopshive.metastore.stores.mysql.tables", "insert_sd"),
    ("hopshive.metastore.stores.mysql.partitions", "insert_sds"),
])
def test_failure_between_directory_and_metadata_leaves_neither(hms, fs, db, monkeypatch, module, function):
    import importlib
    target = importlib.import_module(module)
    t = table("default", "atomic", parts=("ds string",))
    if "partitions" in module:
        hms.create_table(t)
    before = counts(db)

    def boom(*args, **kwargs):
        raise RuntimeError("injected failure after the directory was made")
    monkeypatch.setattr(target, function, boom)
    with pytest.raises(h3.MetaException, match="Internal error"):
        if "databases" in module:
            hms.create_database(api.Database(name="atomic", locationUri=None, parameters={}))
        elif "tables" in module:
            hms.create_table(t)
        else:
            hms.add_partition(partition(t, ["x"]))
    assert counts(db) == before
    assert not fs.exists("/user/hive/warehouse/atomic.db")
    assert not fs.exists("/user/hive/warehouse/atomic/ds=x")
    assert fs.exists("/user/hive/warehouse/atomic") == ("partitions" in module)
    assert invariant_violations(db) == {}


def test_external_table_location_must_exist(hms, db):
    with pytest.raises(h3.InvalidObjectException, match="does not exist"):
        hms.create_table(table("default", "ext", location=f"{WAREHOUSE}/nowhere", external=True))
    with pytest.raises(h3.InvalidObjectException, match="outside the HopsHive namespace"):
        hms.create_table(table("default", "m", location="file:///tmp/elsewhere"))
    hms.create_table(table("default", "s3", location="s3a://bucket/key", external=True))
    with db.transaction() as tx:
        assert tx.query_one("SELECT s.PARTITION_ID FROM metastore.SDS s JOIN metastore.TBLS t ON t.SD_ID=s.SD_ID"
                            " WHERE t.TBL_NAME='s3'") == (None,)


# ---------------------------------------------------------------------- rename
def test_rename_moves_the_directory_and_repoints_everything(hms, sales, fs, db):
    hms.create_database(api.Database(name="other", locationUri=None, parameters={}))
    renamed = hms.get_table("sales", "orders")
    renamed.dbName, renamed.tableName = "other", "orders2"
    hms.alter_table_with_environment_context("sales", "orders", renamed, api.EnvironmentContext({}))
    new_root = "/user/hive/warehouse/other.db/orders2"
    assert not fs.exists(f"{DB_PATH}/orders") and fs.exists(f"{new_root}/ds=2024-01-02/h=2")
    got = hms.get_table("other", "orders2")
    assert got.sd.location == f"{WAREHOUSE}/other.db/orders2"
    assert {p.sd.location for p in hms.get_partitions("other", "orders2", -1)} == {
        f"{WAREHOUSE}/other.db/orders2/ds={d}/h={h}" for d in ("2024-01-01", "2024-01-02") for h in (1, 2)}
    assert invariant_violations(db) == {}
    fs.delete(new_root)   # the new directory is linked: deleting it takes the table
    with pytest.raises(h3.NoSuchObjectException):
        hms.get_table("other", "orders2")


def test_rename_partition_moves_its_directory(hms, sales, fs, db):
    new = hms.get_partition("sales", "orders", ["2024-01-01", "1"])
    new.values = ["2024-01-09", "1"]
    hms.rename_partition("sales", "orders", ["2024-01-01", "1"], new)
    assert fs.exists(f"{DB_PATH}/orders/ds=2024-01-09/h=1")
    assert not fs.exists(f"{DB_PATH}/orders/ds=2024-01-01/h=1")
    got = hms.get_partition_by_name("sales", "orders", "ds=2024-01-09/h=1")
    assert got.sd.location.endswith("/orders/ds=2024-01-09/h=1")
    assert invariant_violations(db) == {}


# ------------------------------------------------------------------ concurrency
def test_concurrent_partition_adds_rename_and_drop_serialise(metastore, hms, db, fs):
    t = table("default", "busy", parts=("p int",))
    hms.create_table(t)
    added, errors = [], []

    def adder(first):
        with thrift_client(metastore.port) as client:
            for value in range(first, first + 20):
                try:
                    client.add_partition(partition(t, [str(value)]))
                    added.append(value)
                except h3.InvalidObjectException:   # Hive's answer when the table is gone
                    pass
                except Exception as exc:  # noqa: BLE001
                    errors.append(exc)

    def renamer():
        with thrift_client(metastore.port) as client:
            new = client.get_table("default", "busy")
            new.tableName = "busy2"
            client.alter_table("default", "busy", new)

    threads = [threading.Thread(target=adder, args=(i * 100,)) for i in range(3)] + [threading.Thread(target=renamer)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert errors == []
    names = hms.get_partition_names("default", "busy2", -1)
    assert sorted(int(n.split("=")[1]) for n in names) == sorted(added)
    for part in hms.get_partitions("default", "busy2", -1):
        assert "/busy2/" in part.sd.location and fs.exists(part.sd.location.split("127.0.0.1:1")[1])
    assert invariant_violations(db) == {}

    def dropper():
        try:
            with thrift_client(metastore.port) as client:
                client.drop_table("default", "busy2", True)
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    t.tableName = "busy2"
    threads = [threading.Thread(target=adder, args=(1000,)), threading.Thread(target=dropper)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert errors == []
    with pytest.raises(h3.NoSuchObjectException):
        hms.get_table("default", "busy2")
    assert not fs.exists("/user/hive/warehouse/busy2")
    assert invariant_violations(db) == {}
