"""Expand, then contract: every shipped migration keeps the rule, and the checker tells the two apart."""

from __future__ import annotations

import pytest

from hopshive.core.migration_rules import check
from hopshive.core.migrations import Migration
from hopshive.core.schematool import COMPONENTS

BASE = Migration(1, "base", """-- What the examples change.
CREATE TABLE IF NOT EXISTS {schema}.t (
  id BIGINT NOT NULL PRIMARY KEY,
  name VARCHAR(100) NOT NULL DEFAULT '',
  size INT NULL,
  price DECIMAL(10, 2) NOT NULL DEFAULT 0,
  KEY name_idx (name)
) ENGINE={engine};
""")
DROP = "ALTER TABLE {schema}.t DROP COLUMN size;"


def problems(sql: str) -> list[str]:
    """What the checker says of ``sql`` as the migration after BASE."""
    return check([BASE, Migration(2, "next", sql)])


@pytest.mark.parametrize("component", COMPONENTS.values(), ids=list(COMPONENTS))
def test_shipped_migrations_expand_or_say_they_contract(component):
    assert check(component.migrations()) == []


@pytest.mark.parametrize("sql", [
    "CREATE TABLE IF NOT EXISTS {schema}.u (\n  id INT NOT NULL,\n  t_id BIGINT NOT NULL,\n"
    "  CONSTRAINT u_t_fk FOREIGN KEY (t_id) REFERENCES {schema}.t (id)\n) ENGINE={engine};",
    "CREATE INDEX IF NOT EXISTS size_idx ON {schema}.t (size);",
    "CREATE VIEW IF NOT EXISTS {schema}.v AS SELECT id FROM {schema}.t;",
    "CREATE TRIGGER IF NOT EXISTS t_copy AFTER INSERT ON {schema}.t FOR EACH ROW SET @n = NEW.id;",
    "INSERT IGNORE INTO {schema}.t (id) VALUES (1), (2);",
    "ALTER TABLE {schema}.t ADD COLUMN IF NOT EXISTS note TEXT NULL;",
    "ALTER TABLE {schema}.t ADD COLUMN flags INT NOT NULL DEFAULT 0, ADD KEY flags_idx (flags), ALGORITHM=INPLACE;",
    "ALTER TABLE {schema}.t ADD COLUMN seq BIGINT NOT NULL AUTO_INCREMENT, ADD INDEX seq_idx (seq);",
    "ALTER TABLE {schema}.t ALTER COLUMN size SET DEFAULT 0;",
    "ALTER TABLE {schema}.t MODIFY name VARCHAR(255) NOT NULL DEFAULT '';",
    "ALTER TABLE {schema}.t MODIFY COLUMN size BIGINT NULL;",
    "ALTER TABLE {schema}.t MODIFY price DECIMAL(12, 3) NOT NULL DEFAULT 0;",
    "ALTER TABLE {schema}.t MODIFY name VARCHAR(100) NULL DEFAULT '';",
    "ALTER TABLE {schema}.t CHANGE size size BIGINT NULL;",
    "ALTER TABLE {schema}.t ADD COLUMN kind VARCHAR(8) NULL;\nUPDATE {schema}.t SET kind = 'file' WHERE kind IS NULL;",
    "CREATE TABLE {schema}.u (a INT) ENGINE={engine};\nALTER TABLE {schema}.u DROP COLUMN a, ADD b INT NOT NULL;",
], ids=lambda sql: sql.split("\n")[0][:60])
def test_expanding_migrations_pass(sql):
    assert problems(sql) == []


