"""Hive indexes on Spark (issue 25): PySpark 4.3 with HopsHive's SQL extension on the real
hopshive-metastore (MariaDB store) and hopshive-namenode.  Index DDL with Hive's errors, rebuilds
(deferred, one partition, refused while another runs, killed mid-way), queries that read only
the files a fresh index names and scan stale partitions whole, the cascades, and a property
test: rows with and without indexes are equal.  One Spark session and one metastore for the
module (a second session only for the killed rebuild), small tables."""

from __future__ import annotations

import os
import re
import signal

import pytest
import requests
from hypothesis import HealthCheck, given, settings as hsettings

from tests.support import index_workload as ix
from tests.support.index_stack import index_stack
from tests.support.metastore import thrift_client
from tests.support.polling import wait_until
from tests.support.spark_workload import SparkProcess

pytestmark = [pytest.mark.metastore, pytest.mark.spark]
LOCK_TIMEOUT = 10.0      # seconds: a killed rebuild's lock expires quickly here
POINT = "SELECT k, s, n, ds FROM ix.t WHERE k = 77"     # a row of partition a


@pytest.fixture(scope="module")
def stack(mariadb, tmp_path_factory):
    """(spark, metastore port, namenode, a second session) with ix's tables made."""
    with index_stack(mariadb, tmp_path_factory.mktemp("indexes"), lock_timeout=LOCK_TIMEOUT) as made:
        victim = SparkProcess(made.session_args, made.base / "victim.log")   # for the killed rebuild
        try:
            yield made.spark, made.port, made.namenode, victim
        finally:
            victim.close()


def index_partitions(port: int, table: str) -> dict:
    """Partition values -> parameters of an index table of ix (hopshive.index.* only)."""
    with thrift_client(port, user="root") as client:
        return {tuple(p.values): {k: v for k, v in p.parameters.items() if k.startswith("hopshive.index.")}
                for p in client.get_partitions("ix", table, -1)}


def index_names(port: int, table: str) -> list[str]:
    with thrift_client(port, hive2=True, user="root") as client:
        return client.get_index_names("ix", table, -1)


@pytest.mark.parametrize("handler, kind, places", [
    ("COMPACT", "compact", ["_bucketname", "_offsets"]),
    ("org.apache.hadoop.hive.ql.index.bitmap.BitmapIndexHandler", "bitmap", ["_bucketname", "_offset", "_bitmaps"]),
])
def test_lifecycle_through_spark_sql(stack, handler, kind, places):
    spark, port, *_ = stack
    assert ix.explain(spark, POINT).used is None          # no index yet: nothing consulted
    ix.ok(spark, [f"CREATE INDEX c ON TABLE ix.t (k) AS '{handler}' IDXPROPERTIES ('p'='1') COMMENT 'point lookups'"])
    assert ix.ask(spark, "SHOW INDEXES ON ix.t") == [["c", "t", "k", "ix__t_c__", kind, "point lookups"]]
    assert ix.ask(spark, "SHOW FORMATTED INDEXES ON t IN ix")[-1][0] == "idx_name"   # Hive's header row
    with thrift_client(port, user="root") as client:
        assert [c.name for c in client.get_table("ix", "ix__t_c__").sd.cols] == ["k", *places]
    explained = ix.explain(spark, POINT)
    assert f"index c ({kind} on k)" in explained.text and explained.fresh == (2, 2), explained.text
    assert explained.read == (1, 12), explained.text
    on, off = ix.on_off(spark, POINT)
    assert on == off and len(on) == 1, (on, off)
    assert set(index_partitions(port, "ix__t_c__")) == {("a",), ("b",)}
    ix.ok(spark, ["SET spark.hopshive.index.enabled=false"])
    assert ix.explain(spark, POINT).used is None
    ix.ok(spark, ["SET spark.hopshive.index.enabled=true", "DROP INDEX c ON ix.t"])
    assert index_names(port, "t") == [] and ix.explain(spark, POINT).used is None
    assert "Invalid index name c" in ix.ask(spark, "DROP INDEX c ON ix.t")["message"]
    ix.ok(spark, ["DROP INDEX IF EXISTS c ON ix.t"])


@pytest.mark.parametrize("statement, words", [
    ("CREATE INDEX e ON TABLE ix.v (k) AS 'COMPACT'", "is a VIRTUAL VIEW. Index on VIRTUAL VIEW is not supported"),
    ("CREATE INDEX e ON TABLE ix.t (k) AS 'org.example.NoSuchHandler'", "Error in loading index handler"),
    ("CREATE INDEX e ON TABLE ix.t (nope) AS 'COMPACT'", "Check the index columns, they should appear in the table"),
    ("CREATE INDEX e ON TABLE ix.t (k) AS 'COMPACT' STORED AS ORC", "only STORED AS PARQUET"),
    ("ALTER INDEX nope ON ix.t REBUILD", "Invalid index name nope"),
    ("CREATE INDEX ON ix.t (k)", "PARSE_SYNTAX_ERROR"),
])
def test_errors_in_hives_words(stack, statement, words):
    spark, *_ = stack
    answer = ix.ask(spark, statement)
    assert isinstance(answer, dict) and words in answer["message"], answer


