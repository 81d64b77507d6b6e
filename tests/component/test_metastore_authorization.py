"""Storage-based authorization in the metastore: every call family of the rules table
(services/hopshive/metastore/README.md) allowed and refused, Hive's permission error, nothing
changed after a refusal, adopted directories kept on an administrator's drop, forbidden
locations, anonymous connections and the switch that turns it off."""

from __future__ import annotations

import pytest
from hmsclient.genthrift.hive_metastore import ttypes as h2
from pymetastore.hive_metastore import ttypes as h3

from hopshive.metastore.api import api
from tests.support.authorization import victim_objects, write_calls
from tests.support.hms import index
from tests.support.metastore import thrift_client
from tests.support.metastore_fixtures import FAKE_NAMENODE, partition, running, start_in_thread, table

pytestmark = pytest.mark.metastore
ROOT_URI = f"webhdfs://{FAKE_NAMENODE}"
DB_PATH = "/user/hive/warehouse/alice_db.db"
# Everything a call could change: metadata rows and the inodes.
SNAPSHOT_TABLES = ("metastore.DBS", "metastore.DATABASE_PARAMS", "metastore.TBLS", "metastore.TABLE_PARAMS",
                   "metastore.SDS", "metastore.PARTITIONS", "metastore.PARTITION_PARAMS", "metastore.FUNCS",
                   "metastore.TAB_COL_STATS", "metastore.IDXS", "metastore.INDEX_PARAMS", "hops.hdfs_inodes")


@pytest.fixture
def metastore(db):
    yield from running(db)


@pytest.fixture
def fs(metastore, namespace):
    """The namespace as its users would act on it through WebHDFS."""
    class Fs:
        def mkdirs(self, user, path, mode=None):
            namespace.mkdirs(namespace.caller(user), path, mode)

        def write(self, user, path):
            namespace.start_file(namespace.caller(user), path, False, None, 1, 1 << 20, ("test", "127.0.0.1"))

        def chmod(self, path, mode):
            namespace.set_permission(namespace.caller("hdfs"), path, mode)

        def exists(self, path):
            return namespace.db.run(lambda tx: namespace.resolve(tx, path)) is not None
    return Fs()


@pytest.fixture
def clients(metastore):
    opened = {}

    def client(user):
        if user not in opened:
            context = thrift_client(metastore.port, user=user)
            opened[user] = (context, context.__enter__())
        return opened[user][1]
    yield client
    for context, _ in opened.values():
        context.__exit__(None, None, None)


@pytest.fixture
def hive2_clients(metastore):
    """Hive 2 clients (hmsclient's IDL: the index calls) by user."""
    opened = {}

    def client(user):
        if user not in opened:
            context = thrift_client(metastore.port, hive2=True, user=user)
            opened[user] = (context, context.__enter__())
        return opened[user][1]
    yield client
    for context, _ in opened.values():
        context.__exit__(None, None, None)


@pytest.fixture
def alice_db(clients):
    """alice's database with a partitioned managed table, a partition, a function;
    directories 0755 (umask 022): readable by others, writable by alice."""
    return victim_objects(clients("alice"), "alice_db", "t", "alice")


def snapshot(db) -> dict:
    with db.transaction() as tx:
        return {name: sorted(map(repr, tx.query(f"SELECT * FROM {name}"))) for name in SNAPSHOT_TABLES}


WRITE_CALLS = write_calls("alice_db", "t", f"{ROOT_URI}/user/bob/t", "bob")


@pytest.mark.parametrize("name,call", WRITE_CALLS, ids=[c[0] for c in WRITE_CALLS])
def test_another_user_cannot_change_or_drop_metadata(name, call, alice_db, clients, db, fs):
    before = snapshot(db)
    with pytest.raises(h3.MetaException) as refused:
        call(clients("bob"), clients("hive"))
    assert "Permission denied: user=bob, access=" in refused.value.message
    assert "inode=\"" in refused.value.message
    assert snapshot(db) == before, f"{name}: a refused call changed something"


@pytest.mark.parametrize("name,call", WRITE_CALLS, ids=[c[0] for c in WRITE_CALLS])
def test_the_owner_and_the_admin_may(name, call, alice_db, clients, fs):
    """The same calls succeed for the directories' owner (alice) and for the Hive admin."""
    fs.mkdirs("hdfs", "/user/bob", 0o777)
    for user in ("alice", "hive"):
        if name in ("drop_database", "drop_table", "rename table") and user == "hive":
            continue    # alice already did it; what is left is covered by the drop tests
        try:
            call(clients(user), clients("hive"))
        except h3.MetaException as exc:
            assert "Permission denied" not in exc.message, f"{name} refused to {user}"
        except (h3.NoSuchObjectException, h3.AlreadyExistsException, h3.InvalidOperationException):
            pass    # alice's turn already did it