@pytest.mark.parametrize("sql,reason", [
    (DROP, "drops what old code may use"),
    ("DROP TABLE IF EXISTS {schema}.t;", "drops"),
    ("DROP INDEX name_idx ON {schema}.t;", "drops"),
    ("ALTER TABLE {schema}.t DROP KEY name_idx;", "drops"),
    ("ALTER TABLE {schema}.t DROP PRIMARY KEY, ADD PRIMARY KEY (id, name);", "drops"),
    ("RENAME TABLE {schema}.t TO {schema}.things;", "renames"),
    ("ALTER TABLE {schema}.t RENAME COLUMN size TO bytes;", "renames"),
    ("ALTER TABLE {schema}.t CHANGE size bytes INT NULL;", "renames column size to bytes"),
    ("ALTER TABLE {schema}.t MODIFY name VARCHAR(50) NOT NULL DEFAULT '';", "does not widen"),
    ("ALTER TABLE {schema}.t MODIFY size INT NOT NULL DEFAULT 0;", "does not widen"),
    ("ALTER TABLE {schema}.t MODIFY size BIGINT UNSIGNED NULL;", "does not widen"),
    ("ALTER TABLE {schema}.t MODIFY size SMALLINT NULL;", "does not widen"),
    ("ALTER TABLE {schema}.t MODIFY price DECIMAL(10, 4) NOT NULL DEFAULT 0;", "does not widen"),
    ("ALTER TABLE {schema}.t MODIFY name VARCHAR(100) CHARACTER SET latin1 NOT NULL DEFAULT '';", "does not widen"),
    ("ALTER TABLE {schema}.t MODIFY name TEXT NOT NULL;", "does not widen"),
    ("ALTER TABLE {schema}.gone MODIFY a BIGINT NULL;", "previous definition no migration shows"),
    ("ALTER TABLE {schema}.t ADD COLUMN owner INT NOT NULL;", "NOT NULL column owner without a DEFAULT"),
    ("ALTER TABLE {schema}.t ADD UNIQUE KEY name_uq (name);", "adds a key"),
    ("ALTER TABLE {schema}.t ADD CONSTRAINT t_fk FOREIGN KEY (size) REFERENCES {schema}.u (id);", "adds a key"),
    ("ALTER TABLE {schema}.t ADD CHECK (size > 0);", "adds a key"),
    ("CREATE UNIQUE INDEX name_uq ON {schema}.t (name);", "unique index"),
    ("ALTER TABLE {schema}.t ALTER COLUMN name DROP DEFAULT;", "drops a DEFAULT"),
    ("UPDATE {schema}.t SET name = UPPER(name);", "rewrites rows"),
    ("DELETE FROM {schema}.t WHERE size IS NULL;", "deletes rows"),
    ("TRUNCATE TABLE {schema}.t;", "deletes rows"),
    ("CREATE OR REPLACE VIEW {schema}.v AS SELECT 1;", "replaces"),
    ("ALTER TABLE {schema}.t ENGINE=ndbcluster;", "not a known expand step"),
    ("SET FOREIGN_KEY_CHECKS = 0;", "not a known expand step"),
], ids=lambda value: value[:60])
def test_contracting_migrations_need_the_header(sql, reason):
    found = problems(sql)
    assert len(found) == 1 and reason in found[0], found
    assert problems("-- contract: release N-1 no longer uses it\n" + sql) == []


def test_the_refusal_names_file_statement_and_reason():
    assert problems("CREATE INDEX size_idx ON {schema}.t (size);\n" + DROP) == [
        "002_next.sql, statement 2, drops what old code may use; a contraction needs a header "
        "'-- contract: <why old code no longer needs it>': ALTER TABLE {schema}.t DROP COLUMN size"]


@pytest.mark.parametrize("sql", [
    "-- contract:\n" + DROP,
    "CREATE INDEX size_idx ON {schema}.t (size);\n-- contract: too late, not in the header\n" + DROP,
], ids=["no reason", "below a statement"])
def test_only_a_header_with_a_reason_declares_a_contraction(sql):
    assert Migration(2, "next", sql).contraction is None
    assert "drops what old code may use" in problems(sql)[0]


def test_a_header_on_a_migration_that_only_expands_is_refused():
    assert problems("-- Sizes.\n-- contract: nothing, really\nCREATE INDEX size_idx ON {schema}.t (size);") == [
        "002_next.sql has a '-- contract:' header but only expands: remove the header"]


def test_widening_is_judged_against_the_latest_definition():
    narrowed_back = Migration(3, "narrow", "ALTER TABLE {schema}.t MODIFY name VARCHAR(200) NOT NULL DEFAULT '';")
    widened = Migration(2, "widen", "ALTER TABLE {schema}.t MODIFY name VARCHAR(255) NOT NULL DEFAULT '';")
    assert check([BASE, widened]) == []
    assert "from 'VARCHAR(255)" in check([BASE, widened, narrowed_back])[0]


def test_a_migration_is_recorded_as_the_kind_its_header_declares():
    assert Migration(2, "next", "-- contract: release 1 reads size no more\n" + DROP).kind == "contract"
    assert Migration(2, "next", "-- Sizes.\nCREATE INDEX size_idx ON {schema}.t (size);").kind == "expand"
    assert [m.version for m in COMPONENTS["hops"].migrations() if m.kind == "contract"] == [3]
