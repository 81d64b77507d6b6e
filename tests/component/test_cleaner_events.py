"""The cleaner's event path on the private MariaDB: every row of the thesis's Table 3.1 done
through the namespace library, cleaned by the binlog events alone (no sweep at start); an
event removes only what it orphaned (no catalog-wide scan); and a CREATE racing the cleaner
for a column descriptor in the order the existing race test does not cover."""

from __future__ import annotations

import threading

import pytest

from hopshive.core.db import DriverError, error_code
from hopshive.metastore.orphans import ORPHAN_CD, repair_ids
from hopshive.namespace.inodes import partition_id
from tests.component.test_metastore_schema import Catalog, count, world  # noqa: F401 (fixture)
from tests.support.cleaner import (account, binlog_position, orphans, reached, running,  # noqa: F401
                                   wait_leader, wait_no_orphans, wait_tailing)
from tests.support.polling import wait_until

pytestmark = pytest.mark.cleaner
FK_NO_PARENT = 1452


def counts(db) -> dict[str, int]:
    with db.transaction() as tx:
        return {table: count(tx, table) for table in ("DBS", "TBLS", "PARTITIONS", "SDS", "CDS", "SERDES")}


def test_every_row_of_table_3_1_by_events_alone(db, world, namespace, running):
    """One instance, no sweep: each file-system action is followed only through the binlog.
    Lags are printed, never asserted."""
    with db.transaction() as tx:   # a third database, for the warehouse row at the end
        cat = Catalog(tx)
        cat._ids = iter(range(30_000, 31_000))
        extra = cat.mkdir(world.dirs["warehouse"], "extra.db")
        extra_db = cat.database("extra", extra)
        table = cat.table(extra_db, "t", cat.mkdir(extra, "t"), keys=("p",))
        cat.partition(table, {"p": "1"}, cat.mkdir(table.dir, "p=1"))
        kept = world.dirs["ds=2024-01-01/h=2"].id   # a data file in a partition
        tx.execute("INSERT INTO hops.hdfs_inodes (partition_id, parent_id, name, id, permission, is_dir)"
                   " VALUES (%s, %s, 'part-0', 30999, 420, 0)", (partition_id(kept, "part-0"), kept))
    service = running(sweep_at_start=False)
    wait_leader(db)
    wait_tailing(db)
    assert orphans(db) == {}
    hdfs = namespace.caller("hdfs")
    orders = "/warehouse/sales.db/orders"
    rows = [
        ("only the files of a partition deleted", lambda: namespace.delete(hdfs, f"{orders}/ds=2024-01-01/h=2/part-0",
                                                                          recursive=False),
         {"PARTITIONS": 0, "TBLS": 0}),
        ("partition directory moved", lambda: namespace.rename(hdfs, f"{orders}/ds=2024-01-01/h=1",
                                                               "/user/hive/.Trash/h1"),
         {"PARTITIONS": -1}),
        ("partition directory deleted, skipTrash", lambda: namespace.delete(hdfs, f"{orders}/ds=2024-01-02",
                                                                           recursive=True),
         {"PARTITIONS": -1}),
        ("table directory moved", lambda: namespace.rename(hdfs, "/warehouse/sales.db/customers",
                                                           "/user/hive/.Trash/customers"),
         {"TBLS": -1}),
        ("table directory deleted, skipTrash", lambda: namespace.delete(hdfs, "/warehouse/sales.db/lines",
                                                                       recursive=True),
         {"TBLS": -1}),
        ("database directory moved to the trash", lambda: namespace.delete(hdfs, "/warehouse/sales.db",
                                                                          recursive=True, skip_trash=False),
         {"DBS": -1, "TBLS": -3, "PARTITIONS": -1}),   # orders (its last partition), index table, view
        ("database directory deleted, skipTrash", lambda: namespace.delete(hdfs, "/warehouse/other.db",
                                                                          recursive=True),
         {"DBS": -1, "TBLS": -1}),
        ("warehouse deleted by the superuser, skipTrash", lambda: namespace.delete(hdfs, "/warehouse", recursive=True),
         {"DBS": -1, "TBLS": -1, "PARTITIONS": -1}),
    ]
    for what, action, changes in rows:
        before = counts(db)
        assert action(), what
        seconds = wait_no_orphans(db)
        after = counts(db)
        print(f"\ncleaner, {what}: no orphan {seconds * 1000:.0f} ms after the action")
        assert {k: after[k] - before[k] for k in changes} == changes, what
    assert counts(db)["DBS"] == 0 and service.metrics.sweeps == 0


