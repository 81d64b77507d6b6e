"""hopshive-cleaner on the private MariaDB (ROW binlog, GTIDs): orphans left by directory
deletes and moves behind the metastore's back disappear promptly, nothing referenced goes,
and the work survives restarts and leader failover.  Every instance runs as the deployed
account with exactly the mysql_cluster role's grants (``account``).  Latencies are printed
(-s), never asserted."""

from __future__ import annotations

import itertools
import json
import time
import urllib.request

import pytest
import yaml

from hopshive.cleaner.cli import main as cli_main
from hopshive.cleaner.exceptions import Fenced
from hopshive.cleaner.lease import Lease
from hopshive.cleaner.positions import load
from hopshive.cleaner.scratch import NamespaceRemover, collect
from hopshive.core.db import Database
from hopshive.metastore.orphans import ORPHAN_CD, ORPHAN_SERDE
from tests.component.test_metastore_schema import Catalog, count, move_inode, world  # noqa: F401 (fixture)
from tests.support.cleaner import (CleanerProcess, account, binlog_position, cleaner_config,  # noqa: F401
                                   lease_holder, orphans, reached, running, wait_leader, wait_no_orphans,
                                   wait_tailing)
from tests.support.invariants import inode_id
from tests.support.polling import wait_until

pytestmark = pytest.mark.cleaner


def test_table_directory_deleted_behind_the_metastore(db, world, running):
    service = running()
    wait_leader(db)
    wait_tailing(db)
    assert orphans(db) == {}
    with db.transaction() as tx:  # `hdfs dfs -rm -r -skipTrash /warehouse/sales.db/orders`, straight in SQL
        tx.execute("DELETE FROM hops.hdfs_inodes WHERE id=%s", (world.dirs["orders"].id,))
    started = time.monotonic()
    seconds = wait_no_orphans(db)
    print(f"\ncleanup lag, table directory deleted: {seconds * 1000:.0f} ms (poll interval <= 250 ms)")
    with db.transaction() as tx:
        assert count(tx, "TBLS", "TBL_ID=%s", world.tables["orders"].id) == 0
        assert count(tx, "TBLS", "TBL_ID=%s", world.tables["index_table"].id) == 0  # its directory was deleted
        assert count(tx, "TBLS", "TBL_ID=%s", world.tables["customers"].id) == 1
        assert count(tx, "CDS", "CD_ID=%s", world.tables["orders"].cd) == 0
    removed = service.metrics.removed
    # 3 partitions and the index (went with its base table); the index table by its directory
    assert removed.get("orphan_sd") == 4 and removed.get("orphan_index_table") == 1, removed
    assert time.monotonic() - started < 60


def test_database_moved_to_the_trash(db, world, running):
    running()
    wait_leader(db)
    wait_tailing(db)
    with db.transaction() as tx:
        move_inode(tx, world.dirs["sales"], world.dirs["trash"], "sales.db")
    seconds = wait_no_orphans(db)
    print(f"\ncleanup lag, database directory moved to the trash: {seconds * 1000:.0f} ms")
    with db.transaction() as tx:
        assert count(tx, "SDS") == 2  # database `other` and its table: untouched
        assert count(tx, "TBLS", "TBL_ID=%s", world.tables["events"].id) == 1


def test_a_column_descriptor_being_attached_survives(db, world, running):
    """A CREATE that attaches the CD and serde of a table whose directory is being deleted:
    the cleaner sees them unreferenced (the CREATE has not committed) but its row locks skip
    them, and the CREATE's foreign keys keep them."""
    service = running()
    wait_leader(db)
    wait_tailing(db)
    customers = world.tables["customers"]
    serde = db.run(lambda tx: tx.query_one("SELECT SERDE_ID FROM metastore.SDS WHERE SD_ID=%s", (customers.sd,))[0])
    with db.transaction() as create:
        # The CREATE's first statement: a new SD over `other.db` reusing the CD and serde.
        create.execute("INSERT INTO metastore.SDS (CD_ID, SERDE_ID, LOCATION) VALUES (%s, %s, 'late')",
                       (customers.cd, serde))
        late_sd = create.lastrowid
        with db.transaction() as tx:  # meanwhile the customers directory goes
            tx.execute("DELETE FROM hops.hdfs_inodes WHERE id=%s", (world.dirs["customers"].id,))
        target = binlog_position(db)
        wait_until(lambda: reached(db, target), 30, lambda _: "the cleaner did not handle the delete")
        # It did look at them (so the test can fail), and left them.
        assert service.metrics.found.get(ORPHAN_CD, 0) >= 1 and service.metrics.found.get(ORPHAN_SERDE, 0) >= 1
        create.execute("INSERT INTO metastore.TBLS (CREATE_TIME, DB_ID, SD_ID, TBL_NAME) VALUES (1, %s, %s, 'late')",
                       (world.dbs["other"], late_sd))
    with db.transaction() as tx:
        assert count(tx, "CDS", "CD_ID=%s", customers.cd) == 1
        assert count(tx, "SERDES", "SERDE_ID=%s", serde) == 1
    assert orphans(db) == {}


