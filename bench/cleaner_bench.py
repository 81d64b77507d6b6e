"""Cleanup lag of hopshive-cleaner, and its sweep time, on a private MariaDB.

    .venv-test/bin/python bench/cleaner_bench.py [--singles 30] [--burst 200] [--sweep-partitions 10000]

Lag = from the commit of a file-system action done behind the metastore's back (a table
directory with partitions moved to the trash: the table row cascades, its partitions' SDs,
CDs and serdes are orphaned) to the moment the last of its orphans is gone, polled every
5 ms.  Singles are one move at a time; the burst is many moves back to back (lag of each
measured from its own commit).  The sweep is `Cleaner.sweep()` over a database whose
directory was moved away with every table and partition in it.

The reference is what users get without it: Hive 4's partition management task runs every
`metastore.partition.management.task.frequency` = 300 s by default (so the lag is uniform in
0-300 s: p50 150 s, p99 297 s -- by configuration, not measured here), and the thesis's
hiveCleaner misses whatever happens while it is down (no sweep; unbounded).
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hopshive.cleaner.cleanup import Cleaner  # noqa: E402
from hopshive.cleaner.metrics import Metrics  # noqa: E402
from hopshive.core.db import Database  # noqa: E402
from hopshive.namespace.inodes import partition_id  # noqa: E402
from tests.support.cleaner import InProcess, cleaner_config  # noqa: E402
from tests.support.mariadb import MariaDBServer  # noqa: E402
from tests.support.schemas import reset_schemas  # noqa: E402

IDS = itertools.count(100_000)


def mkdir(tx, parent: int, name: str) -> tuple[int, tuple]:
    inode = next(IDS)
    key = (partition_id(parent, name), parent, name)
    tx.execute("INSERT INTO hops.hdfs_inodes (partition_id, parent_id, name, id, permission, is_dir)"
               " VALUES (%s, %s, %s, %s, 493, 1)", (*key, inode))
    return inode, key


def sd(tx, key: tuple | None, cd: int) -> int:
    tx.execute("INSERT INTO metastore.SERDES (SLIB) VALUES ('x')")
    serde = tx.lastrowid
    tx.execute("INSERT INTO metastore.SDS (CD_ID, SERDE_ID, LOCATION, PARTITION_ID, PARENT_ID, NAME)"
               " VALUES (%s, %s, 'x', %s, %s, %s)", (cd, serde, *(key or (None, None, None))))
    return tx.lastrowid


def make_table(db: Database, db_id: int, parent: int, name: str, partitions: int) -> tuple[int, tuple, list[int]]:
    """A table directory with ``partitions`` partition directories; returns (inode, key, SD ids)."""
    def work(tx):
        inode, key = mkdir(tx, parent, name)
        tx.execute("INSERT INTO metastore.CDS () VALUES ()")
        cd = tx.lastrowid
        table_sd = sd(tx, key, cd)
        tx.execute("INSERT INTO metastore.TBLS (CREATE_TIME, DB_ID, SD_ID, TBL_NAME) VALUES (1, %s, %s, %s)",
                   (db_id, table_sd, name))
        tbl = tx.lastrowid
        sds = [table_sd]
        for n in range(partitions):
            _, part_key = mkdir(tx, inode, f"p={n}")
            part_sd = sd(tx, part_key, cd)
            tx.execute("INSERT INTO metastore.PARTITIONS (CREATE_TIME, PART_NAME, SD_ID, TBL_ID)"
                       " VALUES (1, %s, %s, %s)", (f"p={n}", part_sd, tbl))
            sds.append(part_sd)
        return inode, key, sds
    return db.run(work)


def make_database(db: Database, parent: int, name: str) -> tuple[int, tuple, int]:
    def work(tx):
        inode, key = mkdir(tx, parent, name)
        tx.execute("INSERT INTO metastore.CDS () VALUES ()")
        db_sd = sd(tx, key, tx.lastrowid)
        tx.execute("INSERT INTO metastore.DBS (NAME, SD_ID, DB_LOCATION_URI) VALUES (%s, %s, 'x')", (name, db_sd))
        return inode, key, tx.lastrowid
    return db.run(work)


def move(tx, inode: int, key: tuple, parent: int, name: str) -> None:
    tx.execute("DELETE FROM hops.hdfs_inodes WHERE partition_id=%s AND parent_id=%s AND name=%s", key)
    tx.execute("INSERT INTO hops.hdfs_inodes (partition_id, parent_id, name, id, permission, is_dir)"
               " VALUES (%s, %s, %s, %s, 493, 1)", (partition_id(parent, name), parent, name, inode))


def left(db: Database, sds: list[int]) -> int:
    marks = ", ".join(["%s"] * len(sds))
    return db.run(lambda tx: tx.query_one(f"SELECT COUNT(*) FROM metastore.SDS WHERE SD_ID IN ({marks})",
                                          sds)[0], readonly=True)


def wait_gone(db: Database, sds: list[int], since: float, deadline: float = 60.0) -> float:
    while left(db, sds):
        if time.monotonic() - since > deadline:
            raise RuntimeError(f"orphans still there after {deadline} s")
        time.sleep(0.005)
    return time.monotonic() - since


def burst(db: Database, tables: list, trash: int) -> list[float]:
    """Move every table back to back while a watcher polls (every 5 ms) which of the moved
    tables still have partition SDs; each lag runs from that table's own commit."""
    pending: dict[int, tuple[set, float]] = {}
    lags: list[float] = []
    lock = threading.Lock()
    moving = threading.Event()
    moving.set()

    def watch() -> None:
        while moving.is_set() or pending:
            with lock:
                snapshot = dict(pending)
            if snapshot:
                ids = sorted(set().union(*(sds for sds, _ in snapshot.values())))
                marks = ", ".join(["%s"] * len(ids))
                alive = {r[0] for r in db.run(lambda tx: tx.query(
                    f"SELECT SD_ID FROM metastore.SDS WHERE SD_ID IN ({marks})", ids), readonly=True)}
                now = time.monotonic()
                with lock:
                    for n, (sds, at) in snapshot.items():
                        if not sds & alive:
                            lags.append(now - at)
                            del pending[n]
            time.sleep(0.005)
    watcher = threading.Thread(target=watch)
    watcher.start()
    for n, (inode, key, sds) in enumerate(tables):
        db.run(lambda tx: move(tx, inode, key, trash, f"b{n}"))
        with lock:
            pending[n] = (set(sds), time.monotonic())
    moving.clear()
    watcher.join(120)
    return lags


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--singles", type=int, default=30, help="single table-directory moves")
    parser.add_argument("--burst", type=int, default=200, help="table-directory moves back to back")
    parser.add_argument("--partitions", type=int, default=10, help="partitions per table in singles/burst")
    parser.add_argument("--sweep-partitions", type=int, default=10_000, help="partitions orphaned for the sweep")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="cleaner-bench-"))
    server = MariaDBServer(base).start()
    db = Database(server.config)
    rows = []
    try:
        reset_schemas(db)
        _, _, db_id = make_database(db, 1, "w.db")
        w = db.run(lambda tx: tx.query_one("SELECT id FROM hops.hdfs_inodes WHERE name='w.db'")[0])
        trash, _ = db.run(lambda tx: mkdir(tx, 1, "trash"))
        runner = InProcess(cleaner_config(server.config, base, "bench")).start()
        try:
            while not db.run(lambda tx: tx.query_one("SELECT COUNT(*) FROM metastore.CLEANER_POSITION")[0]):
                time.sleep(0.05)
            lags = []
            for n in range(args.singles):
                inode, key, sds = make_table(db, db_id, w, f"s{n}", args.partitions)
                db.run(lambda tx: move(tx, inode, key, trash, f"s{n}"))
                lags.append(wait_gone(db, sds, time.monotonic()))
            rows.append((f"single table-directory moves ({args.singles}, {args.partitions} partitions each)",
                         lags))
            tables = [make_table(db, db_id, w, f"b{n}", args.partitions) for n in range(args.burst)]
            rows.append((f"burst of {args.burst} moves back to back (lag of each from its own commit)",
                         burst(db, tables, trash)))
        finally:
            runner.stop()
        # The sweep: one database directory with every table and partition in it moved away.
        inode, key, big_db = make_database(db, 1, "big.db")
        per_table = 100
        for n in range(max(1, args.sweep_partitions // per_table)):
            make_table(db, big_db, inode, f"t{n}", per_table)
        db.run(lambda tx: move(tx, inode, key, trash, "big.db"))
        orphaned = db.run(lambda tx: tx.query_one(
            "SELECT COUNT(*) FROM metastore.SDS s WHERE NOT EXISTS (SELECT 1 FROM metastore.PARTITIONS p"
            " WHERE p.SD_ID=s.SD_ID) AND NOT EXISTS (SELECT 1 FROM metastore.TBLS t WHERE t.SD_ID=s.SD_ID)"
            " AND NOT EXISTS (SELECT 1 FROM metastore.DBS d WHERE d.SD_ID=s.SD_ID)")[0])
        started = time.monotonic()
        removed = Cleaner(db, lambda tx: 1, Metrics(), 0.0, 500).sweep()
        sweep_seconds = time.monotonic() - started
    finally:
        db.close()
        server.stop()
    print("| what | n | p50 | p99 | max |\n|---|---|---|---|---|")
    for what, values in rows:
        print(f"| {what} | {len(values)} | {statistics.median(values) * 1000:.0f} ms | "
              f"{pct(values, 99) * 1000:.0f} ms | {max(values) * 1000:.0f} ms |")
    print("| reference: Hive 4 partition management task (every 300 s, by configuration) | - | 150 s | 297 s | 300 s |")
    print("| reference: thesis hiveCleaner, events while it is down | - | lost | lost | lost |")
    print(f"\nsweep: {orphaned} orphaned SDs ({args.sweep_partitions} partitions in one moved database): "
          f"{sweep_seconds:.2f} s, removed {removed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
