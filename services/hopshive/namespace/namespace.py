"""The namespace: HopsFS's file-system operations over `hops.hdfs_inodes`.

Every operation is one database transaction.  Each public method takes an optional ``tx``:
given one, the operation joins the caller's transaction (the metastore creates a directory
and its metadata atomically this way); without one, it runs in its own, retried on deadlock.

Subtree operations (recursive delete, move of a non-empty directory) follow HopsFS's
subtree-lock protocol when they run in their own transaction: a first transaction marks
the directory (`subtree_locked`, `subtree_lock_owner` = this namenode), so operations
inside it are refused cleanly instead of queueing behind a long transaction; the second
does the work.  A lock whose owner has died is ignored, and cleared by recovery.  Inside a
caller's transaction the directory row is locked exclusively instead.

A move replaces the inode row (new primary key, same id), as on NDB: foreign keys from
metastore.SDS to the old key cascade, so a table directory moved behind Hive's back takes
its metadata with it.  ``rename(..., repoint=...)`` lets the metastore repoint its storage
descriptors between inserting the new row and deleting the old one.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Iterator

from MySQLdb.constants import ER

from ..core.db import Database, DriverError, IntegrityError, TransactionConflict, Tx, error_code
from ..exceptions import (AccessDenied, AlreadyBeingCreated, FileAlreadyExists, FileNotFound,
                          FileUnderConstruction, InvalidArgument, ParentNotDirectory,
                          PathIsNotEmptyDirectory, SubtreeLocked)
from .blocks import IN_DATABASE, Block, BlockStore, BlockWriter, SmallFileWriter
from .ids import IdAllocator
from .inodes import BY_KEYS, INODES, INSERT, KEY_WHERE, SELECT, Inode, header, keys_in
from .liveness import Liveness
from .replication import Holders, fsck_counts
from .paths import is_ancestor, join, split_path
from .permissions import EXECUTE, READ, WRITE, PermissionChecker
from .resolver import Resolved, Resolver
from .status import ContentSummary, FileStatus
from .users import Caller, UserDirectory

Repoint = Callable[[Tx, tuple, tuple], None]
BATCH = 1000
SMALL_FILE_LIMIT = 64 * 1024      # bytes; files up to this size live in the database
MAX_SMALL_FILE_LIMIT = (1 << 24) - 1   # hdfs_small_files.data is a MEDIUMBLOB
HOLDER_TIMEOUT = 630.0                  # seconds; HDFS declares a datanode dead after 10.5 min
MAX_REPLICATION = 512                   # HDFS's dfs.replication.max


class NameTaken(FileAlreadyExists, TransactionConflict):
    """A name this transaction inserts was taken by another that committed first: a creator
    that shares its parent's lock with other creators learns it here, and its transaction
    runs again (then it sees the entry, and HDFS's rules for an existing name apply)."""


def now_ms() -> int:
    return int(time.time() * 1000)


def _chunks(items: list, size: int = BATCH) -> Iterator[list]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


class Namespace:
    def __init__(self, db: Database, config: dict, location: str, liveness: Liveness):
        self.db = db
        self.config = config
        # Ids, users and groups are read or reserved in short transactions of their own while
        # an operation's transaction holds row locks.  From the shared pool, that connection
        # could be the one the lock waiters keep busy (a stall until the lock-wait timeout),
        # so they get a small pool of their own.
        side = Database(dict(db.config, pool_size=2))
        self.users = UserDirectory(side, config["superusers"], config["supergroup"])
        self.permissions = PermissionChecker(self.users)
        self.resolver = Resolver()
        self.inode_ids = IdAllocator(side, "inode_id")
        self.block_ids = IdAllocator(side, "block_id")
        self.blocks = BlockStore(config["data_dir"], location)
        self.liveness = liveness
        self.holders = Holders(side, location, float(config.get("dead_after", 10.0)),
                               float(config.get("holder_timeout", HOLDER_TIMEOUT)))
        self.replication = int(config.get("replication", 1))
        self.umask = int(str(config.get("umask", "022")), 8)
        self.small_file_limit = int(config.get("small_file_limit", SMALL_FILE_LIMIT))
        if not 0 <= self.small_file_limit <= MAX_SMALL_FILE_LIMIT:
            raise ValueError(f"small_file_limit must be between 0 and {MAX_SMALL_FILE_LIMIT} bytes")
        self._subtrees = threading.local()
        # Creators in one directory share its lock where row locks are the whole story (one
        # database node).  Galera certifies only the rows a transaction writes: there a create
        # writes its parent's row (its time) in its own transaction, so that a delete or move
        # of the parent on another node conflicts with it instead of leaving an orphan.
        self.shared_parent_locks = not db.config.get("wsrep_sync_wait")

    def format_root(self) -> None:
        """Give the root to the first superuser and the supergroup (once, idempotent)."""
        owner, group = self.users.user_id(self.config["superusers"][0]), self.users.group_id(self.config["supergroup"])
        self.db.run(lambda tx: tx.execute(f"UPDATE {INODES} SET user_id=%s, group_id=%s WHERE parent_id=0 AND name=''"
                                          " AND partition_id=0 AND user_id IS NULL", (owner, group)))

    # ---------------------------------------------------------------- helpers
    def caller(self, user: str) -> Caller:
        return self.users.caller(user)

    def _run(self, tx: Tx | None, work: Callable[[Tx], object], readonly: bool = False):
        return work(tx) if tx is not None else self.db.run(work, readonly=readonly)

    def _check_unlocked(self, resolved: Resolved, path: str) -> None:
        """Refuse to work inside a subtree another operation (of a live namenode, this one
        included) is deleting or moving; the operation holding the lock passes."""
        own = getattr(self._subtrees, "ids", ())
        for inode in resolved.inodes[1:]:
            owner = inode.subtree_lock_owner
            if inode.subtree_locked and inode.id not in own and self.liveness.is_alive(owner):
                raise SubtreeLocked(f"{path}: a directory on this path is being deleted or moved "
                                    f"by another operation; retry later")

    def _resolve_for_update(self, tx: Tx, components: list[str], path: str, exclusive: int = 2) -> Resolved:
        """Resolve and lock a path.  The locking read first asks not to wait (NOWAIT): a
        running subtree operation holds row locks on what it works on, and waiting for them
        would queue behind it instead of seeing its subtree lock.  Only when a row is locked
        is the path read without locks, its subtree locks checked, and the locks waited for."""
        try:
            resolved = self.resolver.resolve(tx, components, exclusive=exclusive, lock=True, nowait=True)
        except DriverError as exc:
            if error_code(exc) != ER.LOCK_WAIT_TIMEOUT:
                raise
            self._check_unlocked(self.resolver.resolve(tx, components), path)
            resolved = self.resolver.resolve(tx, components, exclusive=exclusive, lock=True)
        self._check_unlocked(resolved, path)
        return resolved

    def _touch(self, tx: Tx, directory: Inode, when: int, after_commit: bool = False) -> None:
        """Set a directory's modification time in ``tx``; or, ``after_commit`` (a create that
        shares the parent's lock), once ``tx`` has committed, by a statement of its own, before
        the caller hears back: creators in one directory then share its lock instead of queueing
        for it behind each other's transactions (HopsFS takes no exclusive parent lock for a
        create either).  GREATEST: no such update makes the time go back.  A namenode that dies
        between the two leaves the time of the create before."""
        if not directory.parent_id:  # the root is immutable, as in HopsFS
            return
        if not after_commit:
            tx.execute(f"UPDATE {INODES} SET modification_time=%s WHERE {KEY_WHERE}", (when, *directory.key))
            return
        key = directory.key
        tx.after_commit(lambda: self.db.run(lambda t: t.execute(
            f"UPDATE {INODES} SET modification_time=GREATEST(modification_time, %s) WHERE {KEY_WHERE}",
            (when, *key))))

    def _status(self, inode: Inode, name: str, children: int = 0) -> FileStatus:
        return FileStatus(
            path_suffix=name, is_dir=bool(inode.is_dir), length=0 if inode.is_dir else inode.size,
            owner=self.users.user_name(inode.user_id), group=self.users.group_name(inode.group_id),
            permission=inode.permission or 0, access_time=inode.access_time or 0,
            modification_time=inode.modification_time or 0,
            block_size=0 if inode.is_dir else inode.block_size,
            replication=0 if inode.is_dir else inode.replication, file_id=inode.id,
            children_num=children, under_construction=bool(inode.under_construction))

    def _require(self, resolved: Resolved, path: str) -> Inode:
        if not resolved.exists:
            raise FileNotFound(f"File does not exist: {path}")
        return resolved.last

    def _new_inode(self, caller: Caller, parent: Inode, name: str, is_dir: bool, permission: int,
                   when: int, hdr: int | None = None, lease: tuple | None = None) -> Inode:
        client_name, client_machine = lease or (None, None)
        return Inode(
            0, 0, "", self.inode_ids.next(), self.users.user_id(caller.name), parent.group_id, when, when,
            permission, client_name, client_machine,
            str(self.liveness.namenode_id) if lease else None, None, hdr, None, None, 0, 0, 0,
            int(is_dir), int(lease is not None), None).moved(parent.id, name)

    def _insert(self, tx: Tx, inode: Inode, path: str) -> None:
        try:
            tx.execute(INSERT, inode.values())
        except IntegrityError as exc:
            raise NameTaken(f"{path} already exists") from exc

    # ------------------------------------------------------------------ reads
    def get_status(self, caller: Caller, path: str, tx: Tx | None = None) -> FileStatus:
        components = split_path(path)

        def work(t: Tx) -> FileStatus:
            # A directory's children are counted in the resolving statement when its path is
            # cached as a directory (the common case), saving a round trip.
            resolved = self.resolver.resolve(t, components, count_children=True)
            self.permissions.check_traverse(caller, resolved.ancestors, path)
            inode = self._require(resolved, path)
            children = resolved.children
            if children is None:
                children = t.query_one(f"SELECT COUNT(*) FROM {INODES} WHERE parent_id=%s", (inode.id,))[0] \
                    if inode.is_dir else 0
            return self._status(inode, "", children)
        return self._run(tx, work, readonly=True)

    def resolve(self, tx: Tx, path: str) -> Inode | None:
        """The inode at ``path`` (None when absent) inside the caller's transaction."""
        return self.resolver.resolve(tx, split_path(path)).last

    def list_status(self, caller: Caller, path: str, start_after: str = "",
                    limit: int | None = None) -> list[FileStatus]:
        components = split_path(path)

        def work(t: Tx) -> list[FileStatus]:
            resolved = self.resolver.resolve(t, components)
            self.permissions.check_traverse(caller, resolved.ancestors, path)
            inode = self._require(resolved, path)
            if not inode.is_dir:
                return [self._status(inode, "")]
            self.permissions.check(caller, inode, READ | EXECUTE, path)
            sql = f"{SELECT} WHERE parent_id=%s AND name>%s ORDER BY name"
            rows = t.query(sql + (f" LIMIT {int(limit)}" if limit else ""), (inode.id, start_after))
            children = [Inode(*row) for row in rows]
            counts = self._child_counts(t, [c.id for c in children if c.is_dir])
            return [self._status(c, c.name, counts.get(c.id, 0)) for c in children]
        return self.db.run(work, readonly=True)

    def _child_counts(self, tx: Tx, ids: list[int]) -> dict[int, int]:
        counts: dict[int, int] = {}
        for chunk in _chunks(ids):
            marks = ",".join(["%s"] * len(chunk))
            counts.update(tx.query(f"SELECT parent_id, COUNT(*) FROM {INODES} WHERE parent_id IN ({marks})"
                                   " GROUP BY parent_id", chunk))
        return counts

    def _descendants(self, tx: Tx, root: Inode) -> list[Inode]:
        """Every inode below ``root``, breadth first (one query per level and batch)."""
        found: list[Inode] = []
        level = [root.id]
        while level:
            next_level = []
            for chunk in _chunks(level):
                marks = ",".join(["%s"] * len(chunk))
                for row in tx.query(f"{SELECT} WHERE parent_id IN ({marks})", chunk):
                    inode = Inode(*row)
                    found.append(inode)
                    if inode.is_dir:
                        next_level.append(inode.id)
            level = next_level
        return found

    def content_summary(self, caller: Caller, path: str) -> ContentSummary:
        components = split_path(path)

        def work(t: Tx) -> ContentSummary:
            resolved = self.resolver.resolve(t, components)
            self.permissions.check_traverse(caller, resolved.ancestors, path)
            inode = self._require(resolved, path)
            everything = [inode] + (self._descendants(t, inode) if inode.is_dir else [])
            for directory in everything:    # as HDFS: read and execute on every directory counted
                if directory.is_dir:
                    self.permissions.check(caller, directory, READ | EXECUTE, path)
            files = [i for i in everything if not i.is_dir]
            length = sum(i.size for i in files)
            return ContentSummary(length, len(files), len(everything) - len(files),
                                  sum(i.size * max(i.replication, 1) for i in files))
        return self.db.run(work, readonly=True)

    def fsck(self, caller: Caller, path: str) -> dict:
        """HDFS fsck's summary of the files at and below ``path`` (superuser only, as HDFS)."""
        if not caller.superuser:
            raise AccessDenied(f"Permission denied: fsck of {path} needs the superuser")
        components = split_path(path)

        def work(t: Tx) -> dict:
            inode = self._require(self.resolver.resolve(t, components), path)
            everything = [inode] + (self._descendants(t, inode) if inode.is_dir else [])
            files = [i for i in everything if not i.is_dir]
            return fsck_counts(t, self.holders, [i.id for i in files], sum(i.size for i in files),
                               len(everything) - len(files), self.replication)
        return self.db.run(work, readonly=True)

    def file_blocks(self, caller: Caller, path: str, for_read: bool = True,
                    tx: Tx | None = None) -> tuple[Inode, list[Block]]:
        """A complete file and its blocks; refuses files still being written."""
        components = split_path(path)

        def work(t: Tx) -> tuple[Inode, list[Block]]:
            resolved = self.resolver.resolve(t, components)
            self.permissions.check_traverse(caller, resolved.ancestors, path)
            inode = self._require(resolved, path)
            if inode.is_dir:
                raise FileNotFound(f"Path is not a file: {path}")
            if for_read:
                self.permissions.check(caller, inode, READ, path)
            if inode.under_construction:
                raise FileUnderConstruction(f"{path} is being written and cannot be read until it is closed")
            return inode, self._blocks_of(t, inode.id)
        return self._run(tx, work, readonly=True)

    def _blocks_of(self, tx: Tx, inode_id: int) -> list[Block]:
        """A file's blocks, or its one inline block when it is a small file (one statement)."""
        rows = tx.query("SELECT block_index, block_id, num_bytes, location, generation_stamp, NULL,"
                        " (SELECT GROUP_CONCAT(r.location ORDER BY r.location) FROM hops.hdfs_replicas r"
                        "  WHERE r.block_id=b.block_id AND r.corrupt=0)"
                        " FROM hops.hdfs_block_infos b WHERE inode_id=%s"
                        " UNION ALL SELECT 0, 0, LENGTH(data), %s, 0, data, NULL FROM hops.hdfs_small_files"
                        " WHERE inode_id=%s ORDER BY 1", (inode_id, IN_DATABASE, inode_id))
        return [Block(*row[1:6], replicas=tuple(row[6].split(",")) if row[6] else ()) for row in rows]

    # -------------------------------------------------------------- mutations
    def mkdirs(self, caller: Caller, path: str, permission: int | None = None,
               tx: Tx | None = None) -> Inode:
        """Create ``path`` and missing parents; returns the directory's inode."""
        components = split_path(path)
        mode = (0o777 & ~self.umask) if permission is None else permission

        # In a transaction of its own, mkdirs shares the parent's lock with other creators
        # (_make_parents); in a caller's, it holds it, as the caller's other work may expect.
        shared = tx is None and self.shared_parent_locks

        def work(t: Tx) -> Inode:
            resolved = self._resolve_for_update(t, components, path, exclusive=0 if shared else 2)
            if resolved.exists:
                if not resolved.last.is_dir:
                    raise FileAlreadyExists(f"Path is not a directory: {path}")
                return resolved.last
            return self._make_parents(t, caller, resolved, len(components), mode, path, shared)
        return self._run(tx, work)

    def _make_parents(self, tx: Tx, caller: Caller, resolved: Resolved, upto: int, mode: int,
                      path: str, shared: bool = False) -> Inode:
        """Create the missing directories of ``resolved.components[:upto]``; returns the last.
        ``shared``: the deepest existing directory stays share-locked (a delete or move of it
        still waits; two creators of one name meet at its primary key: NameTaken), and its
        modification time is set after the commit."""
        parent = resolved.inodes[-1]
        depth = len(resolved.inodes) - 1
        if not parent.is_dir:
            raise ParentNotDirectory(f"Parent path is not a directory: {join(resolved.components[:depth])}")
        self.permissions.check_traverse(caller, resolved.ancestors, path)
        if depth >= upto:
            return parent
        self.permissions.check(caller, parent, WRITE | EXECUTE, path)
        if not shared and depth < len(resolved.components) - 1:  # it was only share-locked
            tx.query_one(f"SELECT id FROM {INODES} WHERE {KEY_WHERE} FOR UPDATE", parent.key)
        when = now_ms()
        self._touch(tx, parent, when, after_commit=shared)
        parent_mode = mode | 0o300  # HDFS: implicit parents are always writable/traversable by the owner
        for i in range(depth, upto):
            child = self._new_inode(caller, parent, resolved.components[i], True,
                                    mode if i == upto - 1 else parent_mode, when)
            self._insert(tx, child, join(resolved.components[:i + 1]))
            parent = child
        return parent

    def delete(self, caller: Caller, path: str, recursive: bool, skip_trash: bool = True,
               tx: Tx | None = None) -> bool:
        """Delete ``path``; without ``skip_trash`` move it to the caller's trash instead.
        Returns False when it did not exist."""
        components = split_path(path)
        if not components:
            return False
        trash = ["user", caller.name, ".Trash"]
        if not skip_trash and not is_ancestor(trash, components):
            return self._subtree(components, lambda t: self._to_trash(t, caller, components, path), tx)
        return self._subtree(components, lambda t: self._delete(t, caller, components, recursive, path), tx)

    def _delete(self, tx: Tx, caller: Caller, components: list[str], recursive: bool, path: str) -> bool:
        resolved = self._resolve_for_update(tx, components, path)
        self.permissions.check_traverse(caller, resolved.ancestors, path)
        if not resolved.exists:
            return False
        target, parent = resolved.last, resolved.parent
        self.permissions.check(caller, parent, WRITE | EXECUTE, path)
        self.permissions.check_sticky(caller, parent, target, path)
        everything = [target]
        if target.is_dir:
            below = self._descendants(tx, target)
            if below and not recursive:
                raise PathIsNotEmptyDirectory(f"`{path} is non empty': Directory is not empty")
            if below:  # HDFS: deleting a non-empty directory needs full access to every directory in it
                for inode in [target] + [i for i in below if i.is_dir]:
                    self.permissions.check(caller, inode, READ | WRITE | EXECUTE, path)
            everything += below
        self._remove(tx, everything)
        self._touch(tx, parent, now_ms())
        tx.after_commit(lambda: self.resolver.forget(components))
        return True

    def _remove(self, tx: Tx, inodes: list[Inode]) -> None:
        """Delete inode rows (metadata cascades) and invalidate their blocks."""
        file_ids = [i.id for i in inodes if not i.is_dir]
        invalid: list[tuple] = []
        for chunk in _chunks(file_ids):
            marks = ",".join(["%s"] * len(chunk))
            invalid += tx.query(f"SELECT r.block_id, r.location FROM hops.hdfs_block_infos b JOIN hops.hdfs_replicas r"
                                f" ON r.block_id=b.block_id WHERE b.inode_id IN ({marks})", chunk)
            tx.execute(f"DELETE FROM hops.hdfs_replicas WHERE block_id IN"
                       f" (SELECT block_id FROM hops.hdfs_block_infos WHERE inode_id IN ({marks}))", chunk)
            tx.execute(f"DELETE FROM hops.hdfs_block_infos WHERE inode_id IN ({marks})", chunk)
            tx.execute(f"DELETE FROM hops.hdfs_small_files WHERE inode_id IN ({marks})", chunk)
            tx.execute(f"DELETE FROM hops.hdfs_leases WHERE inode_id IN ({marks})", chunk)
        tx.executemany("INSERT IGNORE INTO hops.hdfs_invalidated_blocks (block_id, location) VALUES (%s, %s)",
                       invalid)
        for chunk in _chunks([i.key for i in inodes], 500):
            where = keys_in(len(chunk))
            tx.execute(f"DELETE {INODES} FROM {BY_KEYS} WHERE {where}", [v for key in chunk for v in key])
        mine = [block_id for block_id, location in invalid if location == self.blocks.location]
        if mine:
            tx.after_commit(lambda: self.purge_blocks(mine))

    def purge_blocks(self, block_ids: list[int]) -> None:
        """Remove invalidated blocks of this namenode from disk, then forget them."""
        self.blocks.delete(block_ids)
        for chunk in _chunks(block_ids):
            marks = ",".join(["%s"] * len(chunk))
            self.db.run(lambda t: t.execute(f"DELETE FROM hops.hdfs_invalidated_blocks WHERE location=%s"
                                            f" AND block_id IN ({marks})", [self.blocks.location, *chunk]))

    def rename(self, caller: Caller, src: str, dst: str, tx: Tx | None = None,
               repoint: Repoint | None = None) -> bool:
        """HDFS's original rename: into ``dst`` when it is a directory; False (nothing done)
        when the source is missing, the destination exists as a file or lacks a parent, or
        lies inside the source."""
        source, target = split_path(src), split_path(dst)
        if not source or (is_ancestor(source, target) and source != target):
            return False
        return self._subtree(source, lambda t: self._rename(t, caller, source, target, src, repoint), tx)

    def _rename(self, tx: Tx, caller: Caller, source: list[str], target: list[str], src: str,
                repoint: Repoint | None) -> bool:
        first, second = sorted([source, target])  # lock in path order
        resolved = {tuple(first): self._resolve_for_update(tx, first, join(first)),
                    tuple(second): self._resolve_for_update(tx, second, join(second))}
        rs, rd = resolved[tuple(source)], resolved[tuple(target)]
        self.permissions.check_traverse(caller, rs.ancestors, src)
        if not rs.exists:
            return False
        if rd.exists and rd.last.is_dir and source != target:
            target = target + [source[-1]]
            if is_ancestor(source, target):
                return False
            rd = self._resolve_for_update(tx, target, join(target))
        if source == target:
            return not rs.last.is_dir
        if rd.exists or rd.parent is None or not rd.parent.is_dir:
            return False
        self.permissions.check_traverse(caller, rd.ancestors, join(target))
        self.permissions.check(caller, rs.parent, WRITE | EXECUTE, src)
        self.permissions.check_sticky(caller, rs.parent, rs.last, src)
        self.permissions.check(caller, rd.parent, WRITE | EXECUTE, join(target))
        self._move(tx, rs.last, rd.parent, target[-1], repoint)
        when = now_ms()
        self._touch(tx, rs.parent, when)
        if rd.parent.key != rs.parent.key:
            self._touch(tx, rd.parent, when)
        tx.after_commit(lambda: self.resolver.forget(source))
        return True

    def _move(self, tx: Tx, inode: Inode, parent: Inode, name: str, repoint: Repoint | None) -> Inode:
        moved = inode.moved(parent.id, name)._replace(subtree_locked=None, subtree_lock_owner=None)
        if repoint is None:
            tx.execute(f"DELETE FROM {INODES} WHERE {KEY_WHERE}", inode.key)
            self._insert(tx, moved, name)
        else:
            self._insert(tx, moved, name)
            repoint(tx, inode.key, moved.key)
            tx.execute(f"DELETE FROM {INODES} WHERE {KEY_WHERE}", inode.key)
        return moved

    def _to_trash(self, tx: Tx, caller: Caller, components: list[str], path: str) -> bool:
        resolved = self._resolve_for_update(tx, components, path)
        self.permissions.check_traverse(caller, resolved.ancestors, path)
        if not resolved.exists:
            return False
        current = ["user", caller.name, ".Trash", "Current"]
        target = current + components
        if is_ancestor(components, current):
            raise InvalidArgument(f"Cannot move {path} to the trash, as it contains the trash")
        self.permissions.check(caller, resolved.parent, WRITE | EXECUTE, path)
        self.permissions.check_sticky(caller, resolved.parent, resolved.last, path)
        # The trash belongs to its user: its directories are made on the user's behalf.
        system = Caller(caller.name, caller.groups, True)
        trash_parent = self._make_parents(tx, system, self.resolver.resolve(tx, target[:-1], lock=True),
                                          len(target) - 1, 0o700, join(target))
        name, suffix = target[-1], now_ms()
        while tx.query_one(f"SELECT 1 FROM {INODES} WHERE parent_id=%s AND name=%s", (trash_parent.id, name)):
            name, suffix = f"{target[-1]}{suffix}", suffix + 1  # unique even within one millisecond
        self._move(tx, resolved.last, trash_parent, name, None)
        self._touch(tx, resolved.parent, now_ms())
        tx.after_commit(lambda: self.resolver.forget(components))
        return True

    def expunge(self, caller: Caller, keep_minutes: float) -> list[str]:
        """Checkpoint the caller's trash and delete checkpoints older than ``keep_minutes``."""
        trash = f"/user/{caller.name}/.Trash"
        removed = []
        checkpoint = base = f"{trash}/{time.strftime('%y%m%d%H%M%S')}"
        attempt = 0
        while self.db.run(lambda t: self.resolve(t, checkpoint)) is not None:  # as Hadoop: <base>-<n>
            attempt += 1
            checkpoint = f"{base}-{attempt}"
        if self.rename(caller, f"{trash}/Current", checkpoint):
            removed.append("Current checkpointed")
        try:
            entries = self.list_status(caller, trash)
        except FileNotFound:
            return removed
        cutoff = now_ms() - keep_minutes * 60_000
        for entry in entries:
            if entry.path_suffix != "Current" and entry.modification_time < cutoff:
                self.delete(caller, f"{trash}/{entry.path_suffix}", recursive=True)
                removed.append(f"{trash}/{entry.path_suffix}")
        return removed

    # ---------------------------------------------------------- subtree locks
    def _subtree(self, components: list[str], work: Callable[[Tx], bool], tx: Tx | None) -> bool:
        if tx is not None:
            return work(tx)
        locked = self.db.run(lambda t: self._lock_subtree(t, components))
        own = self._subtrees.__dict__.setdefault("ids", set())  # this thread's operation passes its lock
        own.add(locked)
        try:
            return self.db.run(work)
        finally:
            own.discard(locked)
            if locked is not None:
                self.db.run(lambda t: t.execute(
                    f"UPDATE {INODES} SET subtree_locked=NULL, subtree_lock_owner=NULL"
                    " WHERE id=%s AND subtree_lock_owner=%s", (locked, self.liveness.namenode_id)))

    def _lock_subtree(self, tx: Tx, components: list[str]) -> int | None:
        """Mark a non-empty directory as the root of a running subtree operation."""
        path = join(components)
        resolved = self._resolve_for_update(tx, components, path, exclusive=1)
        target = resolved.last
        if target is None or not target.is_dir or not tx.query_one(
                f"SELECT 1 FROM {INODES} WHERE parent_id=%s LIMIT 1", (target.id,)):
            return None
        for inode_id, owner in tx.query(f"SELECT id, subtree_lock_owner FROM {INODES} WHERE subtree_locked=1"):
            if self.liveness.is_alive(owner) \
                    and self._is_below(tx, inode_id, target.id):
                raise SubtreeLocked(f"{path}: a directory below it is being deleted or moved; retry later")
        tx.execute(f"UPDATE {INODES} SET subtree_locked=1, subtree_lock_owner=%s WHERE {KEY_WHERE}",
                   (self.liveness.namenode_id, *target.key))
        return target.id

    def _is_below(self, tx: Tx, inode_id: int, ancestor_id: int) -> bool:
        while inode_id and inode_id != ancestor_id:
            row = tx.query_one(f"SELECT parent_id FROM {INODES} WHERE id=%s LIMIT 1", (inode_id,))
            inode_id = row[0] if row else 0
        return inode_id == ancestor_id

    # ----------------------------------------------------------- attributes
    def _update_attributes(self, caller: Caller, path: str, check: Callable[[Inode], None],
                           assignments: Callable[[], dict], tx: Tx | None = None) -> None:
        """Check, then update: ``assignments`` is computed only after ``check`` passed (it may
        register user and group names, which a refused call must not do)."""
        components = split_path(path)

        def work(t: Tx) -> None:
            resolved = self._resolve_for_update(t, components, path, exclusive=1)
            self.permissions.check_traverse(caller, resolved.ancestors, path)
            inode = self._require(resolved, path)
            check(inode)
            values = assignments()
            columns = ", ".join(f"{column}=%s" for column in values)
            t.execute(f"UPDATE {INODES} SET {columns} WHERE {KEY_WHERE}", (*values.values(), *inode.key))
        self._run(tx, work)

    def set_permission(self, caller: Caller, path: str, permission: int, tx: Tx | None = None) -> None:
        if not 0 <= permission <= 0o1777:
            raise InvalidArgument(f"Invalid permission {permission:o}")
        self._update_attributes(caller, path, lambda i: self.permissions.check_owner(caller, i, path),
                                lambda: {"permission": permission}, tx)

    def set_owner(self, caller: Caller, path: str, owner: str | None, group: str | None,
                  tx: Tx | None = None) -> None:
        if not owner and not group:
            raise InvalidArgument("Both owner and group are empty")

        def check(inode: Inode) -> None:
            if caller.superuser:
                return
            if owner and owner != self.users.user_name(inode.user_id):
                raise AccessDenied(f"Permission denied: only the superuser may change the owner of {path}")
            self.permissions.check_owner(caller, inode, path)
            if group and group not in caller.groups:
                raise AccessDenied(f"Permission denied: user={caller.name} is not a member of group {group}")
        def assignments() -> dict:
            ids = {}
            if owner:
                ids["user_id"] = self.users.user_id(owner)
            if group:
                ids["group_id"] = self.users.group_id(group)
            return ids
        self._update_attributes(caller, path, check, assignments, tx)

    def set_times(self, caller: Caller, path: str, mtime: int | None, atime: int | None) -> None:
        assignments = {k: v for k, v in (("modification_time", mtime), ("access_time", atime))
                       if v is not None and v >= 0}
        if assignments:
            self._update_attributes(
                caller, path, lambda i: self.permissions.check(caller, i, WRITE, path), lambda: assignments)

    def set_replication(self, caller: Caller, path: str, replication: int) -> bool:
        """A file's replication factor (False for a directory, as HDFS).  The replication
        monitor then adds or removes replicas."""
        if not 1 <= replication <= MAX_REPLICATION:
            raise InvalidArgument(f"Requested replication factor of {replication} is outside [1, {MAX_REPLICATION}]")
        components = split_path(path)

        def work(t: Tx) -> bool:
            resolved = self._resolve_for_update(t, components, path, exclusive=1)
            self.permissions.check_traverse(caller, resolved.ancestors, path)
            inode = self._require(resolved, path)
            if inode.is_dir:
                return False
            self.permissions.check(caller, inode, WRITE, path)
            t.execute(f"UPDATE {INODES} SET header=%s WHERE {KEY_WHERE}",
                      (header(inode.block_size, replication), *inode.key))
            return True
        return self.db.run(work)

    def report_corrupt(self, block_id: int, location: str) -> None:
        """A read found ``location``'s replica of ``block_id`` corrupt: it is not read again,
        and the replication monitor replaces it."""
        self.db.run(lambda t: t.execute("UPDATE hops.hdfs_replicas SET corrupt=1 WHERE block_id=%s AND location=%s",
                                        (block_id, location)))

    # ------------------------------------------------------------ file data
    def start_file(self, caller: Caller, path: str, overwrite: bool, permission: int | None,
                   replication: int, block_size: int, client: tuple[str, str], content: bytes | None = None) -> Inode:
        """Create ``path`` as a file under construction, leased to ``client``; or, given its
        whole ``content`` (no more than the small-file limit), as a complete small file, in
        one transaction."""
        if content is not None and len(content) > self.small_file_limit:
            raise InvalidArgument(f"{len(content)} bytes do not fit the small-file limit of {self.small_file_limit}")
        components = split_path(path)
        if not components:
            raise FileAlreadyExists("/ is a directory")
        mode = (0o666 & ~self.umask) if permission is None else permission

        shared = self.shared_parent_locks

        def work(t: Tx) -> Inode:
            resolved = self._resolve_for_update(t, components, path, exclusive=1 if shared else 2)
            # Permissions before existence, as HDFS: a caller who may not write here learns
            # nothing about which names exist.
            self.permissions.check_traverse(caller, resolved.ancestors, path)
            nearest = resolved.parent if resolved.exists else resolved.inodes[-1]
            if nearest.is_dir:
                self.permissions.check(caller, nearest, WRITE | EXECUTE, path)
            if resolved.exists:
                existing = resolved.last
                if existing.is_dir:
                    raise FileAlreadyExists(f"{path} already exists as a directory")
                if existing.under_construction:
                    raise AlreadyBeingCreated(f"{path} is already being written by {existing.client_name}")
                if not overwrite:
                    raise FileAlreadyExists(f"{path} for client {client[1]} already exists")
                self._remove(t, [existing])
                resolved = Resolved(components, resolved.inodes[:-1])
            parent = self._make_parents(t, caller, resolved, len(components) - 1, 0o777 & ~self.umask, path,
                                        shared)
            self.permissions.check(caller, parent, WRITE | EXECUTE, path)
            when = now_ms()
            self._touch(t, parent, when, after_commit=shared)
            if content is not None:
                inode = self._new_inode(caller, parent, components[-1], False, mode, when,
                                        header(block_size, replication))._replace(size=len(content))
                self._insert(t, inode, path)
                if content:
                    t.execute("INSERT INTO hops.hdfs_small_files (inode_id, data) VALUES (%s, %s)", (inode.id, content))
                return inode
            inode = self._new_inode(caller, parent, components[-1], False, mode, when,
                                    header(block_size, replication), client)
            self._insert(t, inode, path)
            t.execute("INSERT INTO hops.hdfs_leases (inode_id, holder, namenode_id, kind) VALUES (%s,%s,%s,'create')",
                      (inode.id, client[0], self.liveness.namenode_id))
            return inode
        return self.db.run(work)

    def start_append(self, caller: Caller, path: str, client: tuple[str, str]) -> tuple[Inode, list[Block]]:
        """Lease an existing file to ``client`` for appending; returns it and its blocks."""
        components = split_path(path)

        def work(t: Tx) -> tuple[Inode, list[Block]]:
            resolved = self._resolve_for_update(t, components, path, exclusive=1)
            self.permissions.check_traverse(caller, resolved.ancestors, path)
            inode = self._require(resolved, path)
            if inode.is_dir:
                raise FileNotFound(f"Failed to append to non-existent file {path}: it is a directory")
            if inode.under_construction:
                raise AlreadyBeingCreated(f"{path} is already being written by {inode.client_name}")
            self.permissions.check(caller, inode, WRITE, path)
            t.execute(f"UPDATE {INODES} SET under_construction=1, client_name=%s, client_machine=%s,"
                      f" client_node=%s WHERE {KEY_WHERE}",
                      (client[0], client[1], str(self.liveness.namenode_id), *inode.key))
            t.execute("INSERT INTO hops.hdfs_leases (inode_id, holder, namenode_id, kind) VALUES (%s,%s,%s,'append')",
                      (inode.id, client[0], self.liveness.namenode_id))
            return inode, self._blocks_of(t, inode.id)
        return self.db.run(work)

    def writer(self, inode: Inode, blocks: list[Block] | None = None,
               record_events: bool = False) -> BlockWriter | SmallFileWriter:
        """What receives a new file's bytes (``blocks`` empty), or an appended file's: a file
        on blocks stays on blocks; any other stays in memory while it fits the small-file
        limit, and moves to blocks past it.  ``record_events``: the block writer keeps what
        it does for a write pipeline (BlockWriter.take_events)."""
        def block_writer(tail: Block | None) -> BlockWriter:
            return self.blocks.writer(self.block_ids, inode.block_size, tail,
                                      lambda b: self.blocks.read_block(b, 0, b.num_bytes), record_events)
        if (blocks and not blocks[0].inline) or (not blocks and not self.small_file_limit):
            # A partial last block held here is copied into a new one; one held elsewhere is
            # left as it is and the new bytes start a block of their own.
            return block_writer(blocks[-1] if blocks and self.blocks.holds(blocks[-1]) else None)
        initial = blocks[0].data if blocks else b""
        return SmallFileWriter(self.small_file_limit, initial, lambda: block_writer(None))

    def complete_file(self, inode_id: int, holder: str, written: list[Block], replaced_tail: bool) -> None:
        """Close a file: record its new blocks (or a small file's content) and make it
        readable, atomically.  A small file's writer rewrote its whole content: the old
        content row goes, whether the file stayed small or moved to blocks."""

        def work(t: Tx) -> None:
            row = t.query_one(f"{SELECT} WHERE id=%s FOR UPDATE", (inode_id,))
            lease = t.query_one("SELECT holder FROM hops.hdfs_leases WHERE inode_id=%s FOR UPDATE", (inode_id,))
            if row is None or lease is None or lease[0] != holder:
                raise FileNotFound("the file was deleted or recovered while it was being written")
            inode = Inode(*row)
            old = self._blocks_of(t, inode_id)
            if old and old[0].inline:
                t.execute("DELETE FROM hops.hdfs_small_files WHERE inode_id=%s", (inode_id,))
                old = []
            if replaced_tail and old:
                tail = old.pop()
                t.execute("DELETE FROM hops.hdfs_block_infos WHERE block_id=%s", (tail.block_id,))
                invalidate_replicas(t, tail.block_id)
                t.after_commit(lambda: self.purge_blocks([tail.block_id]))
            if written and written[0].inline:
                t.execute("INSERT INTO hops.hdfs_small_files (inode_id, data) VALUES (%s, %s)",
                          (inode_id, written[0].data))
            else:
                t.executemany("INSERT INTO hops.hdfs_block_infos (inode_id, block_index, block_id, num_bytes,"
                              " generation_stamp, location) VALUES (%s,%s,%s,%s,%s,%s)",
                              [(inode_id, len(old) + i, b.block_id, b.num_bytes, b.generation_stamp, b.location)
                               for i, b in enumerate(written)])
                t.executemany("INSERT INTO hops.hdfs_replicas (block_id, location) VALUES (%s,%s)",
                              [(b.block_id, holder) for b in written for holder in b.replicas])
            size = sum(b.num_bytes for b in old) + sum(b.num_bytes for b in written)
            t.execute(f"UPDATE {INODES} SET size=%s, under_construction=0, client_name=NULL, client_machine=NULL,"
                      f" client_node=NULL, modification_time=%s WHERE {KEY_WHERE}", (size, now_ms(), *inode.key))
            t.execute("DELETE FROM hops.hdfs_leases WHERE inode_id=%s", (inode_id,))
        self.db.run(work)

    def abandon_file(self, inode_id: int, holder: str) -> None:
        """A write failed: remove a half-created file, or end an append with nothing added."""
        self.db.run(lambda t: release_lease(t, self, inode_id, holder))


def invalidate_replicas(tx: Tx, block_id: int) -> None:
    """Forget every replica of ``block_id``; each holder removes its file (purge_invalidated)."""
    tx.execute("INSERT IGNORE INTO hops.hdfs_invalidated_blocks (block_id, location)"
               " SELECT block_id, location FROM hops.hdfs_replicas WHERE block_id=%s", (block_id,))
    tx.execute("DELETE FROM hops.hdfs_replicas WHERE block_id=%s", (block_id,))


def release_lease(tx: Tx, namespace: "Namespace", inode_id: int, holder: str | None) -> None:
    """Undo an unfinished write (by ``holder``, or by anyone when None): a created file
    disappears, an appended one keeps exactly its committed blocks."""
    lease = tx.query_one("SELECT holder, kind FROM hops.hdfs_leases WHERE inode_id=%s FOR UPDATE", (inode_id,))
    if lease is None or (holder is not None and lease[0] != holder):
        return
    row = tx.query_one(f"{SELECT} WHERE id=%s FOR UPDATE", (inode_id,))
    tx.execute("DELETE FROM hops.hdfs_leases WHERE inode_id=%s", (inode_id,))
    if row is None:
        return
    inode = Inode(*row)
    if lease[1] == "create":
        namespace._remove(tx, [inode])
    else:
        tx.execute(f"UPDATE {INODES} SET under_construction=0, client_name=NULL, client_machine=NULL,"
                   f" client_node=NULL WHERE {KEY_WHERE}", inode.key)
