"""Fresh `hops`, `metastore` and `platform` schemas on the private MariaDB, for every test.

Running every migration takes 2–3 s, and over 300 component tests want fresh schemas: so the
first reset on a server migrates and keeps a copy of the rows the migrations seeded, and the
next resets empty the tables a test wrote, put the seeded rows back and rewind the
auto-increment counters.  When a test changed the schemas' structure (a column, an index, a
table), the next reset sees it and migrates from scratch again.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from hopshive.core.db import Database
from hopshive.core.migrations import upgrade
from hopshive.core.schematool import COMPONENTS

SCHEMAS = tuple(component.schema for component in COMPONENTS.values())   # in dependency order
SEED_SCHEMA = "hopshive_test_seed"
_IN = ", ".join(f"'{name}'" for name in SCHEMAS)


@dataclass
class _Snapshot:
    structure: str
    tables: list[str]                      # "schema.table", every base table
    seeded: list[str]                      # tables the migrations left rows in
    counters: dict[str, int]               # table -> AUTO_INCREMENT right after migrating


_snapshots: dict[tuple, _Snapshot] = {}


def reset_schemas(database: Database) -> None:
    """Make every schema as the migrations leave it (in dependency order: metastore refers
    to hops)."""
    key = (database.config.get("unix_socket"), database.config.get("port"))
    snapshot = _snapshots.get(key)
    with database.transaction() as tx:
        if snapshot is not None and _structure(tx) == snapshot.structure:
            _empty(tx, snapshot)
            return
    _snapshots.pop(key, None)
    _migrate(database)
    with database.transaction() as tx:
        _snapshots[key] = _take_snapshot(tx)


def _migrate(database: Database) -> None:
    with database.transaction() as tx:
        for schema in reversed(SCHEMAS):
            tx.execute(f"DROP DATABASE IF EXISTS `{schema}`")
    for component in COMPONENTS.values():
        upgrade(database, component)


def _structure(tx) -> str:
    """A digest of the schemas' tables, columns, indexes and foreign keys."""
    digest = hashlib.sha256()
    for query in (
        "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, ENGINE FROM information_schema.TABLES"
        f" WHERE TABLE_SCHEMA IN ({_IN}) ORDER BY 1, 2",
        "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, EXTRA"
        f" FROM information_schema.COLUMNS WHERE TABLE_SCHEMA IN ({_IN}) ORDER BY 1, 2, ORDINAL_POSITION",
        "SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, NON_UNIQUE"
        f" FROM information_schema.STATISTICS WHERE TABLE_SCHEMA IN ({_IN}) ORDER BY 1, 2, 3, 4",
        "SELECT CONSTRAINT_SCHEMA, CONSTRAINT_NAME, TABLE_NAME, REFERENCED_TABLE_NAME, DELETE_RULE, UPDATE_RULE"
        f" FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA IN ({_IN}) ORDER BY 1, 2",
    ):
        digest.update(repr(tx.query(query)).encode())
    return digest.hexdigest()


def _seed_name(table: str) -> str:
    return f"`{SEED_SCHEMA}`.`{table.replace('.', '__')}`"


def _quoted(table: str) -> str:
    schema, name = table.split(".", 1)
    return f"`{schema}`.`{name}`"


def _counters(tx) -> dict[str, int]:
    return {table: int(value) for table, value in tx.query(
        "SELECT CONCAT(TABLE_SCHEMA, '.', TABLE_NAME), AUTO_INCREMENT FROM information_schema.TABLES"
        f" WHERE TABLE_SCHEMA IN ({_IN}) AND AUTO_INCREMENT IS NOT NULL")}


def _nonempty(tx, tables: list[str]) -> list[str]:
    """The tables holding at least one row (one statement for all of them)."""
    return [row[0] for row in tx.query(" UNION ALL ".join(
        f"SELECT '{table}' FROM DUAL WHERE EXISTS (SELECT 1 FROM {_quoted(table)})" for table in tables))]


def _take_snapshot(tx) -> _Snapshot:
    tables = [row[0] for row in tx.query(
        "SELECT CONCAT(TABLE_SCHEMA, '.', TABLE_NAME) FROM information_schema.TABLES"
        f" WHERE TABLE_SCHEMA IN ({_IN}) AND TABLE_TYPE = 'BASE TABLE' ORDER BY 1")]
    seeded = _nonempty(tx, tables)
    tx.execute(f"DROP DATABASE IF EXISTS `{SEED_SCHEMA}`")
    tx.execute(f"CREATE DATABASE `{SEED_SCHEMA}`")
    for table in seeded:
        tx.execute(f"CREATE TABLE {_seed_name(table)} AS SELECT * FROM {_quoted(table)}")
    return _Snapshot(_structure(tx), tables, seeded, _counters(tx))


def _empty(tx, snapshot: _Snapshot) -> None:
    """Delete every row a test left, restore the seeded ones and the counters."""
    dirty = set(_nonempty(tx, snapshot.tables)) | set(snapshot.seeded)
    tx.execute("SET FOREIGN_KEY_CHECKS = 0")
    try:
        for table in sorted(dirty):
            tx.execute(f"DELETE FROM {_quoted(table)}")
        for table in snapshot.seeded:
            tx.execute(f"INSERT INTO {_quoted(table)} SELECT * FROM {_seed_name(table)}")
        for table, value in _counters(tx).items():
            if value != snapshot.counters.get(table, value):
                tx.execute(f"ALTER TABLE {_quoted(table)} AUTO_INCREMENT = {snapshot.counters[table]}")
    finally:
        tx.execute("SET FOREIGN_KEY_CHECKS = 1")
