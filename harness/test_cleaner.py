"""The deployed cleaner (roles/cleaner) removes what foreign keys cannot: every row of the
thesis's Table 3.1 done behind Hive's back ends with no orphan (the definition
`hopshive-metatool fsck` and the cleaner share, hopshive.metastore.orphans, limited to rows
this scenario created) and the consistency invariants holding; a database of 100 tables x
100 partitions moved to the trash leaves none of its metadata; an index whose base table is
dropped takes its index table and directory with it.

Metadata is made through Thrift, directories changed through WebHDFS, as a user would.  Each
scenario prints how long the clean-up took; the issue's goal is 1 s, and no test asserts
timing (the deadline only bounds a failing run).
"""

from __future__ import annotations

import time

import pytest
from pymetastore.hive_metastore import ttypes as h3

from harness.support import metastore as ms
from harness.support.webhdfs import WebHdfs
from harness.test_metastore_consistency import PARTS, hive, sales  # noqa: F401 (fixtures)
from tests.support.hms import database, partition, table
from tests.support.polling import wait_until

pytestmark = pytest.mark.metastore
DEADLINE = 30.0   # seconds; generous: it only bounds a failing run


def orphans_since(db_settings: dict, since) -> dict[str, list[int]]:
    """The orphans, by kind, among rows created since ``since`` (this scenario's)."""
    from hopshive.core.config import DATABASE_DEFAULTS
    from hopshive.core.db import Database
    from hopshive.metastore.orphans import REPAIR_ORDER, TABLES, candidates, chunks

    database_ = Database(dict(DATABASE_DEFAULTS, pool_size=1, **db_settings))
    try:
        def work(tx):
            found = {}
            for kind in REPAIR_ORDER:
                name, column = TABLES[kind]
                ids = [r[0] for r in tx.query(f"SELECT {column} FROM metastore.{name} WHERE CREATED_AT >= %s",
                                              (since,))]
                found[kind] = [i for chunk in chunks(ids, 1000) for i in candidates(tx, kind, 0, ids=chunk)]
            return {kind: ids for kind, ids in found.items() if ids}
        return database_.run(work, readonly=True)
    finally:
        database_.close()


@pytest.fixture(scope="module")
def cleaner(db, targets) -> str:
    """The instance holding the cleaner's lease (the deployment runs the cleaner role)."""
    rows = ms.query(db)("SELECT OWNER FROM metastore.CLEANER_LEASE WHERE EXPIRES > NOW(3) AND OWNER IS NOT NULL")
    if not rows:
        reason = ("no cleaner instance holds the lease: deploy playbooks/cleaner.yml "
                  "(`hopshive-cleaner status` says why)")
        if targets.required:
            pytest.fail(f"{reason} (HOPSHIVE_E2E_REQUIRED is set)", pytrace=False)
        pytest.skip(reason)
    return rows[0][0]


def wait_clean(targets, scratch, what: str, deadline: float = DEADLINE) -> float:
    """Poll until this scenario left no orphan; print and return the seconds it took."""
    started = time.monotonic()
    last: dict = {}

    def clean() -> bool:
        last.clear()
        last.update(orphans_since(targets.db, scratch.started))
        return not last
    wait_until(clean, deadline, lambda _: f"orphans left after {deadline:.0f} s: "
                                          f"{ {k: len(v) for k, v in last.items()} }")
    seconds = time.monotonic() - started
    print(f"\ncleaner: {what}: no orphan {seconds * 1000:.0f} ms after the file-system action")
    return seconds


def trashed(targets, path: str) -> str:
    return f"/user/{targets.user}/.Trash/Current{path}"