def test_sweep_catches_what_happened_before_start(db, world, running):
    with db.transaction() as tx:
        move_inode(tx, world.dirs["sales"], world.dirs["trash"], "sales.db")
        tx.execute("DELETE FROM hops.hdfs_inodes WHERE id=%s", (world.dirs["events"].id,))
    assert orphans(db)
    running()
    wait_no_orphans(db)


def test_restart_resumes_from_the_stored_position(db, world, account, tmp_path):
    """No sweep at start: only the stored GTID can bring the cleaner to what happened while
    it was down."""
    config = cleaner_config(account, tmp_path, "solo", sweep_at_start=False)
    process = CleanerProcess(config, tmp_path).start()
    try:
        wait_leader(db)
        wait_tailing(db)
        assert process.terminate() == 0, process.log_tail()
        assert lease_holder(db) is None  # SIGTERM released the lease at once
        with db.transaction() as tx:
            move_inode(tx, world.dirs["sales"], world.dirs["trash"], "sales.db")
        time.sleep(0.5)
        assert orphans(db)
        process = CleanerProcess(config, tmp_path).start()
        wait_no_orphans(db)
    finally:
        process.terminate()


def test_leader_killed_follower_continues_from_the_stored_position(db, world, account, tmp_path):
    instances = {name: CleanerProcess(cleaner_config(account, tmp_path, name, sweep_at_start=False),
                                      tmp_path).start() for name in ("one", "two")}
    try:
        leader = wait_leader(db)
        wait_tailing(db)
        instances[leader].kill()
        killed_at = time.monotonic()
        with db.transaction() as tx:  # while nobody leads
            move_inode(tx, world.dirs["sales"], world.dirs["trash"], "sales.db")
        follower = next(name for name in instances if name != leader)
        wait_until(lambda: lease_holder(db) == follower, 30, lambda _: f"{follower} did not take over")
        seconds = wait_no_orphans(db)
        print(f"\nfailover: orphans gone {time.monotonic() - killed_at:.1f} s after kill -9 of the leader "
              f"(lease 3 s), {seconds:.1f} s after the move")
        epochs = db.run(lambda tx: tx.query_one("SELECT EPOCH FROM metastore.CLEANER_POSITION"))[0]
        assert epochs >= 2  # written by the second leader
    finally:
        for process in instances.values():
            if process.process.poll() is None:
                assert process.terminate() == 0, process.log_tail()


def test_burst_of_moves_all_cleaned(db, world, running):
    """Many directory moves in a row: every one's orphans go."""
    running()
    wait_leader(db)
    wait_tailing(db)
    tables = []
    with db.transaction() as tx:
        cat = Catalog(tx)
        cat._ids = itertools.count(10_000)  # inode ids after the world's
        for n in range(50):
            directory = cat.mkdir(world.dirs["other"], f"t{n}")
            tables.append(directory)
            cat.table(world.dbs["other"], f"t{n}", directory)
    with db.transaction() as tx:
        base = tx.query_one("SELECT COUNT(*) FROM metastore.SDS")[0]
    for n, directory in enumerate(tables):
        with db.transaction() as tx:
            move_inode(tx, directory, world.dirs["trash"], f"t{n}")
    seconds = wait_no_orphans(db)
    print(f"\nburst of 50 table-directory moves: last orphan gone {seconds * 1000:.0f} ms after the last move")
    with db.transaction() as tx:
        assert tx.query_one("SELECT COUNT(*) FROM metastore.SDS")[0] == base - 50


