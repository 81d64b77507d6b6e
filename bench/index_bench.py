"""Hive indexes on Spark (issue 25): a point and a range lookup on an unsorted key, with the
compact index, with the data-skipping index, with the bitmap index and with none (Spark with
Parquet's own min/max pushdown, which cannot skip a file of an unsorted column), in one run.

A generated table of --rows rows in --files Parquet files (the issue asks for >= 20M rows in
>= 200 files: ``--rows 20000000``; the default finishes in a few minutes here): a unique key
``k`` (a permutation of the row numbers, so unsorted), an id, a short string, a double and a
timestamp.  For each index: its rebuild time and size and the WebHDFS requests the namenode
answered during the rebuild (its /metrics counter: unlike the times, not moved by the machine's
load), then per lookup (median of --repeat
runs with different keys; the data-skipping index is read once, at the first query, and kept:
that first query is shown apart) the files and bytes Spark's scan read (its SQL metrics), the
time, and the ratios to no index.  "full scan" is the no-index point lookup (Spark reads the
key column of every file); a scan of every column is shown too.

Starts a private MariaDB, namenode and metastore, and one local[2] Spark session in this
process, as bench/mapjoin_bench.py does.

    .venv-test/bin/python bench/index_bench.py [--rows 2000000] [--files 200] [--repeat 3] [--row-group-bytes N]
        [--handlers COMPACT,DATASKIPPING,BITMAP]
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.mapjoin_bench import log, private_stack  # noqa: E402

PRIME = 1_000_003          # k = id * PRIME mod rows: a permutation when rows is not a multiple of it
RANGE_WIDTH = 20


def load(spark, rows: int, files: int, row_group_bytes: int) -> None:
    spark.sql("CREATE DATABASE bench")
    options = f" OPTIONS ('parquet.block.size'='{row_group_bytes}')" if row_group_bytes else ""
    spark.sql(f"CREATE TABLE bench.t (k BIGINT, id BIGINT, s STRING, d DOUBLE, ts TIMESTAMP) USING parquet{options}")
    spark.sql(f"INSERT INTO bench.t SELECT /*+ REPARTITION({files}) */ (id * {PRIME}) % {rows} AS k, id,"
              f" concat('user-', CAST(id % 100000 AS STRING)) AS s, rand(7) AS d,"
              f" timestamp_seconds(1700000000 + id) AS ts FROM range({rows})")


def scanned(frame) -> tuple[int, int, int]:
    """(files, their bytes, rows) the query's table scans read, from Spark's SQL metrics."""
    plan = frame._jdf.queryExecution().executedPlan()
    if plan.getClass().getSimpleName() == "AdaptiveSparkPlanExec":
        plan = plan.executedPlan()
    leaves = plan.collectLeaves()
    files = size = rows = 0
    for i in range(leaves.size()):
        metrics = leaves.apply(i).metrics()
        if metrics.contains("numFiles"):
            files += metrics.apply("numFiles").value()
            size += metrics.apply("filesSize").value()
            rows += metrics.apply("numOutputRows").value()
    return files, size, rows


def timed(spark, query: str) -> tuple[float, int, int, int, list]:
    start = time.perf_counter()
    frame = spark.sql(query)
    rows = sorted(tuple(r) for r in frame.collect())
    seconds = time.perf_counter() - start
    return (seconds, *scanned(frame), rows)


def lookups(spark, rows: int, repeat: int, seed: int) -> dict:
    """{lookup: (first run, [later runs])}, each (seconds, files, bytes, rows scanned, result); keys from `seed`,
    so every configuration looks up the same keys."""
    pick = random.Random(seed)
    keys = [pick.randrange(rows) for _ in range(repeat + 1)]
    out = {}
    for name, make in (("point", lambda key: f"SELECT * FROM bench.t WHERE k = {key}"),
                       ("range", lambda key: f"SELECT * FROM bench.t WHERE k BETWEEN {key} AND {key + RANGE_WIDTH - 1}")):
        runs = [timed(spark, make(key)) for key in keys]
        out[name] = (runs[0], runs[1:])
    return out


def answered(namenode) -> int:
    """WebHDFS requests the namenode has answered (its /metrics operations counter, every op)."""
    text = requests.get(f"{namenode.url}/metrics", timeout=30).text
    return int(sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                   if re.match(r"hopshive_namenode_operations_total\{", line)))


def size_of(spark, path: str) -> int:
    jvm = spark.sparkContext._jvm
    p = jvm.org.apache.hadoop.fs.Path(path)
    return p.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).getContentSummary(p).getLength()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--handlers", default="COMPACT,DATASKIPPING,BITMAP", help="the indexes to build, in order")
    parser.add_argument("--row-group-bytes", type=int, default=0,
                        help="parquet.block.size of the table (0: Parquet's default, 128 MiB)")
    args = parser.parse_args()
    with private_stack("index-bench-") as (spark, namenode, _, _):
        warehouse = f"webhdfs://{namenode.address}/user/hive/warehouse/bench.db"
        log(f"loading {args.rows:,} rows in {args.files} files")
        start = time.perf_counter()
        load(spark, args.rows, args.files, args.row_group_bytes)
        log(f"  loaded in {time.perf_counter() - start:.0f} s")
        table_bytes = size_of(spark, f"{warehouse}/t")
        full = timed(spark, "SELECT count(*), sum(hash(*)) FROM bench.t")
        results, builds = {}, {}
        results["none"] = lookups(spark, args.rows, args.repeat, seed=1)
        for handler in args.handlers.split(","):
            start, before = time.perf_counter(), answered(namenode)
            spark.sql(f"CREATE INDEX i_{handler.lower()} ON TABLE bench.t (k) AS '{handler}'")
            built, asked = time.perf_counter() - start, answered(namenode) - before
            builds[handler] = (built, size_of(spark, f"{warehouse}/bench__t_i_{handler.lower()}__"), asked)
            log(f"  {handler}: built in {built:.1f} s")
            results[handler] = lookups(spark, args.rows, args.repeat, seed=1)
            spark.sql(f"DROP INDEX i_{handler.lower()} ON bench.t")
        check(results)
        report(args, table_bytes, full, results, builds)
        return 0


def check(results: dict) -> None:
    """Every configuration returned the same rows for the same keys."""
    for name in ("point", "range"):
        expected = [run[4] for run in [results["none"][name][0], *results["none"][name][1]]]
        for handler, runs in results.items():
            got = [run[4] for run in [runs[name][0], *runs[name][1]]]
            if got != expected:
                raise SystemExit(f"{handler} {name}: rows differ from no index")


def report(args, table_bytes: int, full: tuple, results: dict, builds: dict) -> None:
    none_point = statistics.median(r[0] for r in results["none"]["point"][1])
    print(f"\n{args.rows:,} rows in {args.files} files, {table_bytes / 2**20:.1f} MiB; key k unique, unsorted; "
          f"medians of {args.repeat} lookups after a first one\n")
    print(f"full scan (no-index point lookup, key column only): {none_point:.2f} s; "
          f"scan of every column: {full[0]:.2f} s\n")
    print("| index | rebuild, s | rebuild / full scan | rebuild / every-column scan | WebHDFS requests of the rebuild "
          "| size, MiB | size / table |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for handler, (built, size, asked) in builds.items():
        print(f"| {handler} | {built:.1f} | {built / none_point:.2f}x | {built / full[0]:.2f}x | {asked:,} "
              f"| {size / 2**20:.2f} | {100 * size / table_bytes:.2f} % |")
    print("\n| lookup | index | first, s | median, s | files read | their size, MiB | files / all | rows scanned "
          "| speed-up vs none |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in ("point", "range"):
        base = statistics.median(r[0] for r in results["none"][name][1])
        for handler, runs in results.items():
            first, later = runs[name]
            median = statistics.median(r[0] for r in later)
            files = statistics.median(r[1] for r in later)
            size = statistics.median(r[2] for r in later)
            scanned_rows = statistics.median(r[3] for r in later)
            print(f"| {name} | {handler} | {first[0]:.2f} | {median:.2f} | {files:.0f} | {size / 2**20:.2f} "
                  f"| {100 * files / args.files:.1f} % | {scanned_rows:,.0f} | {base / median:.1f}x |")


if __name__ == "__main__":
    sys.exit(main())
