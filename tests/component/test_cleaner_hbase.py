"""The cleaner keeps the HBase store's metadata with its directories (issue #10, requirement
6): every row of the thesis's Table 3.1 done through the namespace library under an
in-thread metastore on the HBase store, followed by binlog events alone (no sweep at
start), each ending with the store consistent (fsck-hbase finds nothing); and a rename by
the metastore itself, whose directory moves too, is never taken for a lost directory.
Lags are printed, never asserted."""

from __future__ import annotations

import time

import pytest

from hopshive.metastore.locations import Locations
from hopshive.metastore.stores.hbase import fsck as hbase_fsck, moves
from hopshive.namespace.inodes import partition_id
from tests.support.cleaner import (account, binlog_position, reached, running, wait_leader,  # noqa: F401
                                   wait_tailing)
from tests.support.hms import database
from tests.support.metastore_fixtures import hbase_server, hms, metastore, partition, table  # noqa: F401
from tests.support.polling import wait_until

pytestmark = pytest.mark.cleaner
PARTS = [("2024-01-01", "1"), ("2024-01-01", "2"), ("2024-01-02", "1")]


@pytest.fixture
def store_backend():
    return "hbase"


def state(hms) -> dict:
    """What the store holds: databases, then db.table -> partition names."""
    found = {}
    for name in hms.get_all_databases():
        found[name] = {t: sorted(hms.get_partition_names(name, t, -1)) for t in hms.get_all_tables(name)}
    return found


def consistent(metastore, db) -> dict:
    """fsck-hbase's findings, by kind: nothing without its directory, no unreferenced row."""
    ms = metastore.config["metastore"]
    return hbase_fsck.find(metastore.store, db, Locations(ms["namespace_uris"], ms["warehouse"])).counts()


def test_every_row_of_table_3_1_on_the_hbase_store(db, metastore, hms, namespace, running, hbase_server):
    ms = metastore.config["metastore"]
    root = ms["warehouse"].rsplit("/user/", 1)[0]
    scratch = f"{root}/scratch/warehouse"   # a warehouse of its own, for the last row
    hdfs = namespace.caller("hdfs")
    namespace.mkdirs(hdfs, "/scratch/warehouse", 0o777)
    namespace.mkdirs(hdfs, "/trash")
    for name, location in (("sales", None), ("other", None), ("extra", f"{scratch}/extra.db")):
        hms.create_database(database(name, location))
    orders = table("sales", "orders", parts=("ds string", "h int"))
    hms.create_table(orders)
    hms.add_partitions([partition(hms.get_table("sales", "orders"), values) for values in PARTS])
    for db_name, name in (("sales", "customers"), ("sales", "lines"), ("sales", "renamed_by_hive"),
                          ("other", "events")):
        hms.create_table(table(db_name, name))
    extra = table("extra", "t", parts=("p int",))
    hms.create_table(extra)
    hms.add_partitions([partition(hms.get_table("extra", "t"), ["1"])])
    warehouse = Locations(ms["namespace_uris"], ms["warehouse"]).parse(ms["warehouse"]).path
    sales = f"{warehouse}/sales.db"
    with db.transaction() as tx:   # a data file in a partition directory
        kept = tx.query_one("SELECT id FROM hops.hdfs_inodes WHERE name='h=2'")[0]
        tx.execute("INSERT INTO hops.hdfs_inodes (partition_id, parent_id, name, id, permission, is_dir)"
                   " VALUES (%s, %s, 'part-0', 990001, 420, 0)", (partition_id(kept, "part-0"), kept))
    hbase = {"enabled": True, "host": "127.0.0.1", "port": hbase_server.port,
             "table_prefix": metastore.config["hbase"]["table_prefix"], "namespace_uris": ms["namespace_uris"],
             "warehouse": ms["warehouse"]}
    service = running(sweep_at_start=False, hbase_store=hbase)
    wait_leader(db)
    wait_tailing(db)
    assert consistent(metastore, db) == {}

    def rename_by_hive() -> bool:
        renamed = hms.get_table("sales", "renamed_by_hive")
        renamed.tableName = "renamed"
        hms.alter_table("sales", "renamed_by_hive", renamed)
        return True

    def expect(db_name: str, tables: dict | None):
        def changed(found: dict) -> dict:
            if tables is None:
                found.pop(db_name, None)
            else:
                found[db_name] = tables
            return found
        return changed
    p = "ds=2024-01-01/h=1", "ds=2024-01-01/h=2", "ds=2024-01-02/h=1"
    rows = [
        ("a table renamed by Hive (its directory moves too)", rename_by_hive,
         lambda s: expect("sales", {**{k: v for k, v in s["sales"].items() if k != "renamed_by_hive"},
                                    "renamed": []})(s)),
        ("only the files of a partition deleted",
         lambda: namespace.delete(hdfs, f"{sales}/orders/ds=2024-01-01/h=2/part-0", recursive=False), lambda s: s),
        ("partition directory moved", lambda: namespace.rename(hdfs, f"{sales}/orders/ds=2024-01-01/h=1", "/trash/h1"),
         lambda s: expect("sales", {**s["sales"], "orders": [p[1], p[2]]})(s)),
        ("partition directory deleted, skipTrash",
         lambda: namespace.delete(hdfs, f"{sales}/orders/ds=2024-01-02", recursive=True),
         lambda s: expect("sales", {**s["sales"], "orders": [p[1]]})(s)),
        ("table directory moved", lambda: namespace.rename(hdfs, f"{sales}/customers", "/trash/customers"),
         lambda s: expect("sales", {k: v for k, v in s["sales"].items() if k != "customers"})(s)),
        ("table directory deleted, skipTrash", lambda: namespace.delete(hdfs, f"{sales}/lines", recursive=True),
         lambda s: expect("sales", {k: v for k, v in s["sales"].items() if k != "lines"})(s)),
        ("database directory moved to the trash",
         lambda: namespace.delete(hdfs, sales, recursive=True, skip_trash=False), expect("sales", None)),
        ("database directory deleted, skipTrash",
         lambda: namespace.delete(hdfs, f"{warehouse}/other.db", recursive=True), expect("other", None)),
        ("warehouse deleted by the superuser, skipTrash",
         lambda: namespace.delete(hdfs, "/scratch/warehouse", recursive=True), expect("extra", None)),
    ]
    for what, action, after in rows:
        wanted = after(state(hms))
        assert action(), what
        started = time.monotonic()
        target = binlog_position(db)
        wait_until(lambda: reached(db, target) and state(hms) == wanted, 30,
                   lambda _: f"{what}: the store holds {state(hms)}, expected {wanted}")
        print(f"\ncleaner, HBase store, {what}: settled {(time.monotonic() - started) * 1000:.0f} ms after the action")
        assert consistent(metastore, db) == {}, what
    assert state(hms) == {"default": {}} and service.metrics.sweeps == 0
    assert service.metrics.removed == {"hbase_partition": 2, "hbase_table": 2, "hbase_database": 3}