def test_reads_need_read_access(alice_db, clients, fs):
    bob = clients("bob")
    assert bob.get_table("alice_db", "t").tableName == "t", "0755: others may read"
    assert [p.values for p in bob.get_partitions("alice_db", "t", -1)] == [["1"]]
    fs.chmod(DB_PATH, 0o700)
    reads = [lambda: bob.get_database("alice_db"), lambda: bob.get_table("alice_db", "t"),
             lambda: bob.get_partitions("alice_db", "t", -1), lambda: bob.get_all_tables("alice_db"),
             lambda: bob.get_partitions_by_filter("alice_db", "t", "ds = '1'", -1),
             lambda: bob.get_table_statistics_req(h3.TableStatsRequest("alice_db", "t", ["a"]))]
    for read in reads:
        with pytest.raises(h3.MetaException, match="Permission denied: user=bob, access=(EXECUTE|READ_EXECUTE)"):
            read()
    # Hive 2.3 declares MetaException as field 1 of get_partition_names, Hive 3 clients read
    # that field as NoSuchObjectException (see hopshive.metastore.thrift.errors).
    with pytest.raises(h3.NoSuchObjectException, match="Permission denied: user=bob"):
        bob.get_partition_names("alice_db", "t", -1)
    assert bob.get_table_objects_by_name("alice_db", ["t"]) == [], "unreadable tables are left out"
    assert "alice_db" in bob.get_all_databases(), "database names are not protected"
    assert clients("alice").get_table("alice_db", "t").tableName == "t"
    assert clients("hive").get_table("alice_db", "t").tableName == "t"


def test_adopting_another_users_directory_needs_write_access_to_it(clients, fs, db):
    fs.mkdirs("hdfs", "/data", 0o1777)
    fs.mkdirs("alice", "/data/alice")
    fs.write("alice", "/data/alice/part-0")
    before = snapshot(db)
    with pytest.raises(h3.MetaException, match="Permission denied: user=bob, access=WRITE"):
        clients("bob").create_table(table("default", "stolen", location=f"{ROOT_URI}/data/alice", owner="bob"))
    assert snapshot(db) == before


def test_an_administrator_drop_keeps_a_directory_the_table_adopted(clients, fs):
    """The issue's scenario, where alice's directory is writable by all: bob's managed table
    on it is allowed, but dropping it with its data -- even by the admin -- keeps alice's files."""
    fs.mkdirs("hdfs", "/data", 0o1777)
    fs.mkdirs("alice", "/data/shared", 0o777)
    fs.write("alice", "/data/shared/part-0")
    clients("bob").create_table(table("default", "adopted", location=f"{ROOT_URI}/data/shared", owner="bob"))
    clients("hive").drop_table("default", "adopted", True)
    assert fs.exists("/data/shared/part-0"), "the administrator's drop deleted the victim's files"
    clients("alice").create_table(table("default", "own", location=f"{ROOT_URI}/data/shared", owner="alice"))
    clients("hive").drop_table("default", "own", True)
    assert not fs.exists("/data/shared"), "a directory of the table's owner goes with the table"


@pytest.mark.parametrize("location", ["/", "/user", "/user/hive/warehouse", "/user/hive/warehouse/alice_db.db"])
def test_locations_no_table_or_partition_may_have(location, alice_db, clients, db):
    alice = clients("alice")
    before = snapshot(db)
    with pytest.raises(h3.InvalidObjectException, match="can not hold a table"):
        alice.create_table(table("alice_db", "bad", location=ROOT_URI + location))
    with pytest.raises(h3.InvalidObjectException, match="can not hold a partition"):
        alice.add_partition(partition(alice_db, ["2"], location=ROOT_URI + location))
    assert snapshot(db) == before


def test_a_partition_may_not_live_in_its_tables_own_directory(alice_db, clients):
    with pytest.raises(h3.InvalidObjectException, match="can not hold a partition"):
        clients("alice").add_partition(partition(alice_db, ["2"], location=f"{ROOT_URI}{DB_PATH}/t"))


def test_a_connection_without_set_ugi_is_anonymous(alice_db, metastore, db):
    before = snapshot(db)
    with thrift_client(metastore.port, user=None) as anonymous:
        with pytest.raises(h3.MetaException, match="Permission denied: user=anonymous"):
            anonymous.drop_table("alice_db", "t", True)
    assert snapshot(db) == before


def test_superusers_bypass_the_checks(alice_db, clients, fs):
    fs.chmod(DB_PATH, 0o700)
    hdfs = clients("hdfs")
    assert hdfs.get_table("alice_db", "t").tableName == "t"
    hdfs.drop_database("alice_db", True, True)
    assert not fs.exists(DB_PATH)


