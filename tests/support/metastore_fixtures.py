"""Metastore fixtures, imported by the tests/*/test_metastore_*.py modules that use them."""

from __future__ import annotations

import pytest

from hopshive.metastore.api import api
from tests.support.metastore import InThreadMetastore, settings, thrift_client

FAKE_NAMENODE = "127.0.0.1:1"   # in-thread tests: the metastore writes the namespace itself
WAREHOUSE = f"webhdfs://{FAKE_NAMENODE}/user/hive/warehouse"


@pytest.fixture
def metastore(db):
    """A metastore in this process on fresh schemas (its namespace is the same database)."""
    server = InThreadMetastore(settings(db.config, FAKE_NAMENODE)).start()
    yield server
    server.stop()


@pytest.fixture
def hms(metastore):
    with thrift_client(metastore.port) as client:
        yield client


@pytest.fixture
def hms2(metastore):
    with thrift_client(metastore.port, hive2=True) as client:
        yield client


def columns(*specs: str) -> list:
    """``columns("a int", "b string")``."""
    return [api.FieldSchema(*spec.split(" ", 1), None) for spec in specs]


def table(db: str, name: str, cols=("a int", "b string"), parts=(), location=None, external=False, params=None):
    sd = api.StorageDescriptor(
        cols=columns(*cols), location=location,
        inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat", compressed=False, numBuckets=-1,
        serdeInfo=api.SerDeInfo(None, "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", {"serialization.format": "1"}),
        bucketCols=[], sortCols=[], parameters={})
    return api.Table(tableName=name, dbName=db, owner="alice", createTime=0, lastAccessTime=0, retention=0, sd=sd,
                     partitionKeys=columns(*parts), parameters=dict(params or {}, **({"EXTERNAL": "TRUE"} if external else {})),
                     tableType="EXTERNAL_TABLE" if external else "MANAGED_TABLE")


def partition(tbl, values, location=None):
    import copy
    sd = copy.deepcopy(tbl.sd)
    sd.location = location
    return api.Partition(values=list(values), dbName=tbl.dbName, tableName=tbl.tableName, createTime=0,
                         lastAccessTime=0, sd=sd, parameters={})
