"""The inode row, its key rule and the SQL that reads it."""

from __future__ import annotations

import zlib
from typing import NamedTuple

ROOT_ID = 1
ROOT_KEY = (0, 0, "")
INODES = "hops.hdfs_inodes"
BLOCK_SIZE_BITS = 48


def partition_id(parent_id: int, name: str) -> int:
    """HopsFS's shard rule: an inode lives with its siblings (partition = parent id), except
    the children of the root, which are spread by a hash of their name so that the root's
    shard is not a hot spot.  The rule needs only (parent_id, name), so moving a directory
    never changes the keys of what it contains."""
    if parent_id == ROOT_ID:
        return zlib.crc32(name.encode("utf-8")) & 0x7FFFFFFF
    return parent_id


class Inode(NamedTuple):
    """One row of the inode table (a tuple: built from a database row five times faster than
    a frozen dataclass, which matters to every path resolution and listing)."""

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
        return self._replace(partition_id=partition_id(parent_id, name), parent_id=parent_id, name=name)

    def values(self) -> tuple:
        return tuple(self)


COLUMNS = Inode._fields
SELECT = f"SELECT {', '.join(COLUMNS)} FROM {INODES}"


def header(block_size: int, replication: int) -> int:
    """HDFS packs a file's preferred block size and replication into one number."""
    return (replication << BLOCK_SIZE_BITS) | block_size


INSERT = f"INSERT INTO {INODES} ({', '.join(COLUMNS)}) VALUES ({', '.join(['%s'] * len(COLUMNS))})"
KEY_WHERE = "partition_id=%s AND parent_id=%s AND name=%s"


def keys_in(count: int) -> str:
    """A condition matching ``count`` primary keys, for statements on BY_KEYS: one range scan
    of the primary key, about half the cost of OR-ed key equalities."""
    return "(partition_id, parent_id, name) IN (" + ", ".join(["(%s, %s, %s)"] * count) + ")"


# The inode table read by primary key, forced.  With a few keys and a small table MariaDB
# prefers scanning every row, and a locking read or a delete then locks every inode: one
# client's lock on any directory stalled an unrelated create elsewhere.
BY_KEYS = f"{INODES} FORCE INDEX (PRIMARY)"
SELECT_BY_KEYS = f"SELECT {', '.join(COLUMNS)} FROM {BY_KEYS}"


def from_row(row: tuple | None) -> Inode | None:
    return Inode._make(row) if row else None


# A directory and its ancestors, read by the statement that finds the directory's key (the
# metastore's table read: authorization then needs no statement of its own).  Each level is
# one lookup on the id index and costs the statement about 0.02 ms, so the chain covers a
# warehouse table (/user/hive/warehouse/<db>.db/<table>); deeper paths are left to the
# resolver.  Only what permission checks read is selected.
CHAIN_DEPTH = 6
_CHAIN_COLUMNS = ("parent_id", "name", "id", "user_id", "group_id", "permission", "is_dir")


def chain_sql(key: tuple[str, str, str]) -> tuple[str, str]:
    """(select list, joins) that add the inode whose primary key is in the columns ``key``
    and up to CHAIN_DEPTH - 1 of its ancestors to a statement."""
    columns = ", ".join(f"c{level}.{column}" for level in range(CHAIN_DEPTH) for column in _CHAIN_COLUMNS)
    joins = (f" LEFT JOIN {INODES} c0 ON c0.partition_id={key[0]} AND c0.parent_id={key[1]} AND c0.name={key[2]}"
             + "".join(f" LEFT JOIN {INODES} c{level} ON c{level}.id=c{level - 1}.parent_id"
                       for level in range(1, CHAIN_DEPTH)))
    return columns, joins


def chain_from_row(values: tuple) -> list[Inode] | None:
    """The inodes of chain_sql's columns (with what permission checks need), root first;
    None when the directory is missing or the chain does not reach the root."""
    width = len(_CHAIN_COLUMNS)
    chain = []
    for level in range(CHAIN_DEPTH):
        parent, name, ident, user, group, permission, is_dir = values[level * width:(level + 1) * width]
        if ident is None:       # no inode at this level
            break
        chain.append(Inode(partition_id(parent, name), parent, name, ident, user, group, 0, 0, permission, None,
                           None, None, None, None, None, None, 0, 0, None, is_dir, 0, None))
    if not chain or chain[-1].key != ROOT_KEY:
        return None
    chain.reverse()
    return chain
