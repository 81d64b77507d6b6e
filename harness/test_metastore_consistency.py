"""Directories and metadata stay consistent on the deployed metastore: thesis Table 3.1 row
by row (Hive drops; a directory deleted skipping the trash, moved, or deleted to the trash;
only files deleted; the warehouse deleted by the superuser), atomic creates (a failure after
the directory was made leaves neither), renames, and concurrent DDL through both instances.

Every scenario works in a database prefix and a directory of its own below the run root
(the `scratch` fixture) and ends with the invariant check of tests/support/hms.py: no
database, table or partition without its descriptor, no descriptor without its inode, and
-- where the metastore did all the work -- no descriptor below the scenario's directory that
nothing owns.  Metadata is changed through Thrift (Hive 3.1 client), directories through
WebHDFS, as a user of the platform would.
"""

from __future__ import annotations

import threading

import pytest
from pymetastore.hive_metastore import ttypes as h3

from harness.support import identity, metastore as ms
from harness.support.webhdfs import WebHdfs
from tests.support.hms import database, partition, table
from tests.support.polling import wait_until

pytestmark = pytest.mark.metastore
PARTS = [("2024-01-01", "1"), ("2024-01-01", "2"), ("2024-01-02", "1"), ("2024-01-02", "2")]


@pytest.fixture
def hive(metastores, targets):
    """A Thrift client of the first instance, acting as the harness user."""
    with ms.client(metastores[0], targets.user) as client:
        yield client


@pytest.fixture
def sales(hive, scratch, targets):
    """Database <prefix>sales in <scratch>/sales.db with a managed table `orders` (ds, h)
    holding four partitions.  Returns (database name, table, database directory)."""
    prefix, path, uri = scratch.prefix, scratch.path, scratch.uri
    name = f"{prefix}sales"
    hive.create_database(database(name, f"{uri}/sales.db"))
    orders = table(name, "orders", parts=("ds string", "h int"), owner=targets.user)
    hive.create_table(orders)
    hive.add_partitions([partition(orders, values) for values in PARTS])
    return name, orders, f"{path}/sales.db"


def exists(webhdfs, path: str) -> bool:
    return webhdfs.status(path) is not None


def write_file(targets, path: str, data: bytes = b"x") -> None:
    pytest.importorskip("hdfs", reason="HdfsCLI is not installed (requirements-test.txt)")
    identity.hdfs_client(targets.webhdfs_url, targets.user).write(path, data=data, overwrite=True)


def assert_consistent(db, uri: str, owned: bool = True) -> None:
    found = ms.violations(db, uri, owned)
    assert found == {}, f"invariants broken: {found}"


# ------------------------------------------------------------------ Table 3.1
def test_hive_drops_remove_metadata_and_directories(hive, sales, webhdfs, db, scratch):
    name, _, db_path = sales
    orders = f"{db_path}/orders"
    hive.drop_partition(name, "orders", ["2024-01-01", "1"], True)
    assert not exists(webhdfs, f"{orders}/ds=2024-01-01/h=1")
    assert exists(webhdfs, f"{orders}/ds=2024-01-01"), "a parent holding other partitions stays"
    hive.drop_partition(name, "orders", ["2024-01-01", "2"], True)
    assert not exists(webhdfs, f"{orders}/ds=2024-01-01"), "an emptied parent goes"
    hive.drop_table(name, "orders", True)
    assert not exists(webhdfs, orders)
    hive.drop_database(name, True, False)
    assert not exists(webhdfs, db_path)
    assert ms.counts(db, scratch.uri) == {"databases": 0, "tables": 0, "partitions": 0, "descriptors": 0}
    assert_consistent(db, scratch.uri)


def test_dropping_an_external_table_keeps_its_data(hive, sales, webhdfs, db, scratch, targets):
    name, _, _ = sales
    data = f"{scratch.path}/external"
    write_file(targets, f"{data}/part-0")
    hive.create_table(table(name, "ext", location=targets.uri(data), external=True, owner=targets.user))
    hive.drop_table(name, "ext", True)
    assert exists(webhdfs, f"{data}/part-0")
    assert_consistent(db, scratch.uri)


