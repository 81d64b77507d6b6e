"""Hive indexes on Spark against the metastore on its HBase store (our HBase Thrift server):
the index DDL lifecycle through PySpark with HopsHive's extension -- create, SHOW, queries
that read only the files the index names, deferred and partition rebuilds, a stale partition
read whole, DROP INDEX -- what the Hive 2 index calls answer meanwhile, and the cascades.
The MariaDB store's counterpart, with the property test, is test_indexes_spark.py; this
module keeps to what differs by store.  One Spark session for the module."""

from __future__ import annotations

import pytest

from tests.support import index_workload as ix
from tests.support.index_stack import index_stack
from tests.support.metastore import thrift_client

pytestmark = [pytest.mark.metastore, pytest.mark.spark]
POINT = "SELECT k, s, n, ds FROM ix.t WHERE k = 77"     # a row of partition a


@pytest.fixture(scope="module")
def stack(mariadb, tmp_path_factory):
    with index_stack(mariadb, tmp_path_factory.mktemp("indexes-hbase"), backend="hbase") as made:
        yield made.spark, made.port


def index_partitions(port: int, table: str) -> dict:
    """Partition values -> hopshive.index.version of an index table of ix."""
    with thrift_client(port, user="root") as client:
        return {tuple(p.values): p.parameters.get("hopshive.index.version")
                for p in client.get_partitions("ix", table, -1)}


def test_lifecycle(stack):
    spark, port = stack
    ix.ok(spark, ["CREATE INDEX c ON TABLE ix.t (k) AS 'COMPACT' IDXPROPERTIES ('p'='1') COMMENT 'point lookups'"])
    assert ix.ask(spark, "SHOW INDEXES ON ix.t") == [["c", "t", "k", "ix__t_c__", "compact", "point lookups"]]
    with thrift_client(port, hive2=True, user="root") as client:
        assert client.get_index_names("ix", "t", -1) == ["c"]
        made = client.get_index_by_name("ix", "t", "c")
        assert (made.indexTableName, made.parameters["p"]) == ("ix__t_c__", "1")
        assert made.indexHandlerClass == "org.apache.hadoop.hive.ql.index.compact.CompactIndexHandler"
        table = client.get_table("ix", "ix__t_c__")
        assert table.tableType == "INDEX_TABLE" and [c.name for c in table.sd.cols] == ["k", "_bucketname", "_offsets"]
    explained = ix.explain(spark, POINT)
    assert "index c (compact on k)" in explained.text and explained.fresh == (2, 2), explained.text
    assert explained.read == (1, 12), explained.text
    on, off = ix.on_off(spark, POINT)
    assert on == off and len(on) == 1, (on, off)
    assert all(index_partitions(port, "ix__t_c__").values())
    ix.ok(spark, ["DROP INDEX c ON ix.t"])
    with thrift_client(port, hive2=True, user="root") as client:
        assert client.get_index_names("ix", "t", -1) == []
        assert "ix__t_c__" not in client.get_all_tables("ix")
    assert ix.explain(spark, POINT).used is None
    assert "Invalid index name c" in ix.ask(spark, "DROP INDEX c ON ix.t")["message"]


def test_deferred_and_partition_rebuild(stack):
    """Nothing fresh until REBUILD; new data makes partition b stale (read whole, rows still
    right); rebuilding b gives it a new version and leaves a's."""
    spark, port = stack
    ix.ok(spark, ["CREATE INDEX d ON TABLE ix.u (k) AS 'DATASKIPPING' WITH DEFERRED REBUILD",
                  "CREATE INDEX ds1 ON TABLE ix.t (k) AS 'DATASKIPPING' WITH DEFERRED REBUILD"])
    try:
        assert "Index already exists" in ix.ask(spark, "CREATE INDEX d ON TABLE ix.u (n) AS 'COMPACT'")["message"]
        assert ix.explain(spark, POINT).fresh == (0, 2)
        ix.ok(spark, ["ALTER INDEX ds1 ON ix.t REBUILD", "ALTER INDEX d ON ix.u REBUILD"])
        assert ix.explain(spark, POINT).read == (1, 12)
        assert ix.explain(spark, "SELECT * FROM ix.u WHERE k = 77").read == (1, 4)
        before = index_partitions(port, "ix__t_ds1__")
        ix.ok(spark, ["INSERT INTO ix.t PARTITION (ds='b') VALUES (77, 'late', 1)"])
        explained = ix.explain(spark, POINT)
        assert explained.fresh == (1, 2) and explained.read == (8, 13), explained.text
        on, off = ix.on_off(spark, POINT)
        assert on == off and len(on) == 2, (on, off)
        ix.ok(spark, ["ALTER INDEX ds1 ON ix.t PARTITION (ds='b') REBUILD"])
        after = index_partitions(port, "ix__t_ds1__")
        assert after[("a",)] == before[("a",)] and after[("b",)] != before[("b",)]
        assert ix.explain(spark, POINT).read == (2, 13)
    finally:
        ix.ok(spark, ["DROP INDEX d ON ix.u", "DROP INDEX ds1 ON ix.t"])


def test_cascades(stack):
    """(With a bitmap index.)  A base partition drop drops the index partition; DROP TABLE of the index table is
    refused; DROP TABLE of the base table drops the index and its table."""
    spark, port = stack
    ix.ok(spark, ["CREATE TABLE ix.c (k BIGINT, ds STRING) USING parquet PARTITIONED BY (ds)",
                  "INSERT INTO ix.c VALUES (1, 'a'), (2, 'b')",
                  "CREATE INDEX cc ON TABLE ix.c (k) AS 'BITMAP'",
                  "ALTER TABLE ix.c DROP PARTITION (ds='a')"])
    assert set(index_partitions(port, "ix__c_cc__")) == {("b",)}
    assert isinstance(ix.ask(spark, "DROP TABLE ix.ix__c_cc__"), dict)
    ix.ok(spark, ["DROP TABLE ix.c"])
    with thrift_client(port, hive2=True, user="root") as client:
        assert "ix__c_cc__" not in client.get_all_tables("ix")
