"""Storage-based authorization on the deployed metastores, with two non-superusers and the
Hive admin: every write family of the rules table refused to another user with Hive's
error and nothing changed, then allowed to the owner; reads refused once the owner closes
the directory; the adoption scenario (an administrator's drop keeps the victim's files);
locations no partition may have.  The rules: services/hopshive/metastore/README.md."""

from __future__ import annotations

import pytest
from pymetastore.hive_metastore import ttypes as api

from harness.support import metastore as ms
from harness.support.webhdfs import WebHdfs
from tests.support.authorization import victim_objects, write_calls
from tests.support.hms import partition, table

pytestmark = pytest.mark.metastore
FAMILIES = [name for name, _ in write_calls("x", "t", "/", "u")]


@pytest.fixture
def users(run_id) -> tuple[str, str]:
    """(victim, intruder): two users of this run, neither a superuser."""
    return f"hh{run_id}_alice", f"hh{run_id}_bob"


@pytest.fixture
def victim(scratch, webhdfs, users, metastores):
    """The victim's database (in the scratch directory, which the victim owns) with a
    table, a partition and a function; returns (database, its location)."""
    webhdfs.chown(scratch.path, users[0])
    name, location = f"{scratch.prefix}victim", f"{scratch.uri}/victim.db"
    with ms.client(metastores[0], users[0]) as alice:
        victim_objects(alice, name, "t", users[0], location)
    return name, location


def snapshot(db, name: str, location: str, webhdfs, path: str) -> tuple:
    """The victim's metadata rows (database, tables, descriptors, partitions, functions,
    parameters) and the entries of its directory tree."""
    run = ms.query(db)
    rows = tuple(tuple(sorted(map(repr, run(sql, (name,))))) for sql in (
        "SELECT d.* FROM metastore.DBS d WHERE d.NAME=%s",
        "SELECT t.* FROM metastore.TBLS t JOIN metastore.DBS d ON d.DB_ID=t.DB_ID WHERE d.NAME=%s",
        "SELECT p.* FROM metastore.PARTITIONS p JOIN metastore.TBLS t ON t.TBL_ID=p.TBL_ID"
        " JOIN metastore.DBS d ON d.DB_ID=t.DB_ID WHERE d.NAME=%s",
        "SELECT tp.* FROM metastore.TABLE_PARAMS tp JOIN metastore.TBLS t ON t.TBL_ID=tp.TBL_ID"
        " JOIN metastore.DBS d ON d.DB_ID=t.DB_ID WHERE d.NAME=%s",
        "SELECT f.* FROM metastore.FUNCS f JOIN metastore.DBS d ON d.DB_ID=f.DB_ID WHERE d.NAME=%s",
        "SELECT s.TBL_ID, s.COLUMN_NAME FROM metastore.TAB_COL_STATS s WHERE s.DB_NAME=%s"))
    sds = tuple(sorted(map(repr, run("SELECT * FROM metastore.SDS s WHERE LEFT(s.LOCATION, CHAR_LENGTH(%s)) = %s",
                                     (location, location)))))
    tree = tuple(sorted((p, s["owner"], s["permission"]) for p, s in webhdfs.walk(path)))
    return rows, sds, tree


@pytest.mark.parametrize("family", FAMILIES)
def test_another_user_is_refused_and_the_owner_is_not(family, victim, users, metastores, db, webhdfs, scratch,
                                                      targets):
    name, location = victim
    alice, bob = users
    call = dict(write_calls(name, "t", f"{scratch.uri}/moved", bob))[family]
    before = snapshot(db, name, location, webhdfs, scratch.path)
    with ms.client(metastores[0], bob) as intruder, ms.client(metastores[-1], targets.hive_admin) as admin:
        with pytest.raises(api.MetaException) as refused:
            call(intruder, admin)
    assert refused.value.message.startswith(f"Permission denied: user={bob}, access="), refused.value.message
    assert snapshot(db, name, location, webhdfs, scratch.path) == before, f"{family}: the refused call changed something"
    owner_call = dict(write_calls(name, "t", f"{scratch.uri}/moved", alice))[family]
    with ms.client(metastores[0], alice) as owner, ms.client(metastores[-1], targets.hive_admin) as admin:
        owner_call(owner, admin)
    assert ms.violations(db, scratch.uri) == {}


