"""Cleanup lag of hopshive-cleaner on a catalog of 100k partitions, and its sweep time.

    .venv-test/bin/python bench/cleaner_bench.py [--catalog-tables 100] [--catalog-partitions 1000]
        [--singles 30] [--burst 200] [--partitions 10]

Everything runs on a private MariaDB (ROW binlog, GTIDs, as deployed) that first gets a
background catalog: one database of ``--catalog-tables`` tables with ``--catalog-partitions``
partitions each (100 x 1000 = 100k partitions, each with its directory, SD and serde), made
with plain SQL in seconds.  One cleaner instance runs in this process.

Lag = from the commit of a file-system action done behind the metastore's back to the
moment the last of its orphans (SDs, serdes, the column descriptor) is gone, polled every
5 ms:

* single table-directory moves: a table of ``--partitions`` partitions moved to the trash
  (its table row cascades; its partitions' SDs, all serdes and the CD are orphaned);
* single partition-directory deletes: one partition directory of a catalog table deleted
  skipping the trash (its SD cascades; its serde is orphaned);
* a burst: ``--burst`` table-directory moves back to back (lag of each from its own commit).

Sweeps: ``Cleaner.sweep()`` over the 100k-partition catalog with nothing to remove, then
after the catalog's database directory was moved away (every table and partition orphaned).

The reference is what users get without it: Hive 4's partition management task runs every
``metastore.partition.management.task.frequency`` = 300 s by default, so its lag is uniform
in 0-300 s (p50 150 s, p99 297 s): derived from the configuration, not measured here.  The
thesis's hiveCleaner misses whatever happens while it is down (no sweep): unbounded.
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

IDS = itertools.count(100_000)   # inode ids
ROWS = itertools.count(1)        # SERDE_ID / SD_ID / PART_ID values (explicit: bulk inserts)
# Only placeholders in VALUES: mysqlclient then sends one multi-row INSERT per executemany.
INODE = ("INSERT INTO hops.hdfs_inodes (partition_id, parent_id, name, id, permission, is_dir)"
         " VALUES (%s, %s, %s, %s, %s, %s)")


TABLES = (("SDS", "SD_ID", "sds"), ("SERDES", "SERDE_ID", "serdes"), ("CDS", "CD_ID", "cds"))


class Objects:
    """Ids of what one table (or partition) leaves to clean up."""

    def __init__(self, sds=(), serdes=(), cds=()):
        self.sds, self.serdes, self.cds = set(sds), set(serdes), set(cds)


def alive(tx, objects: list[Objects]) -> list[Objects]:
    """Those of ``objects`` that still have a row: one query per table for all of them."""
    found: dict[str, set[int]] = {}
    for table, column, attribute in TABLES:
        ids = sorted(set().union(*(getattr(o, attribute) for o in objects)))
        found[attribute] = set()
        for start in range(0, len(ids), 5000):
            chunk = ids[start:start + 5000]
            marks = ", ".join(["%s"] * len(chunk))
            found[attribute].update(r[0] for r in tx.query(
                f"SELECT {column} FROM metastore.{table} WHERE {column} IN ({marks})", chunk))
    return [o for o in objects if any(getattr(o, a) & found[a] for _, _, a in TABLES)]


def mkdir(tx, parent: int, name: str) -> tuple[int, tuple]:
    inode = next(IDS)
    key = (partition_id(parent, name), parent, name)
    tx.execute(INODE, (*key, inode, 0o755, 1))
    return inode, key


def make_table(db: Database, db_id: int, parent: int, name: str, partitions: int) -> tuple[int, tuple, Objects, list]:
    """A table directory with ``partitions`` partition directories below it, in a few bulk
    statements; returns (inode, key, what moving it orphans, [(partition key, its Objects)])."""
    def work(tx):
        inode, key = mkdir(tx, parent, name)
        tx.execute("INSERT INTO metastore.CDS () VALUES ()")
        cd = tx.lastrowid
        dirs = [(next(IDS), (partition_id(inode, f"p={n}"), inode, f"p={n}")) for n in range(partitions)]
        tx.executemany(INODE, [(*k, i, 0o755, 1) for i, k in dirs])
        rows = [(next(ROWS), k) for k in [key] + [k for _, k in dirs]]
        tx.executemany("INSERT INTO metastore.SERDES (SERDE_ID, SLIB) VALUES (%s, %s)", [(r, "x") for r, _ in rows])
        tx.executemany("INSERT INTO metastore.SDS (SD_ID, CD_ID, SERDE_ID, LOCATION, PARTITION_ID, PARENT_ID, NAME)"
                       " VALUES (%s, %s, %s, %s, %s, %s, %s)", [(r, cd, r, "x", *k) for r, k in rows])
        tx.execute("INSERT INTO metastore.TBLS (CREATE_TIME, DB_ID, SD_ID, TBL_NAME) VALUES (1, %s, %s, %s)",
                   (db_id, rows[0][0], name))
        tbl = tx.lastrowid
        tx.executemany("INSERT INTO metastore.PARTITIONS (PART_ID, CREATE_TIME, PART_NAME, SD_ID, TBL_ID)"
                       " VALUES (%s, %s, %s, %s, %s)", [(r, 1, k[2], r, tbl) for r, k in rows[1:]])
        ids = [r for r, _ in rows]
        return inode, key, Objects(ids[1:], ids, [cd]), [(k, Objects(serdes=[r])) for r, k in rows[1:]]
    return db.run(work)


def make_database(db: Database, parent: int, name: str) -> tuple[int, tuple, int]:
    def work(tx):
        inode, key = mkdir(tx, parent, name)
        sd = next(ROWS)
        tx.execute("INSERT INTO metastore.SDS (SD_ID, LOCATION, PARTITION_ID, PARENT_ID, NAME) VALUES (%s, 'x', %s, %s, %s)",
                   (sd, *key))
        tx.execute("INSERT INTO metastore.DBS (NAME, SD_ID, DB_LOCATION_URI) VALUES (%s, %s, 'x')", (name, sd))
        return inode, key, tx.lastrowid
    return db.run(work)


def move(tx, inode: int, key: tuple, parent: int, name: str) -> None:
    """The namespace's move: the inode row is replaced (new key, same id)."""
    tx.execute("DELETE FROM hops.hdfs_inodes WHERE partition_id=%s AND parent_id=%s AND name=%s", key)
    tx.execute(INODE, (partition_id(parent, name), parent, name, inode, 0o755, 1))


