"""Metastore fixtures, imported by the tests/*/test_metastore_*.py modules that use them."""

from __future__ import annotations

import pytest

from typing import Iterator

from tests.support.hms import columns, partition, table  # noqa: F401 (re-exported for the test modules)
from tests.support.metastore import InThreadMetastore, settings, thrift_client

FAKE_NAMENODE = "127.0.0.1:1"   # in-thread tests: the metastore writes the namespace itself
WAREHOUSE = f"webhdfs://{FAKE_NAMENODE}/user/hive/warehouse"


def start_in_thread(db, **metastore) -> InThreadMetastore:
    """A metastore in this process on ``db`` with these ``metastore`` settings (and
    ``security``, the mode)."""
    return InThreadMetastore(settings(db.config, FAKE_NAMENODE, **metastore)).start()


def running(db, **metastore) -> Iterator[InThreadMetastore]:
    """For a fixture: ``yield from running(db, ...)``."""
    server = start_in_thread(db, **metastore)
    yield server
    server.stop()


@pytest.fixture
def store_backend():
    """The metastore's store; a test module runs on both with ``store_backend = both_stores``."""
    return "mysql"


@pytest.fixture(params=["mysql", "hbase"])
def both_stores(request):
    return request.param


@pytest.fixture(scope="session")
def hbase_server(tmp_path_factory):
    from tests.support.hbase import HBaseServerProcess
    server = HBaseServerProcess(tmp_path_factory.mktemp("hbase-store")).start()
    yield server
    server.stop()


def store_settings(request, backend: str) -> dict:
    """metastore settings for a backend; the HBase store gets fresh tables per test (a prefix)."""
    if backend != "hbase":
        return {}
    server = request.getfixturevalue("hbase_server")
    _counter[0] += 1
    return {"backend": "hbase", "hbase": {"port": server.port, "table_prefix": f"t{_counter[0]}_", "pool_size": 4}}


_counter = [0]


@pytest.fixture
def metastore(db, store_backend, request):
    """A metastore in this process on fresh schemas (its namespace is the same database)."""
    extra = store_settings(request, store_backend)
    config = settings(db.config, FAKE_NAMENODE, **{k: v for k, v in extra.items() if k != "hbase"})
    config["hbase"].update(extra.get("hbase", {}))
    server = InThreadMetastore(config).start()
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


@pytest.fixture
def fs(metastore, namespace):
    """The namespace as a file-system user would act on it (the `hdfs` superuser, through a
    namenode of its own, as WebHDFS would)."""
    caller = namespace.caller("hdfs")

    class Fs:
        def exists(self, path):
            return namespace.db.run(lambda tx: namespace.resolve(tx, path)) is not None

        def delete(self, path, skip_trash=True):
            return namespace.delete(caller, path, True, skip_trash)

        def rename(self, src, dst):
            return namespace.rename(caller, src, dst)

        def mkdirs(self, path, permission=None):
            return namespace.mkdirs(caller, path, permission)

        def write(self, path):
            namespace.start_file(caller, path, False, None, 1, 1 << 20, ("test", "127.0.0.1"))
    return Fs()
