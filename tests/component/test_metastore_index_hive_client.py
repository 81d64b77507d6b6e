"""Hive 2.3.10's own metastore client (HiveMetaStoreClient, from the jars inside the pyspark
wheel, driven through py4j) makes the index calls against our metastore, on both stores:
the client a Hive 2.3 CREATE/ALTER/DROP INDEX runs, and its exceptions as Hive raises them."""

from __future__ import annotations

import os

import pytest

from tests.support.hms import COMPACT
from tests.support.metastore_fixtures import both_stores, fs, hbase_server, hms, metastore, table  # noqa: F401

store_backend = both_stores

pytestmark = [pytest.mark.metastore, pytest.mark.spark]
INDEX_TABLE = "default__t_x__"
API = "org.apache.hadoop.hive.metastore.api."


@pytest.fixture(scope="module")
def jvm():
    """A JVM with pyspark's jars (Hive 2.3.10's metastore client among them); the client's
    user (set_ugi) is alice."""
    from pyspark.java_gateway import launch_gateway
    before = os.environ.get("HADOOP_USER_NAME")
    os.environ["HADOOP_USER_NAME"] = "alice"
    try:
        gateway = launch_gateway()
    finally:
        if before is None:
            os.environ.pop("HADOOP_USER_NAME")
        else:
            os.environ["HADOOP_USER_NAME"] = before
    yield gateway.jvm
    gateway.shutdown()


@pytest.fixture
def client(jvm, metastore):
    conf = jvm.org.apache.hadoop.hive.conf.HiveConf()
    conf.set("hive.metastore.uris", f"thrift://127.0.0.1:{metastore.port}")
    conf.set("hive.metastore.sasl.enabled", "false")   # this metastore is in simple mode, whatever hive-site.xml says
    java = jvm.org.apache.hadoop.hive.metastore.HiveMetaStoreClient(conf)
    yield java
    java.close()


def java_list(jvm, items):
    found = jvm.java.util.ArrayList()
    for item in items:
        found.add(item)
    return found


def hive_index(jvm, base, name: str, column: str):
    """(Index, index Table) as Hive 2.3's Hive.createIndex builds them for the compact handler."""
    api = jvm.org.apache.hadoop.hive.metastore.api
    covered = [c for c in base.getSd().getCols() if c.getName() == column]
    sd = base.getSd().deepCopy()
    sd.setCols(java_list(jvm, covered))
    sd.setLocation(None)
    index = api.Index()
    index.setIndexName(name)
    index.setIndexHandlerClass(COMPACT)
    index.setDbName(base.getDbName())
    index.setOrigTableName(base.getTableName())
    index.setIndexTableName(f"{base.getDbName()}__{base.getTableName()}_{name}__")
    index.setSd(sd)
    index.setDeferredRebuild(True)
    index.setParameters(jvm.java.util.HashMap())
    table_sd = sd.deepCopy()
    table_sd.setCols(java_list(jvm, [*covered, api.FieldSchema("_bucketname", "string", ""),
                                     api.FieldSchema("_offsets", "array<bigint>", "")]))
    index_table = base.deepCopy()
    index_table.setTableName(index.getIndexTableName())
    index_table.setTableType("INDEX_TABLE")
    index_table.setSd(table_sd)
    index_table.setParameters(jvm.java.util.HashMap())
    return index, index_table


def java_error(call) -> tuple[str, str]:
    """(class name, message) of the Hive exception a client call raised."""
    from py4j.protocol import Py4JJavaError
    with pytest.raises(Py4JJavaError) as raised:
        call()
    error = raised.value.java_exception
    return error.getClass().getName(), error.getMessage()


def test_hive_2_3_client_runs_the_index_lifecycle(jvm, client, hms, fs):
    hms.create_table(table("default", "t", cols=("a int", "b string"), parts=("ds string",)))
    index, index_table = hive_index(jvm, client.getTable("default", "t"), "x", "b")
    client.createIndex(index, index_table)
    assert list(client.listIndexNames("default", "t", -1)) == ["x"]
    got = client.getIndex("default", "t", "x")
    assert (got.getIndexTableName(), got.getIndexHandlerClass(), got.isDeferredRebuild()) == (INDEX_TABLE, COMPACT,
                                                                                              True)
    assert [c.getName() for c in got.getSd().getCols()] == ["b"]
    assert [i.getIndexName() for i in client.listIndexes("default", "t", -1)] == ["x"]
    made = client.getTable("default", INDEX_TABLE)
    assert made.getTableType() == "INDEX_TABLE" and [k.getName() for k in made.getPartitionKeys()] == ["ds"]
    assert fs.exists(f"/user/hive/warehouse/{INDEX_TABLE}")

    altered = got.deepCopy()
    altered.getParameters().put("k", "v")
    client.alter_index("default", "t", "x", altered)
    assert client.getIndex("default", "t", "x").getParameters().get("k") == "v"

    assert java_error(lambda: client.createIndex(index, index_table)) == (
        API + "AlreadyExistsException", "Index already exists: default.t.x")
    assert java_error(lambda: client.getIndex("default", "t", "y")) == (
        API + "NoSuchObjectException", "default.t index=y not found")
    # Hive's client refuses this itself; our server refuses it to every other client
    # (test_metastore_indexes.test_hive_errors)
    assert java_error(lambda: client.dropTable("default", INDEX_TABLE))[0] == "java.lang.UnsupportedOperationException"

    assert client.dropIndex("default", "t", "x", True) is True
    assert list(client.listIndexes("default", "t", -1)) == []
    assert not fs.exists(f"/user/hive/warehouse/{INDEX_TABLE}")


def test_hive_2_3_client_is_told_a_view_cannot_be_indexed(jvm, client, hms):
    view = table("default", "v")
    view.tableType, view.viewOriginalText, view.viewExpandedText = "VIRTUAL_VIEW", "select 1", "select 1"
    view.sd.location = None
    hms.create_table(view)
    index, index_table = hive_index(jvm, client.getTable("default", "v"), "x", "a")
    assert java_error(lambda: client.createIndex(index, index_table)) == (
        API + "InvalidObjectException", "tableName=v is a VIRTUAL VIEW. Index on VIRTUAL VIEW is not supported.")
