"""The namespace as the database holds it: a walk of `hops.hdfs_inodes` by parent_id/name,
independent of the namenode's own code (raw SQL through PyMySQL)."""

from __future__ import annotations

from dataclasses import dataclass

import pymysql

ROOT_ID = 1
INODES = "hops.hdfs_inodes"


@dataclass(frozen=True)
class Row:
    id: int
    is_dir: bool
    size: int
    under_construction: bool


def connect(db: dict) -> pymysql.connections.Connection:
    """A connection that, on a Galera node, reads after the cluster's earlier writes (the
    services write through other nodes)."""
    connection = pymysql.connect(charset="utf8mb4", connect_timeout=5, autocommit=True, **db)
    with connection.cursor() as cursor:
        cursor.execute("SELECT @@GLOBAL.wsrep_on")
        if cursor.fetchone()[0]:
            cursor.execute("SET SESSION wsrep_sync_wait = 1")
    return connection


def resolve(connection, path: str) -> int | None:
    """The inode id at ``path``, following parent_id/name from the root."""
    inode = ROOT_ID
    with connection.cursor() as cursor:
        for name in [c for c in path.split("/") if c]:
            cursor.execute(f"SELECT id FROM {INODES} WHERE parent_id=%s AND name=%s", (inode, name))
            row = cursor.fetchone()
            if row is None:
                return None
            inode = row[0]
    return inode


def walk(connection, path: str) -> dict[str, Row]:
    """relative path -> Row for every inode below ``path`` (one query per directory)."""
    top = resolve(connection, path)
    if top is None:
        raise FileNotFoundError(f"{path} has no inode in {INODES}")
    found: dict[str, Row] = {}
    pending = [("", top)]
    with connection.cursor() as cursor:
        while pending:
            relative, parent = pending.pop()
            cursor.execute(f"SELECT name, id, is_dir, size, under_construction FROM {INODES}"
                           " WHERE parent_id=%s", (parent,))
            for name, inode, is_dir, size, under_construction in cursor.fetchall():
                child = f"{relative}/{name}"
                found[child] = Row(inode, bool(is_dir), size, bool(under_construction))
                if is_dir:
                    pending.append((child, inode))
    return found


def stored_bytes(connection, inode_ids: list[int]) -> dict[int, int]:
    """inode id -> bytes stored for it: its blocks' num_bytes in hops.hdfs_block_infos plus
    a small file's content in hops.hdfs_small_files (a file has one or the other)."""
    if not inode_ids:
        return {}
    marks = ",".join(["%s"] * len(inode_ids))
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT inode_id, SUM(n) FROM (SELECT inode_id, num_bytes AS n FROM hops.hdfs_block_infos"
                       f" WHERE inode_id IN ({marks}) UNION ALL SELECT inode_id, LENGTH(data) FROM"
                       f" hops.hdfs_small_files WHERE inode_id IN ({marks})) stored GROUP BY inode_id",
                       inode_ids + inode_ids)
        return {inode: int(total) for inode, total in cursor.fetchall()}
