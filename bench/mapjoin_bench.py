"""Map-join partition pruning (issue 11) against Spark's own plans, in one run: a fact table with
--partitions partitions (ds x region; 10,000 by default, 100,000 with --large), of which a
dimension's 3 "hot" rows match 3, and the star query

    SELECT count(*), sum(f.v) FROM fact f JOIN dim d ON f.ds = d.ds AND f.region = d.region WHERE d.hot

run by Spark without dynamic partition pruning, Spark with it (its default), and Spark with
HopsHive's map-join pruning.  For each: partitions the metastore returned (its /metrics),
planning time (SQL text to the executed plan: analysis, optimization -- where partitions are
fetched and their directories listed -- and physical planning) and total time (planning plus
collecting the result), medians of --repeat runs, after one untimed run of ours (class loading,
JIT, metastore connections; Spark's runs are dominated by fetching and listing, warm or not).

Starts a private MariaDB, namenode and metastore from tests/support, like the component tests,
and one local[2] Spark session in this process (the HopsHive extension built by
services/spark/build-jar; the file status cache off, so no run reuses another's listing).

    .venv-test/bin/python bench/mapjoin_bench.py [--large | --partitions N] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hopshive.core.db import Database  # noqa: E402
from tests.support import metastore_metrics as prom  # noqa: E402
from tests.support.hms import partition, thrift_client  # noqa: E402
from tests.support.mariadb import MariaDBServer, _free_port  # noqa: E402
from tests.support.metastore import MetastoreProcess, settings  # noqa: E402
from tests.support.namenode import NamenodeServer  # noqa: E402
from tests.support.schemas import reset_schemas  # noqa: E402
from tests.support.spark_extension import EXTENSIONS, build_jar  # noqa: E402

REGIONS = [f"r{i}" for i in range(10)]
HOT = [(0, "r0"), (1, "r5"), (2, "r9")]           # (day index, region): the 3 matching partitions
QUERY = ("SELECT count(*), sum(f.v) FROM bench.fact f JOIN bench.dim d ON f.ds = d.ds AND f.region = d.region"
         " WHERE d.hot")
EXPECTED = [(len(HOT), sum(range(1, len(HOT) + 1)))]
OURS = "ours (map-join pruning)"
CONFIGS = {     # name -> session settings
    "Spark, no DPP": {"spark.sql.optimizer.dynamicPartitionPruning.enabled": "false",
                      "spark.hopshive.mapJoinPruning.enabled": "false"},
    "Spark + DPP": {"spark.sql.optimizer.dynamicPartitionPruning.enabled": "true",
                    "spark.hopshive.mapJoinPruning.enabled": "false"},
    OURS: {"spark.sql.optimizer.dynamicPartitionPruning.enabled": "true",
                                "spark.hopshive.mapJoinPruning.enabled": "true"},
}


def day(i: int) -> str:
    return f"d{i:05d}"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def session(base: Path, metastore_port: int, namenode: str):
    os.environ["SPARK_CONF_DIR"] = str(base / "spark-conf")      # nothing from the host's configuration
    (base / "spark-conf").mkdir()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession
    jar = build_jar(base / "spark-extension")
    spark = (SparkSession.builder.master("local[2]").appName("mapjoin-bench")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.driver.memory", "2g")
             .config("spark.sql.catalogImplementation", "hive")
             .config("spark.hadoop.hive.metastore.uris", f"thrift://127.0.0.1:{metastore_port}")
             .config("spark.hadoop.hive.metastore.sasl.enabled", "false")   # its own metastore: simple mode
             .config("spark.sql.warehouse.dir", f"webhdfs://{namenode}/user/hive/warehouse")
             .config("spark.sql.hive.filesourcePartitionFileCacheSize", "0")
             .config("spark.sql.extensions", EXTENSIONS)
             .config("spark.driver.extraClassPath", str(jar)).config("spark.executor.extraClassPath", str(jar))
             .enableHiveSupport().getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


@contextmanager
def private_stack(prefix: str, **metastore_options):
    """A private MariaDB, namenode and metastore of this checkout (2 workers each; the
    metastore's other ``settings`` in ``metastore_options``) in a new temporary directory, and
    a Spark session on them acting as hdfs: yields (spark, namenode, metastore, the
    metastore's configuration).  Everything is stopped and the directory removed on exit."""
    base = Path(tempfile.mkdtemp(prefix=prefix))
    stack, spark = [], None
    try:
        mariadb = MariaDBServer(base / "db").start()
        stack.append(mariadb)
        database = Database(mariadb.config)
        reset_schemas(database)
        database.close()
        namenode = NamenodeServer(base / "nn", mariadb.config, workers=2).start()
        stack.append(namenode)
        config = settings(mariadb.config, namenode.address, workers=2, **metastore_options)
        metastore = MetastoreProcess(base / "ms", config).start()
        stack.append(metastore)
        os.environ["HADOOP_USER_NAME"] = "hdfs"
        spark = session(base, metastore.port, namenode.address)
        yield spark, namenode, metastore, config
    finally:
        if spark is not None:
            spark.stop()
        for service in reversed(stack):
            try:
                service.stop()
            except Exception as exc:    # noqa: BLE001 -- keep stopping the others
                log(f"stopping {type(service).__name__}: {exc}")
        shutil.rmtree(base, ignore_errors=True)


def load(spark, metastore_port: int, partitions: int) -> None:
    """The fact (one partition per (day, region), directories made by the metastore, rows in the
    3 hot ones only) and the dimension (every region of the first 100 days, 3 hot)."""
    days = partitions // len(REGIONS)
    spark.sql("CREATE DATABASE bench")
    spark.sql("CREATE TABLE bench.fact (v INT, ds STRING, region STRING) USING parquet PARTITIONED BY (ds, region)")
    with thrift_client(metastore_port, user="hdfs", timeout=600) as hive:
        fact = hive.get_table("bench", "fact")
        for start in range(0, days, 100):
            hive.add_partitions([partition(fact, (day(d), region)) for d in range(start, min(start + 100, days))
                                 for region in REGIONS])
            log(f"  {min(start + 100, days) * len(REGIONS):,} partitions")
    rows = ", ".join(f"({n}, '{day(d)}', '{region}')" for n, (d, region) in enumerate(HOT, start=1))
    spark.sql(f"INSERT INTO bench.fact VALUES {rows}")
    spark.sql("CREATE TABLE bench.dim (ds STRING, region STRING, hot BOOLEAN) USING parquet")
    spark.sql("INSERT INTO bench.dim VALUES " + ", ".join(
        f"('{day(d)}', '{region}', {str((d, region) in HOT).lower()})"
        for d in range(min(100, days)) for region in REGIONS))


def measure(spark, endpoint: tuple, settings_: dict) -> tuple[int, float, float]:
    """(partitions fetched, planning seconds, total seconds) of one run of the query."""
    for key, value in settings_.items():
        spark.conf.set(key, value)
    with prom.fetched([endpoint], "bench.fact") as got:
        start = time.perf_counter()
        frame = spark.sql(QUERY)
        frame._jdf.queryExecution().executedPlan()
        planned = time.perf_counter()
        rows = [tuple(row) for row in frame.collect()]
        done = time.perf_counter()
    assert rows == EXPECTED, f"{settings_}: {rows} != {EXPECTED}"
    return got.total, planned - start, done - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--large", action="store_true", help="100,000 partitions")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    partitions = 100_000 if args.large else args.partitions
    with private_stack("mapjoin-bench-", metrics_port=_free_port()) as (spark, _, metastore, config):
        endpoint = ("127.0.0.1", config["metastore"]["metrics_port"])
        log(f"loading {partitions:,} partitions")
        load(spark, metastore.port, partitions)
        measure(spark, endpoint, CONFIGS[OURS])       # warm-up, untimed
        results = {name: [] for name in CONFIGS}
        for round_ in range(1, args.repeat + 1):
            for name, config_ in CONFIGS.items():
                sample = measure(spark, endpoint, config_)
                log(f"  round {round_} {name}: fetched {sample[0]:,}, planning {sample[1]:.2f} s, "
                    f"total {sample[2]:.2f} s")
                results[name].append(sample)
        report(partitions, results)
        return 0


def report(partitions: int, results: dict) -> None:
    medians = {name: (samples[0][0], statistics.median(s[1] for s in samples),
                      statistics.median(s[2] for s in samples)) for name, samples in results.items()}
    ours = medians[OURS]
    print(f"\n{partitions:,} partitions, {len(HOT)} matching; medians of {len(next(iter(results.values())))} runs\n")
    print("| plan | partitions fetched | planning, s | total, s | planning: this / ours | total: this / ours |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, (fetched, planning, total) in medians.items():
        print(f"| {name} | {fetched:,} | {planning:.2f} | {total:.2f} | {planning / ours[1]:.1f}x "
              f"| {total / ours[2]:.1f}x |")


if __name__ == "__main__":
    sys.exit(main())