def test_directory_deleted_skipping_the_trash_takes_its_metadata(hive, sales, webhdfs, db, scratch):
    name, _, db_path = sales
    assert webhdfs.delete(f"{db_path}/orders/ds=2024-01-02/h=2", skiptrash=True)
    assert hive.get_partition_names(name, "orders", -1) == ["ds=2024-01-01/h=1", "ds=2024-01-01/h=2",
                                                            "ds=2024-01-02/h=1"]
    assert webhdfs.delete(f"{db_path}/orders", skiptrash=True)
    with pytest.raises(h3.NoSuchObjectException):
        hive.get_table(name, "orders")
    assert webhdfs.delete(db_path, skiptrash=True)
    with pytest.raises(h3.NoSuchObjectException):
        hive.get_database(name)
    # every descriptor lost its inode with the rows: nothing is left for fsck either
    assert ms.counts(db, scratch.uri) == {"databases": 0, "tables": 0, "partitions": 0, "descriptors": 0}
    assert_consistent(db, scratch.uri)


@pytest.mark.parametrize("how", ["moved", "trashed"])
def test_directory_moved_or_trashed_takes_its_object_and_everything_below(hive, sales, webhdfs, db, scratch,
                                                                          targets, how):
    name, _, db_path = sales
    if how == "moved":
        assert webhdfs.rename(db_path, f"{scratch.path}/elsewhere.db")
        assert exists(webhdfs, f"{scratch.path}/elsewhere.db/orders/ds=2024-01-02/h=2")
    else:
        trashed = f"/user/{targets.user}/.Trash/Current{db_path}"
        webhdfs.delete(trashed, recursive=True)
        assert webhdfs.delete(db_path, skiptrash=False)
        assert exists(webhdfs, trashed), f"{db_path} is not in the trash at {trashed}"
    try:
        with pytest.raises(h3.NoSuchObjectException):
            hive.get_database(name)
        assert {k: v for k, v in ms.counts(db, scratch.uri).items() if k != "descriptors"} == \
            {"databases": 0, "tables": 0, "partitions": 0}
        assert_consistent(db, scratch.uri, owned=False)
        # the table's and partitions' descriptors pointed at moved inodes: the cleaner's to
        # remove (it may have done so already, where one is deployed); the harness sweeps
        # what is left with fsck's repair
        orphans = ms.unowned(db, scratch.uri)
        assert len(orphans) <= 1 + len(PARTS), orphans
        left: list = []

        def swept() -> bool:
            ms.sweep_orphans(targets.db, scratch.started)
            left[:] = ms.unowned(db, scratch.uri)
            return not left
        # The sweep skips rows the cleaner holds while it judges the same orphans (FOR UPDATE
        # SKIP LOCKED; seen on the cluster): sweep again until none is left.
        wait_until(swept, 60, lambda _: f"descriptors still unowned after sweeping: {left}")
        assert_consistent(db, scratch.uri)
    finally:
        if how == "trashed":
            webhdfs.delete(trashed, recursive=True)


def test_deleting_only_the_files_keeps_the_metadata(hive, sales, webhdfs, db, scratch, targets):
    name, _, db_path = sales
    part_file = f"{db_path}/orders/ds=2024-01-01/h=1/part-0"
    write_file(targets, part_file, b"1\tone\n")
    assert webhdfs.delete(part_file, skiptrash=True)
    assert len(hive.get_partitions(name, "orders", -1)) == len(PARTS)
    assert exists(webhdfs, f"{db_path}/orders/ds=2024-01-01/h=1")
    assert_consistent(db, scratch.uri)


