"""A namenode, a metastore and the platform API on fresh schemas, shared by a module
(imported by tests/component/test_platform.py and test_server2.py)."""

from __future__ import annotations

import pytest

from hopshive.core.db import Database
from tests.support.metastore import MetastoreProcess, settings
from tests.support.namenode import NamenodeServer
from tests.support.schemas import reset_schemas
from tests.support.server2 import ADMIN, PlatformProcess


@pytest.fixture(scope="module")
def platform_stack(mariadb, tmp_path_factory):
    base = tmp_path_factory.mktemp("platform-stack")
    database = Database(mariadb.config)
    reset_schemas(database)
    namenode = NamenodeServer(base / "namenode", mariadb.config, workers=1).start()
    metastore = MetastoreProcess(base / "metastore", settings(mariadb.config, namenode.address)).start()
    # A window far longer than the module runs: on a loaded host a 60 s window expired the
    # earlier tests' failures before the per-address limit was reached.  Loopback is the
    # trusted proxy (server2 runs there); tests log in from other 127.x addresses too.
    platform = PlatformProcess(base / "platform", mariadb.config, namenode.url, metastore.port,
                               max_failures=3, max_address_failures=8, failure_window=3600,
                               trusted_proxies=["127.0.0.1"]).start()
    added = platform.cli("user", "add", "--email", ADMIN[0], "--password-stdin", "--admin", stdin=ADMIN[1] + "\n")
    assert added.returncode == 0, added.stderr
    yield {"base": base, "db": database, "namenode": namenode, "metastore": metastore, "platform": platform}
    codes = [platform.stop(), metastore.stop(), namenode.stop()]
    database.close()
    assert codes == [0, 0, 0], platform.log_tail()