def test_the_switch_turns_it_off(db, fs):
    server = start_in_thread(db, storage_authorization=False)
    try:
        with thrift_client(server.port, user="alice") as alice, thrift_client(server.port, user="bob") as bob:
            alice.create_database(api.Database(name="open_db", locationUri=None, parameters={}))
            alice.create_table(table("open_db", "t"))
            bob.drop_table("open_db", "t", False)
            assert alice.get_all_tables("open_db") == []
    finally:
        server.stop()


def test_refusals_name_hives_wording(alice_db, clients):
    with pytest.raises(h3.MetaException) as refused:
        clients("bob").drop_table("alice_db", "t", True)
    assert refused.value.message.startswith(f'Permission denied: user=bob, access=WRITE_EXECUTE, inode="{DB_PATH}":alice:')
    assert refused.value.message.endswith(":drwxr-xr-x")


def test_a_table_deeper_than_the_chain_read_with_it_is_checked_too(clients, fs):
    """Read checks use the directory chain read with the table (six levels); deeper
    locations are resolved afresh and judged the same way."""
    fs.mkdirs("hdfs", "/deep", 0o1777)
    path = "/deep/a/b/c/d/e/table"
    fs.mkdirs("alice", path)
    alice, bob = clients("alice"), clients("bob")
    alice.create_table(table("default", "deep", location=ROOT_URI + path, external=True))
    assert bob.get_table("default", "deep").tableName == "deep"
    fs.chmod("/deep/a/b", 0o700)
    with pytest.raises(h3.MetaException, match='Permission denied: user=bob, access=EXECUTE'):
        bob.get_table("default", "deep")
    assert alice.get_table("default", "deep").tableName == "deep"


# --------------------------------------------------------------------------- indexes
INDEX_WRITES = [
    ("add_index", lambda c: c.add_index(*index(c.get_table("alice_db", "t"), "y", ["a"]))),
    ("alter_index", lambda c: c.alter_index("alice_db", "t", "x", c.get_index_by_name("alice_db", "t", "x"))),
    ("drop_index_by_name", lambda c: c.drop_index_by_name("alice_db", "t", "x", True)),
    ("drop_index_by_name keeping data", lambda c: c.drop_index_by_name("alice_db", "t", "x", False)),
]


@pytest.fixture
def indexed(alice_db, hive2_clients):
    """alice's table t with index x (its index table alice_db__t_x__ in alice's database)."""
    hive2_clients("alice").add_index(*index(alice_db, "x", ["b"]))
    return alice_db


@pytest.mark.parametrize("name,call", INDEX_WRITES, ids=[c[0] for c in INDEX_WRITES])
def test_indexing_needs_write_on_the_base_table(name, call, indexed, hive2_clients, db):
    before = snapshot(db)
    with pytest.raises(h2.MetaException, match='Permission denied: user=bob, access=WRITE_EXECUTE, inode="'
                                               f'{DB_PATH}/t"'):
        call(hive2_clients("bob"))
    assert snapshot(db) == before, f"{name}: a refused call changed something"
    call(hive2_clients("alice"))


def test_an_index_table_in_a_database_the_caller_cannot_write_is_refused(indexed, hive2_clients, fs, db):
    """bob may write alice's table but not her database: no index table of his goes there."""
    fs.chmod(f"{DB_PATH}/t", 0o777)
    before = snapshot(db)
    with pytest.raises(h2.MetaException, match=f'Permission denied: user=bob, access=WRITE_EXECUTE, inode="{DB_PATH}"'):
        hive2_clients("bob").add_index(*index(indexed, "y", ["a"]))
    assert snapshot(db) == before
    idx, _ = index(indexed, "y", ["a"])
    assert hive2_clients("bob").add_index(idx, None).indexTableName is None, "no index table: the table's write suffices"


def test_reading_indexes_needs_read_on_the_base_table(indexed, hive2_clients, fs):
    bob = hive2_clients("bob")
    assert bob.get_index_names("alice_db", "t", -1) == ["x"], "0755: others may read"
    fs.chmod(f"{DB_PATH}/t", 0o700)
    for read in (lambda: bob.get_index_names("alice_db", "t", -1), lambda: bob.get_indexes("alice_db", "t", -1),
                 lambda: bob.get_index_by_name("alice_db", "t", "x")):
        with pytest.raises(h2.MetaException, match="Permission denied: user=bob, access=READ_EXECUTE"):
            read()
    assert hive2_clients("alice").get_index_by_name("alice_db", "t", "x").indexTableName == "alice_db__t_x__"
