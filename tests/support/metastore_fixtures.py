"""Metastore fixtures, imported by the tests/*/test_metastore_*.py modules that use them."""

from __future__ import annotations

import pytest

from tests.support.hms import columns, partition, table  # noqa: F401 (re-exported for the test modules)
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