def delete_dir(tx, key: tuple) -> None:
    tx.execute("DELETE FROM hops.hdfs_inodes WHERE partition_id=%s AND parent_id=%s AND name=%s", key)


def wait_gone(db: Database, objects: Objects, since: float, deadline: float = 120.0) -> float:
    while db.run(lambda tx: alive(tx, [objects]), readonly=True):
        if time.monotonic() - since > deadline:
            raise RuntimeError(f"orphans still there after {deadline} s")
        time.sleep(0.005)
    return time.monotonic() - since


def burst(db: Database, tables: list, trash: int) -> list[float]:
    """Move every table back to back while a watcher polls (every 5 ms) which of the moved
    tables still have orphans; each lag runs from that table's own commit."""
    pending: dict[int, tuple[Objects, float]] = {}
    lags: list[float] = []
    lock = threading.Lock()
    moving = threading.Event()
    moving.set()

    def watch() -> None:
        while moving.is_set() or pending:
            with lock:
                snapshot = dict(pending)
            if snapshot:
                left = {id(o) for o in db.run(lambda tx: alive(tx, [o for o, _ in snapshot.values()]), readonly=True)}
                now = time.monotonic()
                with lock:
                    for n, (objects, at) in snapshot.items():
                        if id(objects) not in left:
                            lags.append(now - at)
                            del pending[n]
            time.sleep(0.005)
    watcher = threading.Thread(target=watch)
    watcher.start()
    for n, (inode, key, objects, _) in enumerate(tables):
        db.run(lambda tx: move(tx, inode, key, trash, f"b{n}"))
        with lock:
            pending[n] = (objects, time.monotonic())
    moving.clear()
    watcher.join(300)
    return lags