# Table 3.1, the rows done behind Hive's back: (what, action(webhdfs, scratch path, database
# directory) -> bool, what the `sales` database holds afterwards: {table: partitions}, or
# None when the database is gone).
ORDERS = [f"ds={d}/h={h}" for d, h in PARTS]
ROWS = {
    "only the files of a partition deleted": (
        lambda w, s, d: (w.write(f"{d}/orders/{ORDERS[0]}/part-0", b"1") or True)
        and w.delete(f"{d}/orders/{ORDERS[0]}/part-0", skiptrash=True), {"orders": ORDERS}),
    "partition directory moved": (
        lambda w, s, d: w.rename(f"{d}/orders/{ORDERS[0]}", f"{s}/moved-partition"), {"orders": ORDERS[1:]}),
    "partition directory deleted, skipTrash": (
        lambda w, s, d: w.delete(f"{d}/orders/{ORDERS[3]}", skiptrash=True), {"orders": ORDERS[:3]}),
    "table directory moved": (
        lambda w, s, d: w.rename(f"{d}/orders", f"{s}/orders-moved"), {}),
    "table directory deleted, skipTrash": (
        lambda w, s, d: w.delete(f"{d}/orders", recursive=True, skiptrash=True), {}),
    "database directory moved": (
        lambda w, s, d: w.rename(d, f"{s}/elsewhere.db"), None),
    "database directory deleted, skipTrash": (
        lambda w, s, d: w.delete(d, recursive=True, skiptrash=True), None),
}


@pytest.mark.parametrize("what", ROWS)
def test_table_3_1_behind_hives_back(what, cleaner, hive, sales, webhdfs, db, scratch, targets):
    name, _, db_path = sales
    action, holds = ROWS[what]
    assert orphans_since(targets.db, scratch.started) == {}
    assert action(webhdfs, scratch.path, db_path), what
    wait_clean(targets, scratch, what)
    if holds is None:
        assert name not in hive.get_all_databases()
    else:
        assert {t: sorted(hive.get_partition_names(name, t, -1)) for t in hive.get_all_tables(name)} == holds
    assert ms.violations(db, scratch.uri) == {}


def test_database_directory_moved_to_the_trash(cleaner, hive, sales, webhdfs, db, scratch, targets):
    name, _, db_path = sales
    webhdfs.delete(trashed(targets, db_path), recursive=True)
    try:
        assert webhdfs.delete(db_path, recursive=True, skiptrash=False)
        wait_clean(targets, scratch, "database directory moved to the trash")
        assert name not in hive.get_all_databases()
        assert ms.violations(db, scratch.uri) == {}
    finally:
        webhdfs.delete(trashed(targets, db_path), recursive=True)


def warehouse_deleted(hive, scratch, targets, name: str) -> None:
    """Two databases ``<prefix><name>1``/``2`` of three partitions in a (scratch) warehouse,
    which the HDFS superuser then deletes, skipping the trash."""
    for n in (1, 2):
        hive.create_database(database(f"{scratch.prefix}{name}{n}", f"{scratch.uri}/warehouse/db{n}.db"))
        made = table(f"{scratch.prefix}{name}{n}", "t", parts=("p int",), owner=targets.user)
        hive.create_table(made)
        hive.add_partitions([partition(made, [str(p)]) for p in range(3)])
    superuser = WebHdfs(targets.webhdfs_url, "hdfs")
    try:
        assert superuser.delete(f"{scratch.path}/warehouse", recursive=True, skiptrash=True)
    finally:
        superuser.close()


def test_warehouse_deleted_by_the_superuser(cleaner, hive, db, scratch, targets):
    """The directories' deletes cascade; the cleaner takes what the keys could not."""
    warehouse_deleted(hive, scratch, targets, "db")
    wait_clean(targets, scratch, "warehouse deleted by the superuser")
    assert [n for n in hive.get_all_databases() if n.startswith(scratch.prefix)] == []
    assert ms.counts(db, scratch.uri) == {"databases": 0, "tables": 0, "partitions": 0, "descriptors": 0}
    assert ms.violations(db, scratch.uri) == {}


