"""Subtree locks: work inside a directory that a live operation is deleting or moving is
refused at once (not queued); a dead owner's lock is ignored and cleared by recovery."""

from __future__ import annotations

import threading

import pytest

from hopshive.exceptions import FileNotFound, SubtreeLocked
from hopshive.namespace.maintenance import recover_dead
from tests.support.invariants import leftovers
from tests.support.library import add_namenode, declare_dead, set_subtree_lock, write_file

LIVE_PEER, DEAD_PEER = 900, 901


@pytest.fixture
def tree(namespace):
    """/data/locked/{sub/f, g} and /data/free, as the superuser."""
    hdfs = namespace.caller("hdfs")
    write_file(namespace, hdfs, "/data/locked/sub/f", b"f")
    write_file(namespace, hdfs, "/data/locked/g", b"g")
    namespace.mkdirs(hdfs, "/data/free")
    return hdfs


def locked_id(namespace, caller, path="/data/locked") -> int:
    return namespace.get_status(caller, path).file_id


ATTEMPTS = {
    "mkdirs inside": lambda ns, c: ns.mkdirs(c, "/data/locked/sub/new"),
    "create inside": lambda ns, c: write_file(ns, c, "/data/locked/sub/h", b"h"),
    "append inside": lambda ns, c: write_file(ns, c, "/data/locked/g", b"more", append=True),
    "delete inside": lambda ns, c: ns.delete(c, "/data/locked/sub/f", recursive=False),
    "chmod inside": lambda ns, c: ns.set_permission(c, "/data/locked/sub", 0o700),
    "move out": lambda ns, c: ns.rename(c, "/data/locked/g", "/data/free/g"),
    "move in": lambda ns, c: ns.rename(c, "/data/free", "/data/locked/sub"),
    "delete the root": lambda ns, c: ns.delete(c, "/data/locked", recursive=True),
    "delete an ancestor": lambda ns, c: ns.delete(c, "/data", recursive=True),
}


def test_a_live_peers_subtree_lock_refuses_work_inside(namespace, db, tree):
    add_namenode(db, LIVE_PEER, alive=True)
    set_subtree_lock(db, locked_id(namespace, tree), LIVE_PEER)
    before = leftovers(db)
    for name, attempt in ATTEMPTS.items():  # each refusal changes nothing, so one tree serves all
        with pytest.raises(SubtreeLocked):
            attempt(namespace, tree)
            pytest.fail(f"{name} was not refused")
        assert namespace.get_status(tree, "/data/locked/sub/f").length == 1, name
        assert namespace.get_status(tree, "/data/locked/g").length == 1, name
        assert leftovers(db) == before, name
    namespace.mkdirs(tree, "/data/free/outside")  # the rest of the tree is unaffected


def test_the_lock_of_another_operation_of_the_same_namenode_refuses_too(namespace, db, tree):
    set_subtree_lock(db, locked_id(namespace, tree), namespace.liveness.namenode_id)
    with pytest.raises(SubtreeLocked):
        namespace.mkdirs(tree, "/data/locked/sub/new")


def test_work_inside_is_refused_without_waiting_for_the_subtree_transaction(namespace, db, tree):
    """The subtree operation's second transaction holds row locks under its root; a request
    inside must see the lock and give up, not queue behind that transaction."""
    add_namenode(db, LIVE_PEER, alive=True)
    target = locked_id(namespace, tree)
    set_subtree_lock(db, target, LIVE_PEER)
    with db.transaction() as holder:  # the peer's long transaction, holding the rows
        holder.execute("SELECT id FROM hops.hdfs_inodes WHERE parent_id=%s OR id=%s FOR UPDATE", (target, target))
        outcome = {}
        attempt = threading.Thread(target=lambda: outcome.update(
            error=pytest.raises(SubtreeLocked, namespace.mkdirs, tree, "/data/locked/sub/new")))
        attempt.start()
        attempt.join(20)  # far below the lock-wait timeout of 50 s
        assert not attempt.is_alive(), "mkdirs queued behind the subtree transaction"
    assert outcome["error"].type is SubtreeLocked


def test_a_dead_owners_lock_is_ignored_and_cleared_by_recovery(namespace, db, tree):
    add_namenode(db, DEAD_PEER, alive=False)
    set_subtree_lock(db, locked_id(namespace, tree), DEAD_PEER)
    namespace.mkdirs(tree, "/data/locked/sub/new")  # not refused
    counts = recover_dead(namespace)
    assert counts["subtree_locks"] == 1 and counts["namenodes"] >= 1
    assert leftovers(db)["subtree_locks"] == 0
    assert db.run(lambda tx: tx.query_one("SELECT COUNT(*) FROM hops.hdfs_namenodes WHERE id=%s",
                                          (DEAD_PEER,)))[0] == 0


def test_a_peer_that_dies_holding_a_lock_releases_it_to_recovery(namespace, peer_namespace, db, tree):
    peer = peer_namespace()
    set_subtree_lock(db, locked_id(namespace, tree), peer.liveness.namenode_id)
    with pytest.raises(SubtreeLocked):
        namespace.delete(tree, "/data/locked", recursive=True)
    declare_dead(db, peer.liveness.namenode_id)
    recover_dead(namespace)
    assert namespace.delete(tree, "/data/locked", recursive=True) is True
    assert leftovers(db) == {"leases": 0, "under_construction": 0, "subtree_locks": 0, "blocks_without_inode": 0}


def test_a_completed_subtree_operation_leaves_no_lock(namespace, db, tree):
    assert namespace.rename(tree, "/data/locked", "/data/free/moved") is True
    assert namespace.delete(tree, "/data/free", recursive=True) is True
    assert leftovers(db)["subtree_locks"] == 0


def test_a_row_lock_on_one_inode_does_not_stall_work_elsewhere(namespace, db, tree):
    """Ancestors are share-locked by primary key even where the optimizer would rather scan
    the whole (small) inode table, which would lock every inode: a transaction holding one
    file's row must not stall a create or a delete in another directory."""
    target = namespace.get_status(tree, "/data/locked/g").file_id
    with db.transaction() as holder:
        holder.execute("SELECT id FROM hops.hdfs_inodes WHERE id=%s FOR UPDATE", (target,))
        attempt = threading.Thread(target=lambda: (namespace.mkdirs(tree, "/data/free/a/b/c/d"),
                                                   namespace.delete(tree, "/data/free/a", recursive=True)))
        attempt.start()
        attempt.join(20)  # far below the lock-wait timeout of 50 s
        assert not attempt.is_alive(), "work in /data/free queued behind a lock on /data/locked/g"
    with pytest.raises(FileNotFound):
        namespace.get_status(tree, "/data/free/a")
