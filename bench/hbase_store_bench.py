"""Partition-filter fetches on the HBase store vs the MariaDB store, from one run, next to
the reference Hive Metastore 2.3.10 numbers of notes/facts.md (same table shape: 10k
partitions, keys int/string/bigint; the reference is quoted, not re-measured here).

    .venv-test/bin/python bench/hbase_store_bench.py [--partitions 10000] [--repeat 15]

Starts its own MariaDB (tests.support.mariadb), our HBase Thrift server on free ports and
one in-process metastore per store (as the component tests do), loads the same partitions
into both, then times get_partitions_by_filter over Thrift: a point lookup, a range on the
first key, a range on the second key only (the seed's "no condition on the first column"
case: here a server-side row filter that seeks from one first-key value to the next), and all
partitions.  "HBase rows read" is the rows the HBase server walked (its scanners' counts,
logged at debug) plus the rows Gets fetched.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hopshive.core.db import Database  # noqa: E402
from hopshive.core.migrations import upgrade  # noqa: E402
from hopshive.core.schematool import COMPONENTS  # noqa: E402
from hopshive.metastore.stores.hbase import rowkey  # noqa: E402
from hopshive.metastore.stores.hbase.planner import hbase_calls, plan_filter  # noqa: E402
from tests.support.hbase import HBaseServerProcess  # noqa: E402
from tests.support.hms import partition, table  # noqa: E402
from tests.support.mariadb import MariaDBServer  # noqa: E402
from tests.support.metastore import InThreadMetastore, settings, thrift_client  # noqa: E402

KEYS = ("y int", "s string", "n bigint")
# notes/facts.md, Apache HMS 2.3.10 on MariaDB, 10k partitions, same key types
REFERENCE_10K = {"point": "14-16 ms", "first-key range": "45-50 ms (1,000 rows)",
                 "second-key range": "45-50 ms (1,000 rows)", "all": "210-270 ms"}


def shape(count: int) -> tuple[int, int, int]:
    """(years, strings, numbers) with years * strings * numbers == count (10k: 10 x 100 x 10)."""
    years = 10
    numbers = 10
    strings = max(1, count // (years * numbers))
    return years, strings, numbers


def queries(count: int) -> dict[str, tuple[str, int]]:
    years, strings, numbers = shape(count)
    tenth = max(1, strings // 10)
    return {
        "point": (f'y = 5 and s = "s{strings // 2:05d}" and n = 7', 1),
        "first-key range": ("y >= 2 and y < 3", strings * numbers),
        "second-key range": (f's >= "s{tenth:05d}" and s < "s{2 * tenth:05d}"', years * tenth * numbers),
        "all": ("", years * strings * numbers),
    }


def load(port: int, count: int) -> None:
    years, strings, numbers = shape(count)
    with thrift_client(port, user="hive") as hms:
        hms.create_table(table("default", "bench", parts=KEYS))
        tbl = hms.get_table("default", "bench")
        batch = []
        for y in range(years):
            for s in range(strings):
                for n in range(numbers):
                    batch.append(partition(tbl, [str(y), f"s{s:05d}", str(n)]))
                    if len(batch) == 1000:
                        hms.add_partitions(batch)
                        batch = []
        if batch:
            hms.add_partitions(batch)


def timed(port: int, text: str, repeat: int) -> tuple[float, int]:
    samples, rows = [], 0
    with thrift_client(port, user="hive") as hms:
        for _ in range(repeat):
            start = time.perf_counter()
            got = hms.get_partitions_by_filter("default", "bench", text, -1) if text else \
                hms.get_partitions("default", "bench", -1)
            samples.append(time.perf_counter() - start)
            rows = len(got)
    return statistics.median(samples) * 1000, rows


def rows_read(hbase: HBaseServerProcess, metastore_port: int, text: str) -> int:
    """Rows the HBase server walked for one more run of the query: its scanners' rows_read
    (the server logs them at debug when a scanner closes) plus the rows fetched by Gets."""
    keys = [tuple(k.split(" ")) for k in KEYS]
    gets = sum(len(c.rows) for c in hbase_calls(plan_filter(text, keys), rowkey.table_prefix("default", "bench"))
               if c.kind == "get") if text else 0
    mark = hbase.log_path.stat().st_size
    timed(metastore_port, text, 1)
    with open(hbase.log_path, "rb") as log:
        log.seek(mark)
        lines = log.read().decode("utf-8", "replace").splitlines()
    scanned = sum(json.loads(line)["rows_read"] for line in lines if '"scanner closed"' in line)
    return gets + scanned


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="hbase-bench-"))
    mariadb = MariaDBServer(base / "mariadb").start()
    hbase = HBaseServerProcess(base / "hbase").start()
    stores = {}
    try:
        db = Database(mariadb.config)
        for component in COMPONENTS.values():
            upgrade(db, component)
        for backend in ("mysql", "hbase"):
            config = settings(db.config, "127.0.0.1:1", backend=backend)
            config["hbase"].update(port=hbase.port, table_prefix="bench_")
            stores[backend] = InThreadMetastore(config).start()
            started = time.perf_counter()
            load(stores[backend].port, args.partitions)
            print(f"loaded {args.partitions} partitions into the {backend} store in "
                  f"{time.perf_counter() - started:.1f} s", file=sys.stderr)
        print(f"\n{args.partitions} partitions, keys {', '.join(KEYS)}; p50 of {args.repeat} calls over Thrift\n")
        print("| query | filter | rows | MariaDB store p50 | HBase store p50 | HBase rows read | "
              "HMS 2.3.10 at 10k (facts.md) |")
        print("|---|---|---|---|---|---|---|")
        failed = False
        for name, (text, expected) in queries(args.partitions).items():
            mysql_ms, mysql_rows = timed(stores["mysql"].port, text, args.repeat)
            hbase_ms, hbase_rows = timed(stores["hbase"].port, text, args.repeat)
            read = rows_read(hbase, stores["hbase"].port, text)
            ok = mysql_rows == hbase_rows == expected
            failed |= not ok
            print(f"| {name} | `{text or '(none: get_partitions)'}` | {hbase_rows}{'' if ok else ' WRONG'} | "
                  f"{mysql_ms:.1f} ms | {hbase_ms:.1f} ms | {read} | {REFERENCE_10K[name]} |")
        return 1 if failed else 0
    finally:
        for server in stores.values():
            server.stop()
        hbase.stop()
        mariadb.stop()


if __name__ == "__main__":
    sys.exit(main())
