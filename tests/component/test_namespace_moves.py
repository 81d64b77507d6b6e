"""Moves at the library level: a move replaces the inode row (new primary key, same id),
blocks follow the id, and ``rename(tx=..., repoint=...)`` runs its callback while both rows
exist, inside the caller's transaction."""

from __future__ import annotations

import pytest

from hopshive.namespace.inodes import ROOT_ID, partition_id
from tests.support.invariants import orphans
from tests.support.library import read_file, write_file

ROW = "SELECT partition_id, parent_id, name, id FROM hops.hdfs_inodes WHERE id=%s"


def rows_of(db, inode_id: int) -> list[tuple]:
    return db.run(lambda tx: tx.query(ROW, (inode_id,)))


def blocks_of(db, inode_id: int) -> list[tuple]:
    return db.run(lambda tx: tx.query("SELECT block_index, block_id, num_bytes FROM hops.hdfs_block_infos"
                                      " WHERE inode_id=%s ORDER BY block_index", (inode_id,)))


@pytest.fixture
def alice(namespace):
    hdfs = namespace.caller("hdfs")
    namespace.mkdirs(hdfs, "/home/alice")
    namespace.set_owner(hdfs, "/home/alice", "alice", None)
    return namespace.caller("alice")


def test_a_move_replaces_the_key_keeps_the_id_and_the_blocks(namespace, db, alice):
    data = bytes(range(256)) * 20  # five blocks of 1 KiB
    file = write_file(namespace, alice, "/home/alice/a/f", data)
    namespace.mkdirs(alice, "/home/alice/b")
    before = blocks_of(db, file.id)
    assert len(before) == 5

    assert namespace.rename(alice, "/home/alice/a/f", "/home/alice/b/g") is True
    [(part, parent, name, ident)] = rows_of(db, file.id)
    new_parent = namespace.get_status(alice, "/home/alice/b").file_id
    assert (parent, name, ident) == (new_parent, "g", file.id)
    assert part == partition_id(new_parent, "g") and (part, parent, name) != file.key
    assert blocks_of(db, file.id) == before
    assert read_file(namespace, alice, "/home/alice/b/g") == data


def test_moving_a_directory_keeps_the_keys_of_its_children(namespace, db, alice):
    write_file(namespace, alice, "/home/alice/d/x/f", b"1")
    d = namespace.get_status(alice, "/home/alice/d").file_id
    children = db.run(lambda tx: tx.query("SELECT partition_id, parent_id, name, id FROM hops.hdfs_inodes"
                                          " WHERE parent_id=%s", (d,)))
    namespace.set_permission(namespace.caller("hdfs"), "/", 0o777)
    assert namespace.rename(alice, "/home/alice/d", "/top") is True
    [(part, parent, name, ident)] = rows_of(db, d)
    assert (parent, name, ident) == (ROOT_ID, "top", d)
    assert part == partition_id(ROOT_ID, "top")  # children of the root are spread by name hash
    assert db.run(lambda tx: tx.query("SELECT partition_id, parent_id, name, id FROM hops.hdfs_inodes"
                                      " WHERE parent_id=%s", (d,))) == children
    assert read_file(namespace, alice, "/top/x/f") == b"1"
    assert orphans(db) == []


def test_repoint_runs_between_insert_and_delete_in_the_callers_transaction(namespace, db, alice):
    namespace.mkdirs(alice, "/home/alice/warehouse/t1")
    moved_id = namespace.get_status(alice, "/home/alice/warehouse/t1").file_id
    calls = []

    def repoint(tx, old_key, new_key):
        present = {key: tx.query_one("SELECT id FROM hops.hdfs_inodes WHERE partition_id=%s AND parent_id=%s"
                                     " AND name=%s", key) for key in (old_key, new_key)}
        calls.append((old_key, new_key, present))

    with db.transaction() as tx:
        assert namespace.rename(alice, "/home/alice/warehouse/t1", "/home/alice/warehouse/t2",
                                tx=tx, repoint=repoint) is True
        assert calls, "repoint was not called"
        # Not visible outside the transaction yet.
        assert namespace.get_status(alice, "/home/alice/warehouse/t1").file_id == moved_id
    [(old_key, new_key, present)] = calls
    assert present == {old_key: (moved_id,), new_key: (moved_id,)}
    assert old_key[2] == "t1" and new_key[2] == "t2"
    [(part, parent, name, ident)] = rows_of(db, moved_id)
    assert (part, parent, name) == new_key


def test_a_failing_repoint_rolls_the_whole_move_back(namespace, db, alice):
    namespace.mkdirs(alice, "/home/alice/w/t1")
    moved_id = namespace.get_status(alice, "/home/alice/w/t1").file_id

    def repoint(tx, old_key, new_key):
        raise RuntimeError("metastore refused")

    with pytest.raises(RuntimeError, match="metastore refused"):
        with db.transaction() as tx:
            namespace.rename(alice, "/home/alice/w/t1", "/home/alice/w/t2", tx=tx, repoint=repoint)
    [(_, _, name, _)] = rows_of(db, moved_id)
    assert name == "t1"
    assert namespace.get_status(alice, "/home/alice/w/t1").file_id == moved_id
