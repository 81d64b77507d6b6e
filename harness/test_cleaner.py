"""The deployed cleaner (roles/cleaner) removes what foreign keys cannot: thesis Table 3.1's
"directory moved or deleted behind Hive's back" rows leave storage descriptors, column
descriptors and serdes unowned, and within a few seconds the leader has removed them.

Metadata is made through Thrift, directories changed through WebHDFS, as a user would; the
orphans are judged with the definition `hopshive-metatool fsck` and the cleaner share
(hopshive.metastore.orphans), limited to rows this scenario created.  Each scenario prints
how long the clean-up took (never asserted below the deadline: no timing assertions).
"""

from __future__ import annotations

import time

import pytest

from harness.support import metastore as ms
from harness.test_metastore_consistency import hive, sales  # noqa: F401 (fixtures)
from tests.support.polling import wait_until

pytestmark = pytest.mark.metastore
DEADLINE = 10.0  # seconds; the goal is 1 s, the deadline only bounds a failing run


def orphans_since(db_settings: dict, since) -> dict[str, list[int]]:
    """The orphans, by kind, among rows created since ``since`` (this scenario's)."""
    from hopshive.core.config import DATABASE_DEFAULTS
    from hopshive.core.db import Database
    from hopshive.metastore.orphans import REPAIR_ORDER, TABLES, candidates

    database = Database(dict(DATABASE_DEFAULTS, pool_size=1, **db_settings))
    try:
        def work(tx):
            found = {}
            for kind in REPAIR_ORDER:
                name, column = TABLES[kind]
                ids = [r[0] for r in tx.query(f"SELECT {column} FROM metastore.{name} WHERE CREATED_AT >= %s",
                                              (since,))]
                found[kind] = candidates(tx, kind, 0, ids=ids)
            return {kind: ids for kind, ids in found.items() if ids}
        return database.run(work, readonly=True)
    finally:
        database.close()


@pytest.fixture(scope="module")
def cleaner(db, targets) -> str:
    """The instance holding the cleaner's lease (the deployment runs the cleaner role)."""
    rows = ms.query(db)("SELECT OWNER FROM metastore.CLEANER_LEASE WHERE EXPIRES > NOW(3) AND OWNER IS NOT NULL")
    if not rows:
        pytest.skip("no cleaner instance holds the lease: deploy playbooks/cleaner.yml "
                    "(`hopshive-cleaner status` says why)")
    return rows[0][0]


def wait_clean(targets, scratch, what: str) -> float:
    """Poll until this scenario left no orphan; print and return the seconds it took."""
    started = time.monotonic()
    last: dict = {}

    def clean() -> bool:
        last.clear()
        last.update(orphans_since(targets.db, scratch.started))
        return not last
    wait_until(clean, DEADLINE, lambda _: f"orphans left after {DEADLINE:.0f} s: {last}")
    seconds = time.monotonic() - started
    print(f"\ncleaner: {what}: no orphan {seconds * 1000:.0f} ms after the file-system action")
    return seconds


def test_table_directory_moved_behind_the_metastore(cleaner, hive, sales, webhdfs, db, scratch, targets):
    name, _, db_path = sales
    assert orphans_since(targets.db, scratch.started) == {}
    assert webhdfs.rename(f"{db_path}/orders", f"{scratch.path}/orders-moved")
    wait_clean(targets, scratch, "table directory moved away (4 partitions)")
    assert hive.get_all_tables(name) == []
    assert ms.unowned(db, scratch.uri) == []
    assert ms.violations(db, scratch.uri) == {}


def test_table_directory_deleted_skipping_the_trash(cleaner, hive, sales, webhdfs, db, scratch, targets):
    name, _, db_path = sales
    assert webhdfs.delete(f"{db_path}/orders", recursive=True, skiptrash=True)
    wait_clean(targets, scratch, "table directory deleted with skipTrash")
    assert hive.get_all_tables(name) == []
    assert ms.violations(db, scratch.uri) == {}


def test_database_directory_moved_to_the_trash(cleaner, hive, sales, webhdfs, db, scratch, targets):
    name, _, db_path = sales
    trashed = f"/user/{targets.user}/.Trash/Current{db_path}"
    webhdfs.delete(trashed, recursive=True)
    try:
        assert webhdfs.delete(db_path, recursive=True, skiptrash=False)
        wait_clean(targets, scratch, "database directory moved to the trash")
        assert name not in hive.get_all_databases()
        assert ms.violations(db, scratch.uri) == {}
    finally:
        webhdfs.delete(trashed, recursive=True)


def test_status_names_the_leader(cleaner):
    """`hopshive-cleaner status` as the README shows it (root, no flags) on a cleaner host."""
    import shutil
    import subprocess

    command = shutil.which("hopshive-cleaner")
    if command is None:
        pytest.skip("hopshive-cleaner is not on PATH here (not a cleaner host)")
    done = subprocess.run([command, "status"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr  # 0: some instance leads
    assert done.stdout.startswith("leader: ") and "position: " in done.stdout, done.stdout
