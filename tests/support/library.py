"""Driving the namespace library directly, as the WebHDFS layer does: whole files, writes
left unfinished, and namenodes that die."""

from __future__ import annotations

from hopshive.core.db import Database
from hopshive.namespace.inodes import Inode
from hopshive.namespace.namespace import Namespace
from hopshive.namespace.users import Caller

BLOCK_SIZE = 1024


def namespace_config(data_dir, small_file_limit: int = 0) -> dict:
    """A namespace library configuration for tests; they are about blocks, so small files
    are off unless asked for."""
    return {"superusers": ["hdfs"], "supergroup": "supergroup", "data_dir": str(data_dir), "umask": "022",
            "small_file_limit": small_file_limit}


def unfinished_write(ns: Namespace, caller: Caller, path: str, data: bytes, append: bool = False,
                     block_size: int = BLOCK_SIZE) -> tuple[Inode, str, object]:
    """Lease ``path`` and stream ``data`` into blocks without closing the file; returns
    (inode, lease holder, writer)."""
    holder = f"test-{path}"
    if append:
        inode, blocks = ns.start_append(caller, path, (holder, "test"))
    else:
        inode, blocks = ns.start_file(caller, path, False, None, 1, block_size, (holder, "test")), None
    writer = ns.writer(inode, blocks)
    writer.write(data)
    return inode, holder, writer


def write_file(ns: Namespace, caller: Caller, path: str, data: bytes, append: bool = False,
               block_size: int = BLOCK_SIZE) -> Inode:
    inode, holder, writer = unfinished_write(ns, caller, path, data, append, block_size)
    ns.complete_file(inode.id, holder, writer.finish(), writer.replaces_tail)
    return inode


def read_file(ns: Namespace, caller: Caller, path: str) -> bytes:
    inode, blocks = ns.file_blocks(caller, path)
    return b"".join(ns.blocks.read(blocks, 0, inode.size))


def declare_dead(db: Database, namenode_id: int) -> None:
    """Age a namenode's heartbeat far past any `dead_after`, as if it had crashed."""
    db.run(lambda tx: tx.execute("UPDATE hops.hdfs_namenodes SET heartbeat = NOW(3) - INTERVAL 1 HOUR"
                                 " WHERE id=%s", (namenode_id,)))


def add_namenode(db: Database, namenode_id: int, alive: bool, address: str = "elsewhere:1") -> None:
    """A namenode row for a process that does not exist here (a live or a dead peer)."""
    heartbeat = "NOW(3)" if alive else "NOW(3) - INTERVAL 1 HOUR"
    db.run(lambda tx: tx.execute(f"INSERT INTO hops.hdfs_namenodes (id, address, started_at, heartbeat)"
                                 f" VALUES (%s, %s, {heartbeat}, {heartbeat})", (namenode_id, address)))


def set_subtree_lock(db: Database, inode_id: int, owner: int | None) -> None:
    db.run(lambda tx: tx.execute("UPDATE hops.hdfs_inodes SET subtree_locked=%s, subtree_lock_owner=%s"
                                 " WHERE id=%s", (1 if owner is not None else None, owner, inode_id)))
