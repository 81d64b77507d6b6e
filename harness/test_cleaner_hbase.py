"""The deployed cleaner keeps the HBase store's metadata with its directories (issue #10,
requirement 6): every row of the thesis's Table 3.1 done through WebHDFS under a database of
the metastore instance on the HBase store (local: 127.0.0.1:9085), and the store then
holding exactly what the namespace still has.  The HBase store has no foreign keys: what
goes, the cleaner drops on the directory's binlog event.  Each row prints how long it took;
nothing asserts timing."""

from __future__ import annotations

import contextlib
import time

import pytest
from pymetastore.hive_metastore.ttypes import NoSuchObjectException

from harness.support import metastore as ms
from harness.test_cleaner import DEADLINE, cleaner, warehouse_deleted  # noqa: F401 (fixture)
from harness.test_metastore_hbase import hbase_metastores  # noqa: F401 (fixture)
from tests.support.hms import database, partition, table
from tests.support.polling import wait_until

pytestmark = pytest.mark.metastore
PARTS = [("2024-01-01", "1"), ("2024-01-01", "2"), ("2024-01-02", "1"), ("2024-01-02", "2")]
ORDERS = [f"ds={d}/h={h}" for d, h in PARTS]


@pytest.fixture
def hbase_hive(hbase_metastores, scratch, targets):
    """A client of the first HBase-store instance; this scenario's databases there dropped after."""
    with ms.client(hbase_metastores[0], targets.user) as client:
        yield client
    ms.drop_databases(hbase_metastores[0], targets.user, scratch.prefix)


@pytest.fixture
def hb_sales(hbase_hive, scratch, targets):
    """<prefix>hb in <scratch>/hb.db with `orders` (ds, h: four partitions) and `customers`."""
    name = f"{scratch.prefix}hb"
    hbase_hive.create_database(database(name, f"{scratch.uri}/hb.db"))
    orders = table(name, "orders", parts=("ds string", "h int"), owner=targets.user)
    hbase_hive.create_table(orders)
    hbase_hive.add_partitions([partition(orders, values) for values in PARTS])
    hbase_hive.create_table(table(name, "customers", owner=targets.user))
    return name, f"{scratch.path}/hb.db"


def holds(hive, prefix: str) -> dict:
    """This scenario's databases on the store: name -> {table: partition names}.  A database
    or table the cleaner drops between the listing and the next call is left out: it is gone."""
    found = {}
    for name in hive.get_all_databases():
        if not name.startswith(prefix):
            continue
        with contextlib.suppress(NoSuchObjectException):
            tables = {}
            for t in hive.get_all_tables(name):
                with contextlib.suppress(NoSuchObjectException):
                    tables[t] = sorted(hive.get_partition_names(name, t, -1))
            found[name] = tables
    return found


# (what, action(webhdfs, scratch path, database directory) -> bool, what the database holds
# afterwards ({table: partitions}; None: the database is gone))
ROWS = {
    "only the files of a partition deleted": (
        lambda w, s, d: (w.write(f"{d}/orders/{ORDERS[0]}/part-0", b"1") or True)
        and w.delete(f"{d}/orders/{ORDERS[0]}/part-0", skiptrash=True), {"orders": ORDERS, "customers": []}),
    "partition directory moved": (
        lambda w, s, d: w.rename(f"{d}/orders/{ORDERS[0]}", f"{s}/moved-partition"),
        {"orders": ORDERS[1:], "customers": []}),
    "partition directory deleted, skipTrash": (
        lambda w, s, d: w.delete(f"{d}/orders/{ORDERS[3]}", skiptrash=True), {"orders": ORDERS[:3], "customers": []}),
    "table directory moved": (lambda w, s, d: w.rename(f"{d}/customers", f"{s}/customers-moved"), {"orders": ORDERS}),
    "table directory deleted, skipTrash": (
        lambda w, s, d: w.delete(f"{d}/orders", recursive=True, skiptrash=True), {"customers": []}),
    "database directory moved": (lambda w, s, d: w.rename(d, f"{s}/elsewhere.db"), None),
    "database directory deleted, skipTrash": (lambda w, s, d: w.delete(d, recursive=True, skiptrash=True), None),
}


def settle(hive, prefix: str, wanted: dict, what: str) -> None:
    started = time.monotonic()
    wait_until(lambda: holds(hive, prefix) == wanted, DEADLINE,
               lambda _: f"{what}: the HBase store holds {holds(hive, prefix)}, expected {wanted}")
    print(f"\ncleaner, HBase store: {what}: settled {(time.monotonic() - started) * 1000:.0f} ms after the action")


@pytest.mark.parametrize("what", ROWS)
def test_table_3_1_on_the_hbase_store(what, cleaner, hbase_hive, hb_sales, webhdfs, scratch):
    name, db_path = hb_sales
    action, tables = ROWS[what]
    assert action(webhdfs, scratch.path, db_path), what
    settle(hbase_hive, scratch.prefix, {} if tables is None else {name: tables}, what)


def test_database_directory_moved_to_the_trash_on_the_hbase_store(cleaner, hbase_hive, hb_sales, webhdfs, scratch,
                                                                  targets):
    name, db_path = hb_sales
    trashed = f"/user/{targets.user}/.Trash/Current{db_path}"
    webhdfs.delete(trashed, recursive=True)
    try:
        assert webhdfs.delete(db_path, recursive=True, skiptrash=False)
        settle(hbase_hive, scratch.prefix, {}, "database directory moved to the trash")
    finally:
        webhdfs.delete(trashed, recursive=True)


def test_warehouse_deleted_by_the_superuser_on_the_hbase_store(cleaner, hbase_hive, scratch, targets):
    warehouse_deleted(hbase_hive, scratch, targets, "hbw")
    settle(hbase_hive, scratch.prefix, {}, "warehouse deleted by the superuser")


def test_a_rename_by_hive_keeps_its_table(cleaner, hbase_hive, hb_sales, webhdfs, scratch):
    """The metastore moves the directory itself: the cleaner sees the move and must not take
    the table for one whose directory was lost."""
    name, db_path = hb_sales
    renamed = hbase_hive.get_table(name, "orders")
    renamed.tableName = "orders2"
    hbase_hive.alter_table(name, "orders", renamed)
    assert webhdfs.status(f"{db_path}/orders2/{ORDERS[3]}") is not None
    assert webhdfs.rename(f"{db_path}/customers", f"{scratch.path}/customers-gone")   # a real loss beside it
    settle(hbase_hive, scratch.prefix, {name: {"orders2": ORDERS}}, "a rename by Hive beside a lost directory")
