"""What must hold in `hops` after any sequence of operations, crashes included, read
straight from the database."""

from __future__ import annotations

from hopshive.core.db import Database
from tests.support.polling import wait_until

ORPHANS = ("SELECT c.id, c.parent_id, c.name FROM hops.hdfs_inodes c LEFT JOIN hops.hdfs_inodes p"
           " ON p.id = c.parent_id WHERE c.parent_id <> 0 AND p.id IS NULL")
LEFTOVERS = {
    "leases": "SELECT COUNT(*) FROM hops.hdfs_leases",
    "under_construction": "SELECT COUNT(*) FROM hops.hdfs_inodes WHERE under_construction=1",
    "subtree_locks": "SELECT COUNT(*) FROM hops.hdfs_inodes WHERE subtree_locked=1",
    "blocks_without_inode": "SELECT COUNT(*) FROM hops.hdfs_block_infos b LEFT JOIN hops.hdfs_inodes i"
                            " ON i.id = b.inode_id WHERE i.id IS NULL",
}


def orphans(db: Database) -> list[tuple]:
    """Inodes whose parent does not exist (must always be empty)."""
    return db.run(lambda tx: tx.query(ORPHANS))


def leftovers(db: Database) -> dict[str, int]:
    """Traces of unfinished work: leases, files under construction, subtree locks, and
    block rows of vanished files.  All zero once every operation has ended or been recovered."""
    return db.run(lambda tx: {name: tx.query_one(sql)[0] for name, sql in LEFTOVERS.items()})


def wait_clean(db: Database, deadline: float = 30.0) -> None:
    """Poll until every leftover is gone (recovery runs in the background)."""
    last: dict[str, int] = {}

    def probe() -> bool:
        last.update(leftovers(db))
        return not any(last.values())
    wait_until(probe, deadline, lambda _: f"leftovers remain: {last}")


def inode_id(db: Database, path: str) -> int | None:
    """The id of the inode at ``path``, resolved by name from the root."""
    def work(tx) -> int | None:
        current = 1
        for name in [c for c in path.split("/") if c]:
            row = tx.query_one("SELECT id FROM hops.hdfs_inodes WHERE parent_id=%s AND name=%s", (current, name))
            if row is None:
                return None
            current = row[0]
        return current
    return db.run(work)


def tree(db: Database, path: str) -> dict[str, tuple]:
    """Every inode below ``path`` as {relative path: (is_dir, size, permission, owner, group)}."""
    top = inode_id(db, path)
    rows = db.run(lambda tx: tx.query(
        "WITH RECURSIVE t (id, rel, is_dir, size, permission, user_id, group_id) AS ("
        " SELECT id, CAST(name AS CHAR(4000)), is_dir, size, permission, user_id, group_id"
        "  FROM hops.hdfs_inodes WHERE parent_id=%s"
        " UNION ALL SELECT c.id, CONCAT(t.rel, '/', c.name), c.is_dir, c.size, c.permission, c.user_id, c.group_id"
        "  FROM hops.hdfs_inodes c JOIN t ON c.parent_id = t.id)"
        " SELECT t.rel, t.is_dir, t.size, t.permission, u.name, g.name FROM t"
        " LEFT JOIN hops.hdfs_users u ON u.id = t.user_id LEFT JOIN hops.hdfs_groups g ON g.id = t.group_id",
        (top,)))
    return {rel: (bool(is_dir), size, permission, owner, group) for rel, is_dir, size, permission, owner, group in rows}