def test_an_event_removes_only_what_it_orphaned(db, world, running):
    """Orphans that existed before the cleaner started (no sweep at start) are not an
    event's business: only what the deleted directory left goes; a sweep takes the rest."""
    with db.transaction() as tx:
        tx.execute("INSERT INTO metastore.CDS () VALUES ()")
        stray_cd = tx.lastrowid
        tx.execute("INSERT INTO metastore.SERDES (SLIB) VALUES ('stray')")
        stray_serde = tx.lastrowid
    running(sweep_at_start=False)
    wait_leader(db)
    wait_tailing(db)
    customers = world.tables["customers"]
    with db.transaction() as tx:   # `hdfs dfs -rm -r -skipTrash .../customers`, straight in SQL
        tx.execute("DELETE FROM hops.hdfs_inodes WHERE id=%s", (customers.dir.id,))
    target = binlog_position(db)
    wait_until(lambda: reached(db, target), 30, lambda _: "the cleaner did not handle the delete")
    with db.transaction() as tx:
        assert count(tx, "CDS", "CD_ID=%s", customers.cd) == 0      # the event's orphans went
        assert count(tx, "CDS", "CD_ID=%s", stray_cd) == 1          # the others stayed
        assert count(tx, "SERDES", "SERDE_ID=%s", stray_serde) == 1
    assert orphans(db) == {"orphan_cd": 1, "orphan_serde": 1}


def test_a_create_waiting_for_a_column_descriptor_the_cleaner_holds_fails_cleanly(db, world):
    """The reverse of test_cleaner's race: the cleaner locks a CD first (the customers table's,
    orphaned by its directory delete), then a CREATE tries to attach it.  The CREATE waits
    on the cleaner's row lock; when the cleaner commits the delete, the CREATE's foreign-key
    check fails (no dangling reference is possible) and the CREATE, retried with a CD of its
    own, succeeds."""
    customers = world.tables["customers"]
    with db.transaction() as tx:
        tx.execute("DELETE FROM hops.hdfs_inodes WHERE id=%s", (customers.dir.id,))
        tx.execute("DELETE FROM metastore.SDS WHERE CD_ID=%s", (customers.cd,))   # nothing uses the CD now
    outcome: dict = {}
    locked = threading.Event()

    def create() -> None:
        locked.wait(30)
        try:
            with db.transaction() as tx:
                tx.execute("INSERT INTO metastore.SDS (CD_ID, LOCATION) VALUES (%s, 'late')", (customers.cd,))
                outcome["created"] = tx.lastrowid
        except DriverError as exc:
            outcome["error"] = error_code(exc)
    creator = threading.Thread(target=create)
    creator.start()
    with db.transaction() as cleaner:   # the cleaner's delete transaction, held open
        assert repair_ids(cleaner, ORPHAN_CD, [customers.cd], 0) == [customers.cd]
        locked.set()
        wait_until(lambda: db.run(lambda tx: tx.query_one(
            "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'")[0]), 30,
            lambda _: "the CREATE never waited for the cleaner's lock")
        assert outcome == {}   # blocked while the cleaner's transaction is open
    creator.join(30)
    assert outcome == {"error": FK_NO_PARENT}, outcome
    with db.transaction() as tx:       # nothing points at the deleted CD; the retry makes its own
        assert count(tx, "CDS", "CD_ID=%s", customers.cd) == 0
        assert count(tx, "SDS", "CD_ID=%s", customers.cd) == 0
        tx.execute("INSERT INTO metastore.CDS () VALUES ()")
        tx.execute("INSERT INTO metastore.SDS (CD_ID, LOCATION) VALUES (%s, 'late')", (tx.lastrowid,))
        assert tx.query_one("SELECT COUNT(*) FROM metastore.SDS s LEFT JOIN metastore.CDS c ON c.CD_ID = s.CD_ID"
                            " WHERE s.CD_ID IS NOT NULL AND c.CD_ID IS NULL")[0] == 0