def test_duplicate_name_is_refused(stack):
    spark, *_ = stack
    ix.ok(spark, ["CREATE INDEX d ON TABLE ix.t (s) AS 'COMPACT' WITH DEFERRED REBUILD"])
    try:
        answer = ix.ask(spark, "CREATE INDEX d ON TABLE ix.t (n) AS 'DATASKIPPING'")
        assert "Index already exists" in answer["message"], answer
    finally:
        ix.ok(spark, ["DROP INDEX d ON ix.t"])


def test_deferred_then_partition_rebuild_and_stale_partition(stack):
    """Deferred: nothing fresh until REBUILD; new data makes one partition stale (read whole,
    results still right); rebuilding that partition touches only it."""
    spark, port, *_ = stack
    ix.ok(spark, ["CREATE INDEX ds1 ON TABLE ix.t (k) AS 'DATASKIPPING' WITH DEFERRED REBUILD"])
    try:
        assert ix.explain(spark, POINT).fresh == (0, 2)
        ix.ok(spark, ["ALTER INDEX ds1 ON ix.t REBUILD"])
        explained = ix.explain(spark, POINT)
        assert explained.fresh == (2, 2) and explained.read == (1, 12), explained.text
        before = index_partitions(port, "ix__t_ds1__")
        ix.ok(spark, ["INSERT INTO ix.t PARTITION (ds='b') VALUES (77, 'late', 1)"])
        explained = ix.explain(spark, POINT)
        assert explained.fresh == (1, 2) and explained.read == (8, 13), explained.text   # b read whole
        on, off = ix.on_off(spark, POINT)
        assert on == off and len(on) == 2, (on, off)
        ix.ok(spark, ["ALTER INDEX ds1 ON ix.t PARTITION (ds='b') REBUILD"])
        after = index_partitions(port, "ix__t_ds1__")
        assert after[("a",)] == before[("a",)]
        assert after[("b",)]["hopshive.index.version"] != before[("b",)]["hopshive.index.version"]
        assert after[("b",)]["hopshive.index.baseFiles"] == "7"
        assert ix.explain(spark, POINT).read == (2, 13)
    finally:
        ix.ok(spark, ["ALTER TABLE ix.t DROP PARTITION (ds='b')",
                      f"INSERT INTO ix.t {ix._ROWS}, 'b' AS ds FROM range({ix.ROWS // 2}, {ix.ROWS})",
                      "DROP INDEX ds1 ON ix.t"])


def test_concurrent_rebuild_fails_and_a_killed_rebuild_leaves_the_old_index(stack):
    """A second session's rebuild is frozen once it has written into its staging directory; a
    rebuild here is refused (the index table's lock); the second session is killed -9; the old
    index still answers; once the lock expires, a rebuild succeeds and clears what was left."""
    spark, port, namenode, victim = stack
    ix.ok(spark, ["CREATE INDEX kc ON TABLE ix.u (k) AS 'COMPACT'"])
    point = "SELECT k, s FROM ix.u WHERE k = 77"
    version = index_table_version(port)
    try:
        jvm = ix.freeze_mid_rebuild(victim, "ALTER INDEX kc ON ix.u REBUILD", lambda: staging_dirs(namenode))
        refused = ix.ask(spark, "ALTER INDEX kc ON ix.u REBUILD")
        assert "is being rebuilt by another session" in refused["message"], refused
        os.kill(jvm, signal.SIGKILL)
    finally:
        victim.close()
    assert index_table_version(port) == version
    explained = ix.explain(spark, point)
    assert explained.read == (1, 4), explained.text
    on, off = ix.on_off(spark, point)
    assert on == off and len(on) == 1, (on, off)
    wait_until(lambda: not isinstance(ix.ask(spark, "ALTER INDEX kc ON ix.u REBUILD"), dict), LOCK_TIMEOUT * 3,
               lambda _: "the killed rebuild's lock did not expire")
    assert index_table_version(port) != version and not staging_dirs(namenode)
    ix.ok(spark, ["DROP INDEX kc ON ix.u"])


def index_table_version(port: int) -> str:
    with thrift_client(port, user="root") as client:
        return client.get_table("ix", "ix__u_kc__").parameters["hopshive.index.version"]


def staging_dirs(namenode) -> list[str]:
    url = f"{namenode.url}/webhdfs/v1/user/hive/warehouse/ix.db/ix__u_kc__?op=LISTSTATUS&user.name=hdfs"
    return ix.staging_names(requests.get(url, timeout=10).json()["FileStatuses"]["FileStatus"])


