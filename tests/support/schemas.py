"""Fresh `hops` and `metastore` schemas on the private MariaDB."""

from __future__ import annotations

from hopshive.core.db import Database
from hopshive.core.migrations import upgrade
from hopshive.core.schematool import COMPONENTS


def reset_schemas(database: Database) -> None:
    """Drop and re-create every schema (in dependency order: metastore refers to hops)."""
    with database.transaction() as tx:
        tx.execute("DROP DATABASE IF EXISTS platform")
        tx.execute("DROP DATABASE IF EXISTS metastore")
        tx.execute("DROP DATABASE IF EXISTS hops")
    for component in COMPONENTS.values():
        upgrade(database, component)
