"""Fixtures for namespace component tests."""

from __future__ import annotations

import itertools
import os

import pytest

from hopshive.core.db import Database
from hopshive.namespace.liveness import Liveness
from hopshive.namespace.namespace import Namespace
from tests.support.library import namespace_config
# The metastore's store for every module using the metastore fixture (mysql unless a module
# sets ``store_backend = both_stores``) and our HBase server for the hbase store.
from tests.support.metastore_fixtures import both_stores, hbase_server, store_backend  # noqa: F401
from tests.support.namenode import SUPERUSER, NamenodeServer
from tests.support.schemas import reset_schemas
from tests.support.webhdfs import Target


@pytest.fixture
def namespace(db, tmp_path):
    liveness = Liveness(db, "127.0.0.1:0", dead_after=10.0)
    liveness.register()
    return Namespace(db, namespace_config(tmp_path / "data"), "127.0.0.1:0", liveness)


@pytest.fixture
def peer_namespace(db, tmp_path):
    """Make more namenodes on the same database (``peer_namespace()`` -> a registered
    Namespace with its own address and block directory), e.g. one to crash."""
    count = itertools.count(1)

    def make() -> Namespace:
        address = f"127.0.0.1:{next(count)}"
        liveness = Liveness(db, address, dead_after=10.0)
        liveness.register()
        return Namespace(db, namespace_config(tmp_path / f"data-{address}"), address, liveness)
    return make


# ------------------------------------------------------------------ WebHDFS namenode
WEBHDFS_URL_ENV = "HOPSHIVE_WEBHDFS_URL"
WEBHDFS_SUPERUSER_ENV = "HOPSHIVE_WEBHDFS_SUPERUSER"
EXTERNAL = os.environ.get(WEBHDFS_URL_ENV, "").rstrip("/")


@pytest.fixture
def namenode(db, tmp_path):
    """A private hopshive-namenode (2 workers) on this test's fresh schemas; stopped with
    SIGTERM at the end, which must make it exit within the grace period."""
    server = NamenodeServer(tmp_path / "namenode", db.config).start()
    yield server
    assert server.stop() == 0, server.log_tail()


@pytest.fixture(scope="module")
def webhdfs(request, tmp_path_factory):
    """The WebHDFS under test, shared by a module: $HOPSHIVE_WEBHDFS_URL (e.g. a real Hadoop
    namenode, http://nn:9870) when set, else our namenode on module-fresh schemas.  Tests
    work inside their own scratch directory, so they need no fresh server.

    A real cluster must use simple authentication, have the superuser named by
    $HOPSHIVE_WEBHDFS_SUPERUSER (default hdfs), let `svc` impersonate anyone
    (hadoop.proxyuser.svc.*=*) and keep a trash (fs.trash.interval > 0)."""
    if EXTERNAL:
        yield Target(EXTERNAL, os.environ.get(WEBHDFS_SUPERUSER_ENV, SUPERUSER))
        return
    database = Database(request.getfixturevalue("mariadb").config)
    reset_schemas(database)
    server = NamenodeServer(tmp_path_factory.mktemp("namenode"), database.config).start()
    yield Target(server.url, SUPERUSER, server, database)
    assert server.stop() == 0, server.log_tail()
    database.close()


@pytest.fixture
def ours_only():
    """Skip a test of HopsHive's own rules (where it is stricter than Hadoop) when
    $HOPSHIVE_WEBHDFS_URL points elsewhere."""
    if EXTERNAL:
        pytest.skip(f"{WEBHDFS_URL_ENV} is set: this test checks a HopsHive rule Hadoop does not have")


@pytest.fixture
def private_webhdfs(request):
    """A private namenode of our own as a Target, for tests that kill it or read its
    database (skipped when $HOPSHIVE_WEBHDFS_URL points elsewhere)."""
    if EXTERNAL:
        pytest.skip(f"{WEBHDFS_URL_ENV} is set: this test kills or inspects our own namenode")
    server = request.getfixturevalue("namenode")
    return Target(server.url, SUPERUSER, server, request.getfixturevalue("db"))


@pytest.fixture
def root(webhdfs, request):
    """A scratch directory owned by `alice` (755) for this test."""
    with webhdfs.scratch(request.node.name, "alice") as path:
        yield path


@pytest.fixture
def alice(webhdfs):
    return webhdfs.client("alice")


@pytest.fixture
def bob(webhdfs):
    return webhdfs.client("bob")