def test_only_the_named_row_groups_of_a_file_are_read(stack):
    """One file of many small row groups, sorted on s: the bitmap index on s names the few holding
    a value, the data-skipping index on k (its bloom filter: k is unsorted, so min/max cannot)
    the one holding a key; the rows are Spark's without them.  The bitmap index holds, per value
    and row group, the bitmap of the rows of the row group holding it: every row of the file once."""
    spark, port, *_ = stack
    ix.ok(spark, ["CREATE TABLE ix.r (k BIGINT, s STRING) USING parquet OPTIONS ('parquet.block.size'='8192')",
                  "INSERT INTO ix.r SELECT /*+ REPARTITION(1) */ k, s FROM ix.u SORT BY s",   # k still unsorted
                  "CREATE INDEX rb ON TABLE ix.r (s) AS 'BITMAP'"])
    try:
        named_rows, groups = bitmap_rows(spark, port)
        assert named_rows == ix.ask(spark, "SELECT _metadata.row_index, s FROM ix.r") and groups > 1, groups
        explained = ix.explain(spark, "SELECT * FROM ix.r WHERE s = 's7'")
        assert "index rb (bitmap on s)" in explained.text and explained.read == (1, 1), explained.text
        named = int(re.search(r"(\d+) row groups named", explained.text)[1])
        on, off = ix.on_off(spark, "SELECT * FROM ix.r WHERE s = 's7'")
        assert on == off and on and 0 < named < groups, (named, on, off)
        ix.ok(spark, ["DROP INDEX rb ON ix.r", "CREATE INDEX rg ON TABLE ix.r (k) AS 'DATASKIPPING'"])
        explained = ix.explain(spark, "SELECT * FROM ix.r WHERE k = 77")
        assert explained.read == (1, 1) and "; 1 row groups named in 1 files read" in explained.text, explained.text
        for query in ("SELECT * FROM ix.r WHERE k = 77", "SELECT * FROM ix.r WHERE k IN (5, 77, 2999)"):
            on, off = ix.on_off(spark, query)
            assert on == off and on, (query, on, off)
    finally:
        ix.ok(spark, ["DROP TABLE ix.r"])


def test_cascades(stack):
    """Dropping a base partition drops the index partition; DROP TABLE of the index table is
    refused; dropping the base table drops the index and its table."""
    spark, port, *_ = stack
    ix.ok(spark, ["CREATE TABLE ix.c (k BIGINT, ds STRING) USING parquet PARTITIONED BY (ds)",
                  "INSERT INTO ix.c VALUES (1, 'a'), (2, 'b')",
                  "CREATE INDEX cc ON TABLE ix.c (k) AS 'COMPACT'",
                  "ALTER TABLE ix.c DROP PARTITION (ds='a')"])
    assert set(index_partitions(port, "ix__c_cc__")) == {("b",)}
    refused = ix.ask(spark, "DROP TABLE ix.ix__c_cc__")
    assert isinstance(refused, dict), refused
    assert index_names(port, "c") == ["cc"]
    ix.ok(spark, ["DROP TABLE ix.c"])
    with thrift_client(port, user="root") as client:
        assert "ix__c_cc__" not in client.get_all_tables("ix")


def bitmap_rows(spark, port: int) -> tuple[list[list[str]], int]:
    """(row index in the file, s) of every row ix.r's bitmap index rb names, sorted as ask sorts,
    and the number of row groups it names: a row group's first row is the sum of the rows of the
    row groups before it (offsets ascend), and its rows are those its bitmaps hold."""
    with thrift_client(port, user="root") as client:
        table = client.get_table("ix", "ix__r_rb__")
    data = f"{table.sd.location}/v{table.parameters['hopshive.index.version']}"
    rows = ix.ask(spark, f"SELECT _offset, s, concat_ws(',', _bitmaps) FROM parquet.`{data}`")
    groups: dict[int, list[tuple[str, list[int]]]] = {}
    for offset, s, code in rows:
        groups.setdefault(int(offset), []).append((s, ix.bitmap_positions([int(w) for w in code.split(",")])))
    named, first = [], 0
    for offset in sorted(groups):
        held = sorted(p for _, positions in groups[offset] for p in positions)
        assert held == list(range(len(held))), f"row group at {offset}: rows held more or less than once"
        named += [[str(first + p), s] for s, positions in groups[offset] for p in positions]
        first += len(held)
    return sorted(named), len(groups)


@pytest.fixture(scope="module")
def indexed(stack):
    """ix.t with a data-skipping index on (k, n, s), a compact one on s and a bitmap one on (n, s)."""
    spark, *_ = stack
    ix.ok(spark, ix.PROPERTY_INDEXES)
    yield spark
    ix.ok(spark, ix.DROP_PROPERTY_INDEXES)


@hsettings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(predicate=ix.PREDICATES)
def test_rows_with_and_without_indexes_are_equal(indexed, predicate):
    on, off = ix.on_off(indexed, f"SELECT k, s, n, ds FROM ix.t WHERE {predicate}")
    assert on == off, predicate


def test_point_lookups_skip_files(indexed):
    """The property test's indexes do skip: an equality on the key reads 1 of 12 files, one on
    a string no file holds reads none."""
    assert ix.explain(indexed, "SELECT * FROM ix.t WHERE k = 5").read == (1, 12)
    assert ix.explain(indexed, "SELECT * FROM ix.t WHERE s = 'absent'").read == (0, 12)