def test_warehouse_deleted_by_the_superuser(hive, scratch, db, targets):
    """The whole warehouse -- here a scratch warehouse root, never /user/hive/warehouse --
    deleted by the HDFS superuser, skipping the trash: every database in it goes."""
    prefix, path, uri = scratch.prefix, scratch.path, scratch.uri
    for n in (1, 2):
        hive.create_database(database(f"{prefix}db{n}", f"{uri}/warehouse/db{n}.db"))
        t = table(f"{prefix}db{n}", "t", parts=("p int",), owner=targets.user)
        hive.create_table(t)
        hive.add_partitions([partition(t, [str(p)]) for p in range(3)])
    assert ms.counts(db, f"{uri}/warehouse") == {"databases": 2, "tables": 2, "partitions": 6, "descriptors": 10}
    superuser = WebHdfs(targets.webhdfs_url, "hdfs")
    try:
        assert superuser.delete(f"{path}/warehouse", recursive=True, skiptrash=True)
    finally:
        superuser.close()
    assert [n for n in hive.get_all_databases() if n.startswith(prefix)] == []
    assert ms.counts(db, uri) == {"databases": 0, "tables": 0, "partitions": 0, "descriptors": 0}
    assert_consistent(db, uri)


# ------------------------------------------------------------------- atomicity
@pytest.mark.parametrize("what", ["database", "table", "partition"])
def test_failure_after_the_directory_was_made_leaves_neither(hive, sales, webhdfs, db, scratch, targets, what):
    """A parameter key longer than its column fails the INSERT after the directory was made
    in the same transaction: the rollback takes the directory too."""
    name, orders, db_path = sales
    too_long = {"k" * 300: "v"}
    before = ms.counts(db, scratch.uri)
    with pytest.raises(h3.InvalidObjectException, match="does not fit"):
        if what == "database":
            hive.create_database(database(f"{name}2", f"{scratch.uri}/atomic.db", too_long))
        elif what == "table":
            hive.create_table(table(name, "atomic", parts=("p int",), params=too_long, owner=targets.user))
        else:
            hive.add_partition(partition(orders, ["2030-01-01", "9"], params=too_long))
    assert ms.counts(db, scratch.uri) == before
    assert not exists(webhdfs, f"{scratch.path}/atomic.db")
    assert not exists(webhdfs, f"{db_path}/atomic")
    assert not exists(webhdfs, f"{db_path}/orders/ds=2030-01-01")
    assert_consistent(db, scratch.uri)


