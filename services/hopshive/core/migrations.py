"""Versioned schema migrations for the `hops` and `metastore` schemas.

A component's migrations are the files ``NNN_description.sql`` of one package directory,
applied in order; each applied one is a row of ``<schema>.SCHEMA_MIGRATIONS``, with its kind.  SQL
files may use ``{engine}`` (InnoDB here, ``ndbcluster`` on MySQL Cluster sites) and
``{schema}``.  DDL is not transactional in MariaDB, so each file is written to be re-runnable
(``IF NOT EXISTS``) and is recorded only once it has fully applied.
Each keeps the previous release's code working: expand, then contract (``migration_rules``).
So a release runs on a schema newer than its own as long as nothing newer contracted it:
that is the window of a rolling upgrade, where the new release migrated the schema and hosts
not reached yet still run the old code (or restart it after a crash).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

from .db import Database, Tx

_FILE = re.compile(r"^(\d{3})_([a-z0-9_]+)\.sql$")
_CREATE = re.compile(r"CREATE TABLE IF NOT EXISTS\s+`?\{schema\}`?\.`?(\w+)`?", re.I)
_CONTRACT_HEADER = re.compile(r"--\s*contract:\s*(\S.*)$", re.I)
EXPAND, CONTRACT = "expand", "contract"


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def contraction(self) -> str | None:
        """Why the migration contracts the schema, as its header comment declares
        (``-- contract: <why>``); None for an expansion."""
        for line in self.sql.splitlines():
            line = line.strip()
            if line and not line.startswith("--"):
                return None
            if match := _CONTRACT_HEADER.match(line):
                return match[1]
        return None

    @property
    def kind(self) -> str:
        return EXPAND if self.contraction is None else CONTRACT

    def statements(self, schema: str, engine: str) -> list[str]:
        text = self.sql.replace("{schema}", schema).replace("{engine}", engine)
        text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))
        return [part.strip() for part in re.split(r";\s*$", text, flags=re.M) if part.strip()]


@dataclass(frozen=True)
class Component:
    """One schema and the package holding its migrations."""

    name: str
    schema: str
    package: str

    def migrations(self) -> list[Migration]:
        found = []
        for entry in resources.files(self.package).iterdir():
            match = _FILE.match(entry.name)
            if match:
                found.append(Migration(int(match[1]), match[2], entry.read_text("utf-8")))
        return sorted(found, key=lambda m: m.version)

    def tables(self) -> set[str]:
        return {name for m in self.migrations() for name in _CREATE.findall(m.sql)}

    @property
    def latest(self) -> int:
        migrations = self.migrations()
        return migrations[-1].version if migrations else 0


def current_version(tx: Tx, component: Component) -> int | None:
    """The last applied migration, or None when the schema was never initialised."""
    exists = tx.query_one(
        "SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA=%s AND TABLE_NAME='SCHEMA_MIGRATIONS'",
        (component.schema,))
    if not exists:
        return None
    row = tx.query_one(f"SELECT MAX(version) FROM `{component.schema}`.SCHEMA_MIGRATIONS")
    return row[0] if row and row[0] is not None else 0


def upgrade(db: Database, component: Component, engine: str = "InnoDB") -> list[Migration]:
    """Apply every migration newer than the schema's version; returns those applied."""
    schema = component.schema
    with db.transaction() as tx:
        tx.execute(f"CREATE DATABASE IF NOT EXISTS `{schema}` CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin")
        tx.execute(f"CREATE TABLE IF NOT EXISTS `{schema}`.SCHEMA_MIGRATIONS ("
                   " version INT NOT NULL PRIMARY KEY, name VARCHAR(128) NOT NULL,"
                   " applied_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)) ENGINE=" + engine)
        # The kind came later (rolling upgrades): rows from before it are back-filled from
        # the files, which still carry their headers.
        tx.execute(f"ALTER TABLE `{schema}`.SCHEMA_MIGRATIONS ADD COLUMN IF NOT EXISTS"
                   f" kind ENUM('{EXPAND}', '{CONTRACT}') NOT NULL DEFAULT '{EXPAND}'")
        for migration in component.migrations():
            if migration.kind == CONTRACT:
                tx.execute(f"UPDATE `{schema}`.SCHEMA_MIGRATIONS SET kind = %s WHERE version = %s",
                           (CONTRACT, migration.version))
        version = current_version(tx, component) or 0
    applied = []
    for migration in component.migrations():
        if migration.version <= version:
            continue
        with db.transaction() as tx:
            for statement in migration.statements(schema, engine):
                tx.execute(statement)
            tx.execute(f"INSERT INTO `{schema}`.SCHEMA_MIGRATIONS (version, name, kind) VALUES (%s, %s, %s)",
                       (migration.version, migration.name, migration.kind))
        applied.append(migration)
    return applied


def validate(db: Database, component: Component, tables: set[str] | None = None) -> list[str]:
    """Problems that make the schema unusable by this release; empty when it is sound.
    ``tables``: the ones to look for (a least-privilege account sees only those it may use);
    default: all of the component's."""
    problems = []
    with db.transaction() as tx:
        version = current_version(tx, component)
        if version is None:
            return [f"schema {component.schema} is not initialised (run: hopshive-schematool init)"]
        if version < component.latest:
            problems.append(f"schema {component.schema} is at version {version}, "
                            f"this release needs {component.latest} (run: hopshive-schematool upgrade)")
        elif version > component.latest:
            problems += [f"schema {component.schema} was contracted by migration {newer} ({name}), newer than "
                         f"this release's {component.latest}: upgrade this host's HopsHive"
                         for newer, name in tx.query(
                             f"SELECT version, name FROM `{component.schema}`.SCHEMA_MIGRATIONS"
                             " WHERE version > %s AND kind = %s ORDER BY version", (component.latest, CONTRACT))]
        present = {row[0] for row in tx.query(
            "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA=%s", (component.schema,))}
    wanted = component.tables() if tables is None else tables
    problems += [f"table {component.schema}.{t} is missing" for t in sorted(wanted - present)]
    return problems