@pytest.mark.timeout(1500)  # 10,000 partitions made, then up to 600 s for the cleaner
def test_a_database_of_10k_partitions_moved_to_the_trash(cleaner, hive, webhdfs, db, scratch, targets):
    """100 tables x 100 partitions, made with add_partitions_req batches (as Spark's ALTER TABLE
    ADD PARTITION sends them), then the database directory moved to the trash."""
    name = f"{scratch.prefix}big"
    where = f"{scratch.path}/{name}.db"
    hive.create_database(database(name, targets.uri(where)))
    for n in range(100):
        made = table(name, f"t{n}", parts=("p int",), owner=targets.user)
        hive.create_table(made)
        hive.add_partitions_req(h3.AddPartitionsRequest(
            name, f"t{n}", [partition(made, [str(p)]) for p in range(100)], ifNotExists=False, needResult=False))
    uri = targets.uri(where)
    assert ms.counts(db, uri) == {"databases": 1, "tables": 100, "partitions": 10_000, "descriptors": 10_101}
    webhdfs.delete(trashed(targets, where), recursive=True)
    try:
        assert webhdfs.delete(where, recursive=True, skiptrash=False)
        wait_clean(targets, scratch, "a database of 100 tables x 100 partitions moved to the trash", deadline=600)
        assert name not in hive.get_all_databases()
        assert ms.counts(db, uri) == {"databases": 0, "tables": 0, "partitions": 0, "descriptors": 0}
        assert ms.violations(db, scratch.uri) == {}
    finally:
        webhdfs.delete(trashed(targets, where), recursive=True)


def test_dropping_an_indexed_table_takes_its_index_table(cleaner, hive, sales, webhdfs, db, scratch, targets):
    """An index written straight into IDXS (the metastore has no index API yet): its base
    table is dropped through Thrift, the IDXS row goes by cascade, and the cleaner deletes
    the index table's directory, whose metadata cascades (thesis 3.1.3)."""
    name, _, db_path = sales
    index_table = "sales__orders_idx__"
    hive.create_table(table(name, index_table, owner=targets.user))
    run = ms.query(db)
    (base,), = run("SELECT t.TBL_ID FROM metastore.TBLS t JOIN metastore.DBS d ON d.DB_ID = t.DB_ID"
                   " WHERE d.NAME = %s AND t.TBL_NAME = 'orders'", (name,))
    (index_id,), = run("SELECT t.TBL_ID FROM metastore.TBLS t JOIN metastore.DBS d ON d.DB_ID = t.DB_ID"
                       " WHERE d.NAME = %s AND t.TBL_NAME = %s", (name, index_table))
    with db.cursor() as cursor:
        cursor.execute("UPDATE metastore.TBLS SET TBL_TYPE = 'INDEX_TABLE' WHERE TBL_ID = %s", (index_id,))
        cursor.execute("INSERT INTO metastore.SDS (LOCATION) VALUES (NULL)")   # an index's own SD: no location
        cursor.execute("INSERT INTO metastore.IDXS (INDEX_NAME, ORIG_TBL_ID, INDEX_TBL_ID, SD_ID, CREATE_TIME,"
                       " INDEX_HANDLER_CLASS) VALUES ('orders_idx', %s, %s, %s, 1,"
                       " 'org.apache.hadoop.hive.ql.index.compact.CompactIndexHandler')",
                       (base, index_id, cursor.lastrowid))
    db.commit()
    assert webhdfs.status(f"{db_path}/{index_table}") is not None
    hive.drop_table(name, "orders", True)
    started = time.monotonic()
    wait_until(lambda: webhdfs.status(f"{db_path}/{index_table}") is None, DEADLINE,
               lambda _: f"the index table's directory {db_path}/{index_table} is still there")
    print(f"\ncleaner: index table's directory gone {(time.monotonic() - started) * 1000:.0f} ms after its base "
          f"table was dropped")
    with pytest.raises(h3.NoSuchObjectException):
        hive.get_table(name, index_table)
    wait_clean(targets, scratch, "an indexed table dropped")
    assert ms.violations(db, scratch.uri) == {}


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
