"""Partition filters on the HBase store, the MariaDB store and a naive full scan, side by
side in one run: rows scanned, rows returned and p50 latency for the issue's five cases.

    .venv-test/bin/python bench/hbase_store_bench.py [--partitions 100000] [--repeat 9]

Starts its own MariaDB (tests.support.mariadb), our HBase Thrift server (hopshive-hbase) and
one in-process metastore per store, loads the same partitions into both through the Thrift
API (keys ``y int, s string, n bigint``: 100 x N/1000 x 10), then for each case:

* **HBase store**: ``get_partitions_by_filter`` over Thrift, p50 of ``--repeat`` calls;
  *scanned* is what the HBase server read -- its scanners' ``rows_read`` (logged at debug
  when a scanner closes) plus the rows Gets asked for.  An Apache HBase region server would
  read every row of each scan's range instead (its RowFilter has no seek hint); the
  "HBase range" column says how many rows that is.
* **MariaDB store**: the same call; *scanned* is the storage engine's row reads for it
  (``Handler_read_*`` deltas of this private server: every table the store's queries touch).
* **naive**: what a store without a planner does -- read every partition row of the table
  from HBase (one scan) and evaluate the filter in the metastore (in this process, through
  the HBase store's own reader); p50 of 3.

Goals (the issue's): scanned <= 2 x returned on the HBase store for every case but LIKE;
the point lookup no slower there than on the MariaDB store.  The script prints whether each
is met, and exits non-zero only if a store returned other rows than the evaluator expects.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hopshive.core.db import Database  # noqa: E402
from hopshive.metastore.api import api  # noqa: E402
from hopshive.metastore.filter import compile_predicate  # noqa: E402
from hopshive.metastore.stores.hbase import calls as plan_calls, rowkey  # noqa: E402
from hopshive.metastore.stores.hbase.records import decode  # noqa: E402
from tests.support.hbase import HBaseServerProcess  # noqa: E402
from tests.support.hms import partition, table  # noqa: E402
from tests.support.mariadb import MariaDBServer  # noqa: E402
from tests.support.metastore import InThreadMetastore, settings, thrift_client  # noqa: E402
from tests.support.schemas import reset_schemas  # noqa: E402

KEYS = (("y", "int"), ("s", "string"), ("n", "bigint"))
YEARS, NUMBERS = 100, 10


def strings(count: int) -> int:
    return max(1, count // (YEARS * NUMBERS))


def cases(count: int) -> dict[str, str]:
    """The issue's five cases on a table of ``count`` partitions."""
    mid = strings(count) // 2
    points = " or ".join(f'(y = {y} and s = "s{(mid + y) % strings(count):04d}" and n = {y % NUMBERS})'
                         for y in (3, 17, 42, 60, 99))
    return {
        "point": f'y = 50 and s = "s{mid:04d}" and n = 7',
        "first-column range": "y >= 20 and y < 22",
        "second-column only": f's = "s{mid:04d}"',
        "OR of points": points,
        "LIKE": f's like ".*{mid % 100:02d}"',
    }


def load(port: int, count: int) -> float:
    started = time.perf_counter()
    with thrift_client(port, user="hive", timeout=600.0) as hms:
        hms.create_table(table("default", "bench", parts=[f"{k} {t}" for k, t in KEYS]))
        made = hms.get_table("default", "bench")
        batch = []
        for y in range(YEARS):
            for s in range(strings(count)):
                for n in range(NUMBERS):
                    batch.append(partition(made, [str(y), f"s{s:04d}", str(n)]))
                    if len(batch) == 500:
                        hms.add_partitions(batch)
                        batch = []
        if batch:
            hms.add_partitions(batch)
    return time.perf_counter() - started


def p50(call, repeat: int) -> tuple[float, object]:
    samples, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = call()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000, result


class HBaseRows:
    """Rows the HBase server read for one call: scanners' rows_read from its debug log."""

    def __init__(self, server: HBaseServerProcess):
        self.server = server

    def during(self, call) -> int:
        mark = self.server.log_path.stat().st_size
        call()
        with open(self.server.log_path, "rb") as log:
            log.seek(mark)
            lines = log.read().decode("utf-8", "replace").splitlines()
        return sum(json.loads(line)["rows_read"] for line in lines if '"scanner closed"' in line)


class MariaDBRows:
    """Rows the storage engine read for one call (Handler_read_* deltas, this server only)."""

    def __init__(self, db: Database):
        self.db = db

    def _reads(self) -> int:
        rows = self.db.run(lambda tx: tx.query("SHOW GLOBAL STATUS LIKE 'Handler_read%'"), readonly=True)
        return sum(int(value) for _, value in rows)

    def during(self, call) -> int:
        idle = -self._reads() + self._reads()          # what the probe itself reads
        before = self._reads()
        call()
        return self._reads() - before - idle


