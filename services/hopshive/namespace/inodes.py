"""The inode row, its key rule and the SQL that reads it."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, replace

ROOT_ID = 1
ROOT_KEY = (0, 0, "")
INODES = "hops.hdfs_inodes"
COLUMNS = ("partition_id", "parent_id", "name", "id", "user_id", "group_id", "modification_time",
           "access_time", "permission", "client_name", "client_machine", "client_node",
           "generation_stamp", "header", "symlink", "subtree_lock_owner", "size", "quota_enabled",
           "meta_enabled", "is_dir", "under_construction", "subtree_locked")
SELECT = f"SELECT {', '.join(COLUMNS)} FROM {INODES}"
BLOCK_SIZE_BITS = 48


def partition_id(parent_id: int, name: str) -> int:
    """HopsFS's shard rule: an inode lives with its siblings (partition = parent id), except
    the children of the root, which are spread by a hash of their name so that the root's
    shard is not a hot spot.  The rule needs only (parent_id, name), so moving a directory
    never changes the keys of what it contains."""
    if parent_id == ROOT_ID:
        return zlib.crc32(name.encode("utf-8")) & 0x7FFFFFFF
    return parent_id


@dataclass(frozen=True)
class Inode:
    partition_id: int
    parent_id: int
    name: str
    id: int
    user_id: int | None
    group_id: int | None
    modification_time: int
    access_time: int
    permission: int
    client_name: str | None
    client_machine: str | None
    client_node: str | None
    generation_stamp: int | None
    header: int | None
    symlink: str | None
    subtree_lock_owner: int | None
    size: int
    quota_enabled: int
    meta_enabled: int | None
    is_dir: int
    under_construction: int
    subtree_locked: int | None

    @property
    def key(self) -> tuple[int, int, str]:
        return (self.partition_id, self.parent_id, self.name)

    @property
    def block_size(self) -> int:
        return (self.header or 0) & ((1 << BLOCK_SIZE_BITS) - 1)

    @property
    def replication(self) -> int:
        return (self.header or 0) >> BLOCK_SIZE_BITS

    def moved(self, parent_id: int, name: str) -> "Inode":
        return replace(self, partition_id=partition_id(parent_id, name), parent_id=parent_id, name=name)

    def values(self) -> tuple:
        return tuple(getattr(self, column) for column in COLUMNS)


def header(block_size: int, replication: int) -> int:
    """HDFS packs a file's preferred block size and replication into one number."""
    return (replication << BLOCK_SIZE_BITS) | block_size


INSERT = f"INSERT INTO {INODES} ({', '.join(COLUMNS)}) VALUES ({', '.join(['%s'] * len(COLUMNS))})"
KEY_WHERE = "partition_id=%s AND parent_id=%s AND name=%s"


def keys_in(count: int) -> str:
    """A condition matching ``count`` primary keys.  MariaDB plans the row-constructor IN as
    one range scan of the primary key: about half the cost of OR-ed key equalities."""
    return "(partition_id, parent_id, name) IN (" + ", ".join(["(%s, %s, %s)"] * count) + ")"


def from_row(row: tuple | None) -> Inode | None:
    return Inode(*row) if row else None
