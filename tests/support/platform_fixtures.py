"""A namenode, a metastore and the platform API on fresh schemas, shared by a module
(imported by tests/component/test_platform.py, test_server2.py and test_platform_secure.py).

``platform_stack`` runs the namenode and the metastore in security mode simple (the suites
written before tokens say who they are with user.name and set_ugi); ``secure_platform_stack``
runs both in token mode (#24), where only a proven identity is believed.  The platform
provisions with tokens it mints itself either way."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from hopshive.core.db import Database
from tests.support.metastore import MetastoreProcess, settings
from tests.support.namenode import NamenodeServer
from tests.support.schemas import reset_schemas
from tests.support.server2 import ADMIN, PlatformProcess


def running_stack(mariadb, base: Path, security: str, ca=None, **platform: object) -> Iterator[dict]:
    """Start the three services with the namenode and metastore in ``security`` mode, yield
    them ({"base", "db", "namenode", "metastore", "platform"}), stop them (each must obey
    SIGTERM).  With ``ca`` (tests.support.tls.TestCA) all three serve TLS with its
    certificate, and the platform verifies the other two with it."""
    database = Database(mariadb.config)
    reset_schemas(database)
    tls = {} if ca is None else dict(ca.server_settings(), tls_ca_file=str(ca.ca_file))
    namenode = NamenodeServer(base / "namenode", mariadb.config, workers=1, security=security, ca=ca).start()
    metastore = MetastoreProcess(base / "metastore",
                                 settings(mariadb.config, namenode.address, security=security, **tls)).start()
    # A window far longer than the module runs: on a loaded host a 60 s window expired the
    # earlier tests' failures before the per-address limit was reached.  Loopback is the
    # trusted proxy (server2 runs there); tests log in from other 127.x addresses too.
    options = dict(max_failures=3, max_address_failures=8, failure_window=3600, trusted_proxies=["127.0.0.1"])
    options.update(tls, metastore_tls=ca is not None)
    options.update(platform)
    platform_process = PlatformProcess(base / "platform", mariadb.config, namenode.url, metastore.port,
                                       **options).start()
    added = platform_process.cli("user", "add", "--email", ADMIN[0], "--password-stdin", "--admin",
                                 stdin=ADMIN[1] + "\n")
    assert added.returncode == 0, added.stderr
    yield {"base": base, "db": database, "namenode": namenode, "metastore": metastore, "platform": platform_process}
    codes = [platform_process.stop(), metastore.stop(), namenode.stop()]
    database.close()
    assert codes == [0, 0, 0], platform_process.log_tail()


@pytest.fixture(scope="module")
def platform_stack(mariadb, tmp_path_factory):
    yield from running_stack(mariadb, tmp_path_factory.mktemp("platform-stack"), "simple")


@pytest.fixture(scope="module")
def secure_platform_stack(mariadb, tmp_path_factory):
    """The namenode and the metastore in token mode; the platform's service tokens live 10
    minutes (so that a test can tell them from tokens of the default lifetime)."""
    yield from running_stack(mariadb, tmp_path_factory.mktemp("secure-platform-stack"), "token",
                             service_token_lifetime=600)