def naive(store, text: str) -> list:
    """Every partition row of the table from HBase, the filter evaluated here."""
    predicate = compile_predicate(text, list(KEYS))

    def work(t):
        rows = store._all_rows(t, "default", "bench")
        return [r for _, r in rows if predicate(decode(api.Partition, r.blob).values)]
    return store._hb(work)


def calls(text: str) -> tuple:
    return plan_calls.plan_calls(text, KEYS, rowkey.table_prefix("default", "bench"))[1]


def hbase_range(store, text: str) -> int:
    """Rows an Apache HBase region server would read: every row of each scan's range (its
    RowFilter reads each one), and one per Get."""
    def work(t):
        ranges = [(c.start, c.stop) for c in calls(text) if c.kind == "scan"]
        return sum(1 for start, stop in ranges
                   for _ in store._scan(t("parts"), start, stop, b"KeyOnlyFilter() AND FirstKeyOnlyFilter()"))
    return store._hb(work) + sum(len(c.rows) for c in calls(text) if c.kind == "get")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=100000)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="hbase-bench-"))
    mariadb = MariaDBServer(base / "mariadb").start()
    servers, hbase = {}, None
    try:
        hbase = HBaseServerProcess(base / "hbase").start()
        db = Database(mariadb.config)
        reset_schemas(db)
        for backend in ("mysql", "hbase"):
            config = settings(db.config, "127.0.0.1:1", backend=backend)
            config["hbase"].update(port=hbase.port, table_prefix="bench_")
            servers[backend] = InThreadMetastore(config).start()
            seconds = load(servers[backend].port, args.partitions)
            print(f"loaded {args.partitions} partitions into the {backend} store in {seconds:.0f} s", file=sys.stderr)
        return report(args, servers, HBaseRows(hbase), MariaDBRows(db))
    finally:
        for server in servers.values():
            server.stop()
        if hbase is not None:
            hbase.stop()
        mariadb.stop()
        shutil.rmtree(base, ignore_errors=True)


def report(args, servers, hbase_rows: HBaseRows, mariadb_rows: MariaDBRows) -> int:
    total = YEARS * strings(args.partitions) * NUMBERS
    print(f"\n{total} partitions (keys {', '.join(f'{k} {t}' for k, t in KEYS)}); p50 of {args.repeat} calls "
          f"over Thrift (naive: of 3, in process); load average {os.getloadavg()[0]:.1f} at the start\n")
    print("| case | filter | returned | HBase store scanned | HBase store p50 | MariaDB store scanned | "
          "MariaDB store p50 | naive scanned | naive p50 | an Apache HBase would read |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    wrong, goals = False, []
    with thrift_client(servers["hbase"].port, user="hive", timeout=600.0) as hb, \
            thrift_client(servers["mysql"].port, user="hive", timeout=600.0) as my:
        for name, text in cases(args.partitions).items():
            predicate = compile_predicate(text, list(KEYS))
            fetch = {"hbase": lambda: hb.get_partitions_by_filter("default", "bench", text, -1),
                     "mysql": lambda: my.get_partitions_by_filter("default", "bench", text, -1)}
            hbase_ms, got_hbase = p50(fetch["hbase"], args.repeat)
            mysql_ms, got_mysql = p50(fetch["mysql"], args.repeat)
            naive_ms, got_naive = p50(lambda: naive(servers["hbase"].store, text), 3)
            gets = sum(len(c.rows) for c in calls(text) if c.kind == "get")
            scanned = hbase_rows.during(fetch["hbase"]) + gets
            engine = mariadb_rows.during(fetch["mysql"])
            returned = len(got_hbase)
            ok = all(predicate(p.values) for p in got_hbase) and returned == len(got_mysql) == len(got_naive)
            wrong |= not ok
            print(f"| {name} | `{text if len(text) < 70 else text[:67] + '...'}` | {returned}"
                  f"{'' if ok else ' WRONG'} | {scanned} | {hbase_ms:.1f} ms | {engine} | {mysql_ms:.1f} ms | "
                  f"{total} | {naive_ms:.0f} ms | {hbase_range(servers['hbase'].store, text)} |")
            if name != "LIKE":
                verdict = "met" if scanned <= 2 * returned else "MISSED"
                goals.append(f"{name}: scanned {scanned} <= 2 x {returned}: {verdict}")
            if name == "point":
                goals.append(f"point: HBase {hbase_ms:.1f} ms vs MariaDB {mysql_ms:.1f} ms: "
                             f"{'met' if hbase_ms <= mysql_ms else 'MISSED'}")
    print("\n" + "\n".join(f"- {goal}" for goal in goals))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