def test_old_scratch_and_staging_directories_dry_run_then_removed(db, namespace, account, tmp_path):
    hdfs = namespace.caller("hdfs")
    old = 1_000_000  # ms since the epoch: 1970
    for path in ("/tmp/hive/alice/old-session/x", "/tmp/hive/alice/new-session", "/warehouse/t/.hive-staging_1",
                 "/warehouse/t/_temporary/0", "/warehouse/t/keep", "/elsewhere/_temporary"):
        namespace.mkdirs(hdfs, path)
    for path in ("/tmp/hive/alice/old-session", "/warehouse/t/.hive-staging_1", "/warehouse/t/_temporary",
                 "/warehouse/t/keep", "/elsewhere/_temporary"):
        namespace.set_times(hdfs, path, old, old)
    table = namespace.get_status(hdfs, "/warehouse/t")
    with db.transaction() as tx:  # /warehouse/t is a table's directory
        key = tx.query_one("SELECT partition_id, parent_id, name FROM hops.hdfs_inodes WHERE id=%s", (table.file_id,))
        tx.execute("INSERT INTO metastore.SDS (PARTITION_ID, PARENT_ID, NAME, LOCATION) VALUES (%s, %s, %s, 'x')",
                   key)
    cleaner_db = Database(account)   # the namespace library as the cleaner's account
    remover = NamespaceRemover(cleaner_db, {"dead_after_seconds": 30, "superuser": "hdfs",
                                            "supergroup": "supergroup", "data_dir": str(tmp_path / "cleaner")}, "test")
    garbage = ["/tmp/hive/alice/old-session", "/warehouse/t/.hive-staging_1", "/warehouse/t/_temporary"]
    kept = ["/tmp/hive/alice/new-session", "/warehouse/t/keep", "/elsewhere/_temporary"]
    try:
        args = (["/tmp/hive"], [".hive-staging*", "_temporary"], 86400.0)
        assert collect(cleaner_db, remover, *args, dry_run=True, fence=lambda tx: 1) == 0
        assert all(inode_id(db, path) for path in garbage + kept)  # dry run: nothing deleted
        assert collect(cleaner_db, remover, *args, dry_run=False, fence=lambda tx: 1) == 3
        assert [path for path in garbage if inode_id(db, path)] == []
        assert all(inode_id(db, path) for path in kept)
    finally:
        remover.close()
        cleaner_db.close()


def test_position_older_than_the_oldest_binlog_sweeps_then_tails(db, world, running):
    with db.transaction() as tx:
        move_inode(tx, world.dirs["sales"], world.dirs["trash"], "sales.db")
    def purged(tx) -> bool:
        """Rotate and purge; MariaDB keeps a log until its binlog checkpoint passes it."""
        tx.execute("FLUSH BINARY LOGS")
        current = tx.query("SHOW MASTER STATUS")[0][0]
        tx.execute(f"PURGE BINARY LOGS TO '{current}'")
        return [row[0] for row in tx.query("SHOW BINARY LOGS")] == [current]
    # the binlog holding that move (and everything before) is gone
    wait_until(lambda: db.run(purged), 30, lambda _: "the old binary logs were not purged")
    db.run(lambda tx: tx.execute("INSERT INTO metastore.CLEANER_POSITION (NAME, GTID, EPOCH, UPDATED_AT)"
                                 " VALUES ('cleaner', '0-1-1', 0, NOW(3))"))
    service = running(sweep_at_start=False)
    wait_no_orphans(db)  # the sweep after the lost position
    wait_until(lambda: service.metrics.sweeps >= 1, 30, lambda _: "no sweep ran")
    with db.transaction() as tx:  # and tailing goes on from the server's position
        tx.execute("DELETE FROM hops.hdfs_inodes WHERE id=%s", (world.dirs["events"].id,))
    wait_no_orphans(db)
    stored = db.run(lambda tx: load(tx, "cleaner"))[0]
    assert stored.sequence(0) > 1


