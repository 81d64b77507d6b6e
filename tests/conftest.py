"""Fixtures shared by unit and component tests."""

from __future__ import annotations

import pytest

from hopshive.core.db import Database
from tests.support.mariadb import MariaDBServer
from tests.support.schemas import reset_schemas


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
    reset_schemas(database)
    yield database
    database.close()