def test_a_sweep_during_a_rename_leaves_the_new_place_alone(db, metastore, hms, hbase_server, monkeypatch):
    """The race of the cluster CI run: a sweep between a partition rename's HBase rows and
    its directory move's commit saw the new partition without its directory and dropped it.
    The sweep here runs at exactly that point, inside the rename."""
    ms = metastore.config["metastore"]
    locations = Locations(ms["namespace_uris"], ms["warehouse"])
    hms.create_database(database("mv"))
    hms.create_table(table("mv", "h", parts=("ds string",)))
    hms.add_partitions([partition(hms.get_table("mv", "h"), ["b"])])
    store, seen = metastore.store, []
    release = store._release_sd

    def sweep_mid_move(t, digest):
        report = hbase_fsck.without_directory(store, db, locations)
        seen.append((report.counts(), [f.what for f in hbase_fsck.drop_without_directory(store, report, db,
                                                                                         locations)]))
        release(t, digest)
    monkeypatch.setattr(store, "_release_sd", sweep_mid_move)
    renamed = hms.get_partition("mv", "h", ["b"])
    renamed.values = ["bb"]
    hms.rename_partition("mv", "h", ["b"], renamed)
    monkeypatch.undo()
    assert seen == [({"partition without directory": 1}, [])]
    assert hms.get_partition_names("mv", "h", -1) == ["ds=bb"]
    assert consistent(metastore, db) == {}
    assert db.run(moves.in_flight, readonly=True) == []


def test_a_move_abandoned_by_a_dead_metastore_is_forgotten(db):
    with db.transaction() as tx:
        tx.execute(f"INSERT INTO {moves.TABLE} (LOCATION, STARTED_AT) VALUES ('webhdfs://nn/w/old', NOW(3) - "
                   f"INTERVAL {moves.ABANDONED_AFTER_SECONDS + 1} SECOND)")
        recent = moves.begin(tx, "webhdfs://nn/w/recent")
    assert db.run(moves.in_flight, readonly=True) == ["webhdfs://nn/w/recent"]
    assert db.run(moves.forget_abandoned) == 1
    db.run(lambda tx: moves.end(tx, [recent]))
    assert db.run(moves.in_flight, readonly=True) == []
