"""Leases: a write that never finishes (its namenode died, or the writer failed) is undone.
A created file disappears; an appended one keeps exactly its committed blocks."""

from __future__ import annotations

import pytest

from hopshive.exceptions import AlreadyBeingCreated, FileNotFound, FileUnderConstruction
from hopshive.namespace.maintenance import recover_dead
from tests.support.invariants import leftovers, orphans
from tests.support.library import declare_dead, read_file, unfinished_write, write_file

COMMITTED = bytes(range(256)) * 6  # 1.5 blocks of 1 KiB

CLEAN = {"leases": 0, "under_construction": 0, "subtree_locks": 0, "blocks_without_inode": 0}


def block_rows(db, inode_id):
    return db.run(lambda tx: tx.query("SELECT block_index, block_id, num_bytes FROM hops.hdfs_block_infos"
                                      " WHERE inode_id=%s ORDER BY block_index", (inode_id,)))


@pytest.fixture
def hdfs(namespace):
    return namespace.caller("hdfs")


def test_an_unfinished_file_is_neither_readable_nor_writable_by_others(namespace, hdfs):
    unfinished_write(namespace, hdfs, "/w/f", b"partial")
    with pytest.raises(FileUnderConstruction):
        namespace.file_blocks(hdfs, "/w/f")
    with pytest.raises(AlreadyBeingCreated):
        write_file(namespace, hdfs, "/w/f", b"other writer")
    with pytest.raises(AlreadyBeingCreated):
        namespace.start_append(hdfs, "/w/f", ("someone", "else"))


def test_recovery_removes_a_file_created_by_a_dead_namenode(namespace, peer_namespace, db, hdfs):
    peer = peer_namespace()
    namespace.mkdirs(hdfs, "/w")
    inode, holder, writer = unfinished_write(peer, hdfs, "/w/f", b"x" * 3000)
    writer.finish()  # the blocks reached the peer's disk, but the file was never closed
    declare_dead(db, peer.liveness.namenode_id)

    counts = recover_dead(namespace)
    assert (counts["leases"], counts["namenodes"]) == (1, 1)
    with pytest.raises(FileNotFound):
        namespace.get_status(hdfs, "/w/f")
    assert leftovers(db) == CLEAN and orphans(db) == []
    with pytest.raises(FileNotFound, match="deleted or recovered"):  # the writer comes back too late
        peer.complete_file(inode.id, holder, writer.blocks, writer.replaces_tail)
    write_file(namespace, hdfs, "/w/f", b"new")  # the name is free again
    assert read_file(namespace, hdfs, "/w/f") == b"new"


def test_recovery_rolls_an_append_back_to_its_committed_blocks(namespace, peer_namespace, db, hdfs):
    peer = peer_namespace()
    file = write_file(namespace, hdfs, "/w/log", COMMITTED)
    committed_blocks = block_rows(db, file.id)
    _, holder, writer = unfinished_write(peer, hdfs, "/w/log", b"y" * 2000, append=True)
    writer.finish()
    declare_dead(db, peer.liveness.namenode_id)

    assert recover_dead(namespace)["leases"] == 1
    status = namespace.get_status(hdfs, "/w/log")
    assert (status.length, status.under_construction) == (len(COMMITTED), False)
    assert block_rows(db, file.id) == committed_blocks
    assert read_file(namespace, hdfs, "/w/log") == COMMITTED
    assert leftovers(db) == CLEAN
    write_file(namespace, hdfs, "/w/log", b"z", append=True)
    assert read_file(namespace, hdfs, "/w/log") == COMMITTED + b"z"


def test_a_failed_writer_abandons_its_create_and_its_append(namespace, db, hdfs):
    inode, holder, writer = unfinished_write(namespace, hdfs, "/w/new", b"partial")
    writer.abort()
    namespace.abandon_file(inode.id, holder)
    with pytest.raises(FileNotFound):
        namespace.get_status(hdfs, "/w/new")

    write_file(namespace, hdfs, "/w/old", COMMITTED)
    inode, holder, writer = unfinished_write(namespace, hdfs, "/w/old", b"more", append=True)
    writer.abort()
    namespace.abandon_file(inode.id, holder)
    assert read_file(namespace, hdfs, "/w/old") == COMMITTED
    assert leftovers(db) == CLEAN


def test_abandoning_someone_elses_lease_does_nothing(namespace, db, hdfs):
    inode, holder, writer = unfinished_write(namespace, hdfs, "/w/f", b"mine")
    namespace.abandon_file(inode.id, "an impostor")
    assert leftovers(db)["leases"] == 1
    namespace.complete_file(inode.id, holder, writer.finish(), writer.replaces_tail)
    assert read_file(namespace, hdfs, "/w/f") == b"mine"


def test_recovery_leaves_live_namenodes_writes_alone(namespace, peer_namespace, db, hdfs):
    peer = peer_namespace()
    inode, holder, writer = unfinished_write(peer, hdfs, "/w/f", b"still writing")
    assert recover_dead(namespace)["leases"] == 0
    assert leftovers(db)["leases"] == 1
    peer.complete_file(inode.id, holder, writer.finish(), writer.replaces_tail)
    assert read_file(peer, hdfs, "/w/f") == b"still writing"
