"""Fixtures shared by unit and component tests."""

from __future__ import annotations

import pytest

from hopshive.core.db import Database
from hopshive.core.migrations import upgrade
from hopshive.core.schematool import COMPONENTS
from tests.support.mariadb import MariaDBServer


def pytest_collection_modifyitems(items):
    """Tests under tests/unit are `unit`; everything else under tests/ is `component`."""
    for item in items:
        path = str(item.fspath)
        if "/tests/unit/" in path:
            item.add_marker(pytest.mark.unit)
        elif "/tests/" in path:
            item.add_marker(pytest.mark.component)


@pytest.fixture(scope="session")
def mariadb(tmp_path_factory):
    server = MariaDBServer(tmp_path_factory.mktemp("mariadb")).start()
    yield server
    server.stop()


@pytest.fixture
def db(mariadb):
    """A connection pool on freshly created `hops` and `metastore` schemas."""
    database = Database(mariadb.config)
    with database.transaction() as tx:
        tx.execute("DROP DATABASE IF EXISTS platform")
        tx.execute("DROP DATABASE IF EXISTS metastore")
        tx.execute("DROP DATABASE IF EXISTS hops")
    for component in COMPONENTS.values():
        upgrade(database, component)
    yield database
    database.close()