def test_a_leader_that_cannot_renew_stops_before_its_lease_expires(db):
    """Fencing: the local deadline ends acting `margin` seconds before the database would
    let another instance take over, and the epoch check refuses a deposed leader's writes."""
    now = [1000.0]
    first = Lease(db, "fence-test", "first", lease_seconds=3.0, margin_seconds=1.0, clock=lambda: now[0])
    assert first.acquire_or_renew() and first.valid()
    assert db.run(first.fence) == first.epoch
    now[0] += 2.1  # renewals failed for 2.1 s: the database still names `first` for ~0.9 s more
    assert not first.valid()
    assert lease_holder(db, "fence-test") == "first"
    with pytest.raises(Fenced):
        db.run(first.fence)
    second = Lease(db, "fence-test", "second", lease_seconds=3.0, margin_seconds=1.0)
    assert not second.acquire_or_renew()  # not before the lease expires in the database
    db.run(lambda tx: tx.execute("UPDATE metastore.CLEANER_LEASE SET EXPIRES = NOW(3) - INTERVAL 1 SECOND"
                                 " WHERE NAME='fence-test'"))
    assert second.acquire_or_renew() and second.epoch == first.epoch + 1
    now[0] -= 2.1  # even if `first` trusted its clock again, the database has moved on
    with pytest.raises(Fenced):
        db.run(first.fence)
    second.release()
    assert lease_holder(db, "fence-test") is None


def test_health_metrics_and_status(db, world, running, tmp_path, capsys):
    service = running()
    wait_leader(db)
    wait_tailing(db)
    with db.transaction() as tx:
        tx.execute("DELETE FROM hops.hdfs_inodes WHERE id=%s", (world.dirs["customers"].id,))
    wait_no_orphans(db)
    port = service.config["cleaner"]["listen_port"]
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=10) as response:
        health = json.loads(response.read())
    assert health["status"] == "ok" and health["role"] == "leader" and health["owner"] == "a"
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        metrics = response.read().decode()
    assert "hopshive_cleaner_leader 1" in metrics
    wait_until(lambda: 'hopshive_cleaner_orphans_removed_total{kind="orphan_cd"} 1' in service.metrics.render(),
               10, lambda _: service.metrics.render())
    config = tmp_path / "operator.yml"
    config.write_text(yaml.safe_dump({"database": db.config, "cleaner": {"listen_port": port}}))
    assert cli_main(["health", "--config", str(config)]) == 0
    assert cli_main(["status", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "leader: a (epoch " in out and "position: 0-1-" in out, out
    assert cli_main(["status", "--json", "--config", str(config)]) == 0
    assert json.loads(capsys.readouterr().out)["leader"] == "a"


BURST = 1000


def test_leader_killed_in_the_middle_of_a_burst(db, world, account, tmp_path):
    """kill -9 of the leader in the middle of 1,000 table directories moved away one after
    the other: the follower resumes from the stored GTID (no sweep at start), every orphan
    goes, and the tables that stayed keep every row."""
    with db.transaction() as tx:
        cat = Catalog(tx)
        cat._ids = itertools.count(20_000)  # inode ids after the world's
        tables = []
        for n in range(BURST):
            directory = cat.mkdir(world.dirs["other"], f"t{n}")
            tables.append(directory)
            cat.table(world.dbs["other"], f"t{n}", directory)
    assert orphans(db) == {}
    kept = db.run(lambda tx: tx.query_one(
        "SELECT COUNT(*) FROM metastore.SDS s JOIN metastore.TBLS t ON t.SD_ID = s.SD_ID")[0])
    instances = {name: CleanerProcess(cleaner_config(account, tmp_path, name, sweep_at_start=False),
                                      tmp_path).start() for name in ("one", "two")}
    try:
        leader = wait_leader(db)
        wait_tailing(db)
        for n, directory in enumerate(tables):
            if n == BURST // 3:
                instances[leader].kill()
            with db.transaction() as tx:
                move_inode(tx, directory, world.dirs["trash"], f"t{n}")
        follower = next(name for name in instances if name != leader)
        wait_until(lambda: lease_holder(db) == follower, 30, lambda _: f"{follower} did not take over")
        seconds = wait_no_orphans(db, deadline=120)
        print(f"\nkill -9 in a burst of {BURST} moves: last orphan gone {seconds:.1f} s after the last move")
        with db.transaction() as tx:  # the world's tables and databases: all still there, with their SDs
            assert tx.query_one("SELECT COUNT(*) FROM metastore.SDS s JOIN metastore.TBLS t"
                                " ON t.SD_ID = s.SD_ID")[0] == kept - BURST
            assert count(tx, "CDS", "CD_ID=%s", world.tables["orders"].cd) == 1
            assert count(tx, "PARTITIONS") == 3
    finally:
        for process in instances.values():
            if process.process.poll() is None:
                assert process.terminate() == 0, process.log_tail()