def test_reads_follow_the_directory_mode(victim, users, metastores, webhdfs, scratch):
    name, location = victim
    alice, bob = users
    with ms.client(metastores[0], bob) as intruder:
        assert intruder.get_table(name, "t").tableName == "t", "0755: others may read"
        webhdfs.chmod(location[len(scratch.uri) - len(scratch.path):], "700")
        for read in (lambda: intruder.get_database(name), lambda: intruder.get_table(name, "t"),
                     lambda: intruder.get_partitions(name, "t", -1), lambda: intruder.get_all_tables(name)):
            with pytest.raises(api.MetaException, match=f"Permission denied: user={bob}"):
                read()
        assert intruder.get_table_objects_by_name(name, ["t"]) == []
    with ms.client(metastores[-1], alice) as owner:
        assert [p.values for p in owner.get_partitions(name, "t", -1)] == [["1"]]


def test_an_administrators_drop_keeps_the_adopted_directory(scratch, users, metastores, webhdfs, targets):
    """The issue's attack: bob makes a MANAGED table on alice's existing directory; the admin
    drops it with its data.  alice's files survive; her own table on it takes them along when
    she drops it (the Hive admin is no namespace superuser: it cannot delete her files)."""
    alice, bob = users
    home = f"{scratch.path}/alice"              # alice's own: she may delete what is in it
    webhdfs.mkdirs(home, "755")
    webhdfs.chown(home, alice)
    shared = f"{home}/shared"
    webhdfs.mkdirs(shared)
    webhdfs.chmod(shared, "777")
    webhdfs.chown(shared, alice)
    WebHdfs(targets.webhdfs_url, alice).write(f"{shared}/part-0", b"alice's data\n")
    closed = f"{scratch.path}/closed"
    webhdfs.mkdirs(closed, "755")
    webhdfs.chown(closed, alice)
    with ms.client(metastores[0], bob) as intruder:
        with pytest.raises(api.MetaException, match=f"Permission denied: user={bob}, access=WRITE"):
            intruder.create_table(table("default", f"{scratch.prefix}stolen", location=targets.uri(closed), owner=bob))
        intruder.create_table(table("default", f"{scratch.prefix}adopted", location=targets.uri(shared), owner=bob))
    with ms.client(metastores[-1], targets.hive_admin) as admin:
        admin.drop_table("default", f"{scratch.prefix}adopted", True)
    assert webhdfs.status(f"{shared}/part-0") is not None, "the administrator's drop deleted alice's file"
    with ms.client(metastores[0], alice) as owner:
        owner.create_table(table("default", f"{scratch.prefix}own", location=targets.uri(shared), owner=alice))
    with ms.client(metastores[-1], alice) as owner:
        owner.drop_table("default", f"{scratch.prefix}own", True)
    assert webhdfs.status(shared) is None, "the owner's table took its own directory along"


@pytest.mark.parametrize("location", ["/", "/user/hive/warehouse"])
def test_no_partition_may_live_at_the_root_or_the_warehouse(location, victim, users, metastores, db, webhdfs,
                                                            scratch, targets):
    name, db_location = victim
    before = snapshot(db, name, db_location, webhdfs, scratch.path)
    with ms.client(metastores[0], targets.hive_admin) as admin:
        t = admin.get_table(name, "t")
        with pytest.raises(api.InvalidObjectException, match="can not hold a partition"):
            admin.add_partition(partition(t, ["2"], location=targets.uri(location)))
    assert snapshot(db, name, db_location, webhdfs, scratch.path) == before
