"""Spark workloads on webhdfs://, each compared with the same workload on file://."""

from __future__ import annotations

import datetime
from urllib.parse import unquote

import pytest

pytest.importorskip("pyspark", reason="PySpark is not installed (requirements-test.txt)")
from pyspark.sql.functions import input_file_name  # noqa: E402

from harness.support.spark import conf, input_files, partition_dirs, rows  # noqa: E402

pytestmark = [pytest.mark.spark, pytest.mark.namespace]

SCHEMA = "id BIGINT, amount DOUBLE, note STRING, d DATE, region STRING, day INT"
REGIONS = ["eu", "us", "apac"]
# Partition values Hadoop/Spark must escape or pass through: space, %, /, =, quotes,
# other specials, and non-ASCII.
SPECIAL = ["with space", "100%", "a/b", "k=v", "it's", 'say "hi"', "#?:*[]{}^", "é", "日本",
           "ümlaut é/日本 %=x", "%2F", "trailing "]


def sample(n: int = 60, seed: int = 0, regions=REGIONS, days=(1, 2, 3)) -> list[tuple]:
    out = []
    for i in range(n):
        note = None if i % 17 == 0 else f"n{i}, \"q\" é{seed}"
        out.append((seed * 1000 + i, round(i * 1.25 + seed, 2), note, datetime.date(2024, 1, 1 + i % 28),
                    regions[i % len(regions)], days[i // len(regions) % len(days)]))
    return out


@pytest.fixture
def twin(targets, workdir, local_dir):
    """(webhdfs URI, file URI) of two empty directories for the same workload."""
    return targets.uri(workdir), local_dir.as_uri()


def write(spark, data, uri, fmt="parquet", mode="overwrite", partition_by=("region", "day")):
    df = spark.createDataFrame(data, SCHEMA)
    writer = df.write.mode(mode).format(fmt).partitionBy(*partition_by)
    if fmt == "csv":
        writer = writer.option("header", "true")
    writer.save(uri)


def read(spark, uri, fmt="parquet"):
    reader = spark.read.format(fmt).schema(SCHEMA)
    if fmt == "csv":
        reader = reader.option("header", "true")
    return reader.load(uri)


def expected(data) -> list[tuple]:
    columns = SCHEMA.replace(",", "").split()[::2]
    order = sorted(range(len(columns)), key=lambda i: columns[i])
    return sorted((tuple(r[i] for i in order) for r in data), key=repr)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_partitioned_write_and_read(spark, twin, fmt):
    remote, local = twin
    data = sample()
    for uri in twin:
        write(spark, data, uri, fmt)
    remote_df, local_df = read(spark, remote, fmt), read(spark, local, fmt)
    assert rows(remote_df) == expected(data)
    assert rows(remote_df) == rows(local_df)
    assert partition_dirs(input_files(remote_df), _path(remote)) == partition_dirs(input_files(local_df), _path(local))
    assert partition_dirs(input_files(remote_df), _path(remote)) == {f"region={r}/day={d}" for r in REGIONS
                                                                      for d in (1, 2, 3)}
    # a partition filter returns exactly that partition's rows, read from its directory
    pruned = remote_df.where("region = 'eu' AND day = 2")
    assert rows(pruned) == expected([r for r in data if r[4] == "eu" and r[5] == 2])
    sources = [unquote(r[0]) for r in pruned.select(input_file_name()).distinct().collect()]
    assert partition_dirs([_path(s) for s in sources], _path(remote)) == {"region=eu/day=2"}


def test_append_then_overwrite(spark, twin, webhdfs, workdir):
    first, second, third = sample(30, 1), sample(20, 2), sample(10, 3, regions=["eu"])
    for uri in twin:
        write(spark, first, uri)
        write(spark, second, uri, mode="append")
    assert rows(read(spark, twin[0])) == expected(first + second) == rows(read(spark, twin[1]))
    for uri in twin:
        write(spark, third, uri, mode="overwrite")
    assert rows(read(spark, twin[0])) == expected(third) == rows(read(spark, twin[1]))
    # The overwritten partitions keep no file.  Spark deletes their directories; HopsHive's
    # commit protocol (roles/spark, in the deployed spark-defaults) keeps them, emptied.
    stale = [path for path, status in webhdfs.walk(workdir) if path.startswith("/_temporary")
             or (path.startswith(("/region=us", "/region=apac")) and status["type"] != "DIRECTORY")]
    assert not stale, stale


@pytest.mark.parametrize("mode", ["dynamic", "static"])
def test_partition_overwrite_mode(spark, twin, mode):
    base = sample(60, 1)  # regions eu/us/apac x days 1..3
    update = sample(12, 2, regions=["eu", "mars"], days=(2,))
    with conf(spark, spark__sql__sources__partitionOverwriteMode=mode):
        for uri in twin:
            write(spark, base, uri)
            write(spark, update, uri, mode="overwrite")
    touched = {(r[4], r[5]) for r in update}
    want = update + [r for r in base if (r[4], r[5]) not in touched] if mode == "dynamic" else update
    assert rows(read(spark, twin[0])) == expected(want) == rows(read(spark, twin[1]))


def test_sql_table_with_warehouse_on_webhdfs(spark, targets, root, webhdfs, local_dir):
    table_dir = f"{root}/warehouse/sales"
    columns = "id BIGINT, amount DOUBLE, note STRING, d DATE, region STRING, day INT"
    spark.sql(f"CREATE TABLE sales ({columns}) USING parquet PARTITIONED BY (region, day)")
    spark.sql(f"CREATE TABLE sales_local ({columns}) USING parquet PARTITIONED BY (region, day) "
              f"LOCATION '{local_dir.as_uri()}/sales'")
    try:
        location = spark.sql("DESCRIBE TABLE EXTENDED sales").where("col_name = 'Location'").first()["data_type"]
        assert location == targets.uri(table_dir)
        data = sample(40, 5)
        spark.createDataFrame(data, SCHEMA).createOrReplaceTempView("staging")
        for table in ("sales", "sales_local"):
            spark.sql(f"INSERT INTO {table} VALUES (1, 2.5, 'it''s é', DATE'2024-02-03', 'a b/c', 7)")
            spark.sql(f"INSERT INTO {table} SELECT * FROM staging")
            with conf(spark, spark__sql__sources__partitionOverwriteMode="dynamic"):
                spark.sql(f"INSERT OVERWRITE {table} PARTITION (region='eu', day) "
                          "SELECT id + 100000, amount, note, d, day FROM staging WHERE region = 'eu' AND day = 1")
        remote, local = rows(spark.table("sales")), rows(spark.table("sales_local"))
        assert remote == local
        assert len(remote) == 1 + len(data)
        summary = "SELECT region, day, count(*), sum(amount) FROM {} GROUP BY region, day ORDER BY region, day"
        assert spark.sql(summary.format("sales")).collect() == spark.sql(summary.format("sales_local")).collect()
        assert webhdfs.status(f"{table_dir}/region=a b%2Fc/day=7")["type"] == "DIRECTORY"
    finally:
        spark.sql("DROP TABLE IF EXISTS sales")
        spark.sql("DROP TABLE IF EXISTS sales_local")
    assert webhdfs.status(table_dir) is None, "DROP TABLE of a managed table left its directory"


def test_special_partition_values_round_trip(spark, twin):
    data = [(i, float(i), value, datetime.date(2024, 1, 1), value, i % 2) for i, value in enumerate(SPECIAL)]
    for uri in twin:
        write(spark, data, uri)
    remote_df, local_df = read(spark, twin[0]), read(spark, twin[1])
    assert rows(remote_df) == expected(data) == rows(local_df)
    assert sorted(r.region for r in remote_df.select("region").collect()) == sorted(SPECIAL)
    assert partition_dirs(input_files(remote_df), _path(twin[0])) == partition_dirs(input_files(local_df),
                                                                                     _path(twin[1]))
    for value in SPECIAL:  # each value selects exactly its own row, by pruning
        got = remote_df.where(remote_df.region == value).select("id", "note").collect()
        assert [(r.id, r.note) for r in got] == [(SPECIAL.index(value), value)], value


def _path(uri: str) -> str:
    """The decoded path of a webhdfs:// or file:// URI."""
    return unquote(uri.split("://", 1)[1][uri.split("://", 1)[1].index("/"):])