def test_concurrent_creates_of_one_table_make_exactly_one(metastores, sales, webhdfs, db, scratch, targets):
    name, _, db_path = sales
    outcomes, barrier = [], threading.Barrier(6)

    def create(instance):
        with ms.client(instance, targets.user) as client:
            barrier.wait(30)
            try:
                client.create_table(table(name, "race", parts=("p int",), owner=targets.user))
                outcomes.append("created")
            except h3.AlreadyExistsException:
                outcomes.append("exists")
            except Exception as exc:  # noqa: BLE001
                outcomes.append(repr(exc))

    threads = [threading.Thread(target=create, args=(metastores[i % len(metastores)],)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert sorted(outcomes) == ["created"] + ["exists"] * 5
    assert exists(webhdfs, f"{db_path}/race")
    assert ms.counts(db, f"{scratch.uri}/sales.db/race")["tables"] == 1
    assert_consistent(db, scratch.uri)


# ---------------------------------------------------------------------- rename
def test_rename_moves_the_directory_and_repoints_everything(hive, sales, webhdfs, db, scratch):
    name, _, db_path = sales
    other = f"{scratch.prefix}other"
    hive.create_database(database(other, f"{scratch.uri}/other.db"))
    renamed = hive.get_table(name, "orders")
    renamed.dbName, renamed.tableName = other, "orders2"
    hive.alter_table_with_environment_context(name, "orders", renamed, h3.EnvironmentContext({}))
    new_root = f"{scratch.path}/other.db/orders2"
    assert not exists(webhdfs, f"{db_path}/orders")
    assert exists(webhdfs, f"{new_root}/ds=2024-01-02/h=2")
    assert hive.get_table(other, "orders2").sd.location == f"{scratch.uri}/other.db/orders2"
    assert {p.sd.location for p in hive.get_partitions(other, "orders2", -1)} == {
        f"{scratch.uri}/other.db/orders2/ds={d}/h={h}" for d, h in PARTS}
    assert_consistent(db, scratch.uri)
    assert webhdfs.delete(new_root, skiptrash=True)   # the new directory is the one linked
    with pytest.raises(h3.NoSuchObjectException):
        hive.get_table(other, "orders2")
    assert_consistent(db, scratch.uri)


def test_rename_onto_an_existing_directory_changes_nothing(hive, sales, webhdfs, db, scratch):
    name, _, db_path = sales
    assert webhdfs.mkdirs(f"{db_path}/taken")
    before = ms.counts(db, scratch.uri)
    renamed = hive.get_table(name, "orders")
    renamed.tableName = "taken"
    with pytest.raises(h3.InvalidOperationException):
        hive.alter_table_with_environment_context(name, "orders", renamed, h3.EnvironmentContext({}))
    assert hive.get_table(name, "orders").sd.location == f"{scratch.uri}/sales.db/orders"
    assert len(hive.get_partitions(name, "orders", -1)) == len(PARTS)
    assert exists(webhdfs, f"{db_path}/orders/ds=2024-01-02/h=2")
    assert webhdfs.list(f"{db_path}/taken") == []
    assert ms.counts(db, scratch.uri) == before
    assert_consistent(db, scratch.uri)


def test_rename_partition_moves_its_directory(hive, sales, webhdfs, db, scratch):
    name, _, db_path = sales
    new = hive.get_partition(name, "orders", ["2024-01-01", "1"])
    new.values = ["2024-01-09", "1"]
    hive.rename_partition(name, "orders", ["2024-01-01", "1"], new)
    assert exists(webhdfs, f"{db_path}/orders/ds=2024-01-09/h=1")
    assert not exists(webhdfs, f"{db_path}/orders/ds=2024-01-01/h=1")
    got = hive.get_partition_by_name(name, "orders", "ds=2024-01-09/h=1")
    assert got.sd.location == f"{scratch.uri}/sales.db/orders/ds=2024-01-09/h=1"
    assert_consistent(db, scratch.uri)


# ------------------------------------------------------------------ concurrency
def test_concurrent_ddl_through_both_instances_serialises(metastores, hive, sales, webhdfs, db, scratch, targets):
    """Partition adders on every instance race a rename, then a drop, of their table."""
    name, _, db_path = sales
    busy = table(name, "busy", parts=("p int",), owner=targets.user)
    hive.create_table(busy)
    added, errors = [], []

    def adder(instance, first, tbl):
        with ms.client(instance, targets.user) as client:
            for value in range(first, first + 15):
                try:
                    client.add_partition(partition(tbl, [str(value)]))
                    added.append(value)
                except (h3.InvalidObjectException, h3.NoSuchObjectException):  # the table is gone
                    pass
                except Exception as exc:  # noqa: BLE001
                    errors.append(exc)

    def renamer():
        with ms.client(metastores[-1], targets.user) as client:
            new = client.get_table(name, "busy")
            new.tableName = "busy2"
            client.alter_table(name, "busy", new)

    threads = [threading.Thread(target=adder, args=(metastores[i % len(metastores)], i * 100, busy))
               for i in range(4)] + [threading.Thread(target=renamer)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert errors == []
    names = hive.get_partition_names(name, "busy2", -1)
    assert sorted(int(n.split("=")[1]) for n in names) == sorted(added)
    for part in hive.get_partitions(name, "busy2", -1):
        assert part.sd.location.startswith(f"{scratch.uri}/sales.db/busy2/")
        assert exists(webhdfs, part.sd.location[len(targets.uri("")):])
    assert sorted(e["pathSuffix"] for e in webhdfs.list(f"{db_path}/busy2")) == sorted(names)
    assert not exists(webhdfs, f"{db_path}/busy")
    assert_consistent(db, scratch.uri)

    def dropper():
        try:
            with ms.client(metastores[-1], targets.user) as client:
                client.drop_table(name, "busy2", True)
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    busy.tableName = "busy2"
    threads = [threading.Thread(target=adder, args=(metastores[0], 1000, busy)), threading.Thread(target=dropper)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert errors == []
    with pytest.raises(h3.NoSuchObjectException):
        hive.get_table(name, "busy2")
    assert not exists(webhdfs, f"{db_path}/busy2")
    assert_consistent(db, scratch.uri)