def caught_up(db: Database, deadline: float = 300.0) -> None:
    """Until the cleaner's stored position has reached the server's (it handled everything)."""
    from hopshive.cleaner.positions import GtidPosition
    target = db.run(lambda tx: GtidPosition(tx.query_one("SELECT @@GLOBAL.gtid_binlog_pos")[0]))
    since = time.monotonic()
    while True:
        row = db.run(lambda tx: tx.query_one("SELECT GTID FROM metastore.CLEANER_POSITION"), readonly=True)
        if row and GtidPosition(row[0]).behind(target) == 0:
            return
        if time.monotonic() - since > deadline:
            raise RuntimeError(f"the cleaner did not catch up within {deadline} s")
        time.sleep(0.05)


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def step(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--catalog-tables", type=int, default=100, help="tables of the background catalog")
    parser.add_argument("--catalog-partitions", type=int, default=1000, help="partitions per catalog table")
    parser.add_argument("--singles", type=int, default=30, help="single moves, and single partition deletes")
    parser.add_argument("--burst", type=int, default=200, help="table-directory moves back to back")
    parser.add_argument("--partitions", type=int, default=10, help="partitions per moved table")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="cleaner-bench-"))
    server = MariaDBServer(base).start()
    db = Database(server.config)
    rows, notes = [], []
    catalog_size = args.catalog_tables * args.catalog_partitions
    try:
        reset_schemas(db)
        trash, _ = db.run(lambda tx: mkdir(tx, 1, "trash"))
        big, big_key, big_db = make_database(db, 1, "big.db")
        step(f"catalog: {args.catalog_tables} tables x {args.catalog_partitions} partitions")
        started = time.monotonic()
        catalog = [make_table(db, big_db, big, f"c{n}", args.catalog_partitions) for n in range(args.catalog_tables)]
        notes.append(f"catalog of {catalog_size} partitions made in {time.monotonic() - started:.0f} s")
        w, _, w_db = make_database(db, 1, "w.db")
        step("cleaner: starting (record rebuild over the catalog)")
        started = time.monotonic()
        runner = InProcess(cleaner_config(server.config, base, "bench", sweep_at_start=False)).start()
        try:
            while not db.run(lambda tx: tx.query_one("SELECT COUNT(*) FROM metastore.CLEANER_POSITION")[0]):
                time.sleep(0.05)
            notes.append(f"cleaner start (lease, record of what {catalog_size} SDs use): "
                         f"{time.monotonic() - started:.1f} s")
            step("singles: table-directory moves")
            lags = []
            for n in range(args.singles):
                inode, key, objects, _ = make_table(db, w_db, w, f"s{n}", args.partitions)
                db.run(lambda tx: move(tx, inode, key, trash, f"s{n}"))
                lags.append(wait_gone(db, objects, time.monotonic()))
            rows.append((f"single table-directory moves to the trash ({args.partitions} partitions each)", lags))
            step("singles: partition-directory deletes")
            lags = []
            for n in range(args.singles):
                key, objects = catalog[n % len(catalog)][3][n // len(catalog)]
                db.run(lambda tx: delete_dir(tx, key))
                lags.append(wait_gone(db, objects, time.monotonic()))
            rows.append(("single partition-directory deletes, skipTrash", lags))
            step(f"burst of {args.burst}")
            tables = [make_table(db, w_db, w, f"b{n}", args.partitions) for n in range(args.burst)]
            caught_up(db)   # the burst starts with nothing else in the cleaner's queue
            rows.append((f"burst: {args.burst} table-directory moves back to back (each from its own commit)",
                         burst(db, tables, trash)))
        finally:
            runner.stop()
        cleaner = Cleaner(db, lambda tx: 1, Metrics(), 0.0, 500)
        step("sweep with nothing to remove")
        started = time.monotonic()
        removed = cleaner.sweep()
        sweeps = [(f"sweep over {catalog_size} partitions, nothing to remove", time.monotonic() - started, removed)]
        step("sweep after the catalog's database directory was moved away")
        db.run(lambda tx: move(tx, big, big_key, trash, "big.db"))
        started = time.monotonic()
        removed = cleaner.sweep()
        sweeps.append((f"sweep after the database directory of {catalog_size} partitions was moved away",
                       time.monotonic() - started, removed))
    finally:
        db.close()
        server.stop()
    print("| cleanup lag | n | p50 | p99 | max |\n|---|---|---|---|---|")
    for what, values in rows:
        print(f"| {what} | {len(values)} | {statistics.median(values) * 1000:.0f} ms | "
              f"{pct(values, 99) * 1000:.0f} ms | {max(values) * 1000:.0f} ms |")
    print("| reference: Hive 4 partition management task, every 300 s (by configuration, not measured) "
          "| - | 150 s | 297 s | 300 s |")
    print("| reference: thesis hiveCleaner, actions while it is down | - | never | never | never |")
    print("\n| sweep | seconds | removed |\n|---|---|---|")
    for what, seconds, removed in sweeps:
        print(f"| {what} | {seconds:.1f} | {', '.join(f'{k} {v}' for k, v in removed.items() if v) or 'nothing'} |")
    print("\n" + "; ".join(notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
