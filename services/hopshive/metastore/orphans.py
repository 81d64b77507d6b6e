"""What an orphan is: the one definition that `hopshive-metatool fsck` and the cleaner share.

The schema cascades every 1-to-n relation from the directory inodes down; what it cannot
reach (thesis 3.1.3) is listed here as *kinds*.  Each kind has

* a **candidate** predicate (``orphan_predicate``): the row is older than the grace period
  and nothing live uses it.  A CD, serde or skewed-value list used only by orphaned SDs is a
  candidate too, so one scan shows everything one repair removes;
* a **strict re-check** used at delete time (``repair_chunk``): any reference at all keeps
  the row, so a CD still used by an SD that was not deleted (skipped, or young) stays, and
  the RESTRICT foreign keys would refuse it anyway.

``candidates`` lists the orphans of a kind, either everywhere (fsck, sweeps; paged by id so a
large catalog is read in bounded pieces) or among given ids (the cleaner's targeted checks).
``repair_chunk`` deletes: it row-locks the candidates first (``FOR UPDATE SKIP LOCKED``: a
row that a concurrent CREATE is attaching is share-locked by that INSERT's foreign-key check
and is skipped) and deletes by primary key with the re-check, so it is idempotent and safe
to run concurrently with itself, the metastore and fsck.
"""

from __future__ import annotations

import logging
from typing import Iterable, Iterator, Sequence

from ..core.db import DriverError, Tx, error_code

log = logging.getLogger(__name__)
MS = "metastore"
LOCK_WAIT_TIMEOUT = 1205
DEFAULT_LOCK_WAIT_SECONDS = 1  # per orphan: waiting longer only delays the rest of the batch

ORPHAN_SD = "orphan_sd"
ORPHAN_CD = "orphan_cd"
ORPHAN_SERDE = "orphan_serde"
ORPHAN_SKEWED_LIST = "orphan_skewed_list"
REPAIR_ORDER = (ORPHAN_SD, ORPHAN_CD, ORPHAN_SERDE, ORPHAN_SKEWED_LIST)  # SDs free the rest

# Table and id column of each kind.
TABLES = {
    ORPHAN_SD: ("SDS", "SD_ID"),
    ORPHAN_CD: ("CDS", "CD_ID"),
    ORPHAN_SERDE: ("SERDES", "SERDE_ID"),
    ORPHAN_SKEWED_LIST: ("SKEWED_STRING_LIST", "STRING_LIST_ID"),
}

# `{s}` is the SDS alias being tested; %(grace)s is the grace period in microseconds.
CUTOFF = "NOW(3) - INTERVAL %(grace)s MICROSECOND"
_OWNED = ("(EXISTS (SELECT 1 FROM {ms}.DBS o WHERE o.SD_ID = {s}.SD_ID)"
          " OR EXISTS (SELECT 1 FROM {ms}.TBLS o WHERE o.SD_ID = {s}.SD_ID)"
          " OR EXISTS (SELECT 1 FROM {ms}.PARTITIONS o WHERE o.SD_ID = {s}.SD_ID)"
          " OR EXISTS (SELECT 1 FROM {ms}.IDXS o WHERE o.SD_ID = {s}.SD_ID))")


def owned(alias: str) -> str:
    """SQL: the SD ``alias`` belongs to a database, table, partition or index."""
    return _OWNED.format(ms=MS, s=alias)


def _live(alias: str) -> str:
    """An SD that is not (yet) an orphan: owned, or too young to judge."""
    return f"({alias}.CREATED_AT > {CUTOFF} OR {owned(alias)})"


def _cd_unconstrained(alias: str) -> str:
    return (f"NOT EXISTS (SELECT 1 FROM {MS}.KEY_CONSTRAINTS k WHERE k.PARENT_CD_ID = {alias}.CD_ID)"
            f" AND NOT EXISTS (SELECT 1 FROM {MS}.KEY_CONSTRAINTS k WHERE k.CHILD_CD_ID = {alias}.CD_ID)")


def orphan_predicate(kind: str, alias: str) -> str:
    """SQL: the row ``alias`` of ``kind``'s table is an orphan (uses %(grace)s)."""
    old = f"{alias}.CREATED_AT <= {CUTOFF}"
    if kind == ORPHAN_SD:
        return f"{old} AND NOT {owned(alias)}"
    if kind == ORPHAN_CD:
        return (f"{old} AND NOT EXISTS (SELECT 1 FROM {MS}.SDS s WHERE s.CD_ID = {alias}.CD_ID AND {_live('s')})"
                f" AND {_cd_unconstrained(alias)}")
    if kind == ORPHAN_SERDE:
        return f"{old} AND NOT EXISTS (SELECT 1 FROM {MS}.SDS s WHERE s.SERDE_ID = {alias}.SERDE_ID AND {_live('s')})"
    if kind == ORPHAN_SKEWED_LIST:
        return (f"{old} AND NOT EXISTS (SELECT 1 FROM {MS}.SKEWED_VALUES v JOIN {MS}.SDS s ON s.SD_ID = v.SD_ID_OID"
                f"  WHERE v.STRING_LIST_ID_EID = {alias}.STRING_LIST_ID AND {_live('s')})"
                f" AND NOT EXISTS (SELECT 1 FROM {MS}.SKEWED_COL_VALUE_LOC_MAP m JOIN {MS}.SDS s ON s.SD_ID = m.SD_ID"
                f"  WHERE m.STRING_LIST_ID_KID = {alias}.STRING_LIST_ID AND {_live('s')})")
    raise ValueError(f"unknown orphan kind {kind!r}")


def orphan_index_table_predicate(alias: str) -> str:
    """SQL: the TBLS row ``alias`` is an index table whose index is gone (it went with its
    base table); the cleaner deletes its directory, and the metadata cascades."""
    return (f"{alias}.TBL_TYPE = 'INDEX_TABLE'"
            f" AND NOT EXISTS (SELECT 1 FROM {MS}.IDXS i WHERE i.INDEX_TBL_ID = {alias}.TBL_ID)")


def orphan_index_tables(tx: Tx, ids: Iterable[int] | None = None) -> list[tuple[int, int, str]]:
    """(TBL_ID, directory inode's parent id, directory name) of orphaned index tables,
    among ``ids`` when given; tables without a directory are left to fsck's report."""
    where = orphan_index_table_predicate("t")
    params: list = []
    if ids is not None:
        wanted = sorted(set(ids))
        if not wanted:
            return []
        where += f" AND t.TBL_ID IN ({', '.join(['%s'] * len(wanted))})"
        params = wanted
    return [tuple(row) for row in tx.query(
        f"SELECT t.TBL_ID, s.PARENT_ID, s.NAME FROM {MS}.TBLS t JOIN {MS}.SDS s ON s.SD_ID = t.SD_ID"
        f" WHERE {where} AND s.PARENT_ID IS NOT NULL ORDER BY t.TBL_ID", params)]


def grace_param(grace_seconds: float) -> dict:
    return {"grace": int(grace_seconds * 1_000_000)}


def candidates(tx: Tx, kind: str, grace_seconds: float, ids: Iterable[int] | None = None,
               after: int = 0, limit: int | None = None) -> list[int]:
    """Ids of the orphans of ``kind``, in id order: among ``ids`` when given, else all of
    them with an id above ``after`` (at most ``limit``: a sweep pages through with it)."""
    table, column = TABLES[kind]
    params = grace_param(grace_seconds)
    where = orphan_predicate(kind, "x")
    if ids is not None:
        wanted = sorted(set(ids))
        if not wanted:
            return []
        params.update({f"i{n}": value for n, value in enumerate(wanted)})
        where += f" AND x.{column} IN ({', '.join(f'%(i{n})s' for n in range(len(wanted)))})"
    else:
        params["after"] = after
        where += f" AND x.{column} > %(after)s"
    sql = f"SELECT x.{column} FROM {MS}.{table} x WHERE {where} ORDER BY x.{column}"
    if ids is not None:
        # A few rows: by primary key, each re-check a lookup.  MariaDB would otherwise turn
        # the NOT EXISTS into a NOT IN materialized from every live SD (exists_to_in), which
        # costs the size of the catalog (seconds at 100k partitions) whatever the few ids.
        sql = ("SET STATEMENT optimizer_switch='exists_to_in=off' FOR "
               + sql.replace(f"{MS}.{table} x WHERE", f"{MS}.{table} x FORCE INDEX (PRIMARY) WHERE"))
    if limit:
        sql += f" LIMIT {int(limit)}"
    return [row[0] for row in tx.query(sql, params)]


def sds_below(tx: Tx, inode_ids: Iterable[int], limit: int = 1_000_000) -> list[int]:
    """SDs whose directory is one of ``inode_ids`` or below one of them (a directory moved
    away takes the tables and partitions stored under it out of the catalog).  Children are
    found by parent id too, so a directory whose row alone was deleted still leads to them."""
    roots = sorted(set(inode_ids))
    if not roots:
        return []
    marks = ", ".join(["%s"] * len(roots))
    rows = tx.query(
        f"WITH RECURSIVE t (id) AS (SELECT id FROM hops.hdfs_inodes"
        f"  WHERE (id IN ({marks}) OR parent_id IN ({marks})) AND is_dir = 1"
        f" UNION SELECT c.id FROM hops.hdfs_inodes c JOIN t ON c.parent_id = t.id WHERE c.is_dir = 1)"
        f" SELECT STRAIGHT_JOIN s.SD_ID FROM t JOIN hops.hdfs_inodes i ON i.id = t.id JOIN {MS}.SDS s"
        f"  ON s.PARTITION_ID = i.partition_id AND s.PARENT_ID = i.parent_id AND s.NAME = i.name"
        f" LIMIT {int(limit)}", roots * 2)
    return [row[0] for row in rows]


def inodes_of_sds(tx: Tx, sd_ids: Iterable[int]) -> list[int]:
    """The directory inodes the given SDs point at."""
    wanted = sorted(set(sd_ids))
    if not wanted:
        return []
    marks = ", ".join(["%s"] * len(wanted))
    return [row[0] for row in tx.query(
        f"SELECT i.id FROM {MS}.SDS s JOIN hops.hdfs_inodes i ON i.partition_id = s.PARTITION_ID"
        f" AND i.parent_id = s.PARENT_ID AND i.name = s.NAME WHERE s.SD_ID IN ({marks})", wanted)]


def parts_of_sds(tx: Tx, sd_ids: Sequence[int]) -> dict[str, set[int]]:
    """The CDs, serdes and skewed-value lists the given SDs use: what deleting them may free."""
    found: dict[str, set[int]] = {ORPHAN_CD: set(), ORPHAN_SERDE: set(), ORPHAN_SKEWED_LIST: set()}
    if not sd_ids:
        return found
    marks = ", ".join(["%s"] * len(sd_ids))
    for cd_id, serde_id in tx.query(f"SELECT CD_ID, SERDE_ID FROM {MS}.SDS WHERE SD_ID IN ({marks})", list(sd_ids)):
        if cd_id is not None:
            found[ORPHAN_CD].add(cd_id)
        if serde_id is not None:
            found[ORPHAN_SERDE].add(serde_id)
    for (list_id,) in tx.query(
            f"SELECT STRING_LIST_ID_EID FROM {MS}.SKEWED_VALUES WHERE SD_ID_OID IN ({marks})"
            f" UNION SELECT STRING_LIST_ID_KID FROM {MS}.SKEWED_COL_VALUE_LOC_MAP WHERE SD_ID IN ({marks})",
            list(sd_ids) * 2):
        found[ORPHAN_SKEWED_LIST].add(list_id)
    return found


# Per kind: the strict re-check that must still hold at delete time (`{t}` is the table).
_STILL_ORPHAN = {
    ORPHAN_SD: f"NOT {owned('SDS')}",
    ORPHAN_CD: (f"NOT EXISTS (SELECT 1 FROM {MS}.SDS s WHERE s.CD_ID = CDS.CD_ID)"
                f" AND {_cd_unconstrained('CDS')}"),
    ORPHAN_SERDE: f"NOT EXISTS (SELECT 1 FROM {MS}.SDS s WHERE s.SERDE_ID = SERDES.SERDE_ID)",
    ORPHAN_SKEWED_LIST: (f"NOT EXISTS (SELECT 1 FROM {MS}.SKEWED_VALUES v"
                         f" WHERE v.STRING_LIST_ID_EID = SKEWED_STRING_LIST.STRING_LIST_ID)"
                         f" AND NOT EXISTS (SELECT 1 FROM {MS}.SKEWED_COL_VALUE_LOC_MAP m"
                         f" WHERE m.STRING_LIST_ID_KID = SKEWED_STRING_LIST.STRING_LIST_ID)"),
}


def repair_chunk(tx: Tx, kind: str, ids: Sequence[int], grace_seconds: float,
                 lock_wait_seconds: int = DEFAULT_LOCK_WAIT_SECONDS) -> int:
    """Delete those of ``ids`` that are still orphans; returns how many were deleted
    (``repair_ids`` says which)."""
    return len(repair_ids(tx, kind, ids, grace_seconds, lock_wait_seconds))


def repair_ids(tx: Tx, kind: str, ids: Sequence[int], grace_seconds: float,
               lock_wait_seconds: int = DEFAULT_LOCK_WAIT_SECONDS) -> list[int]:
    """Delete those of ``ids`` that are still orphans; returns the ids deleted.

    The candidates are locked first (by primary key, FORCE INDEX: with a short IN list on a
    small table MariaDB would scan, locking rows it does not match or waiting for rows
    others hold), skipping rows another transaction holds; the DELETE then re-checks with a
    fresh READ COMMITTED view, and nothing can start referencing a locked row before this
    transaction ends.  All locked rows go in one statement (a primary-key range on any table
    of size; one statement per row took seconds for a burst's thousands).  If that statement
    waits ``lock_wait_seconds`` -- a small table scanned past a row someone holds, or the
    re-check of a CD, serde or list waiting for a transaction that deleted an SD using it
    and has not committed -- it is rolled back alone and the rows go one by one, a row
    still busy being left for the next run.
    """
    table, column = TABLES[kind]
    if not ids:
        return []
    marks = ", ".join(["%s"] * len(ids))
    locked = [row[0] for row in tx.query(
        f"SELECT {column} FROM {MS}.{table} FORCE INDEX (PRIMARY) WHERE {column} IN ({marks})"
        f" FOR UPDATE SKIP LOCKED", list(ids))]
    if not locked:
        return []
    recheck = (f" AND CREATED_AT <= NOW(3) - INTERVAL {int(grace_seconds * 1_000_000)} MICROSECOND"
               f" AND {_STILL_ORPHAN[kind]}")

    def delete(rows: Sequence[int]) -> int:
        return tx.execute(f"DELETE FROM {MS}.{table} WHERE {column} IN ({', '.join(['%s'] * len(rows))}){recheck}",
                          list(rows))
    previous = tx.query_one("SELECT @@SESSION.innodb_lock_wait_timeout")[0]
    tx.execute("SET SESSION innodb_lock_wait_timeout = %s", (lock_wait_seconds,))
    try:
        try:
            delete(locked)
            left = {row[0] for row in tx.query(
                f"SELECT {column} FROM {MS}.{table} FORCE INDEX (PRIMARY) WHERE {column} IN"
                f" ({', '.join(['%s'] * len(locked))})", locked)}
            return [row_id for row_id in locked if row_id not in left]
        except DriverError as exc:
            if error_code(exc) != LOCK_WAIT_TIMEOUT:
                raise
        deleted: list[int] = []
        for row_id in locked:
            try:
                if delete([row_id]):
                    deleted.append(row_id)
            except DriverError as exc:
                if error_code(exc) != LOCK_WAIT_TIMEOUT:
                    raise
                log.info("%s %s is busy, left for the next run", kind, row_id)
        return deleted
    finally:
        tx.execute("SET SESSION innodb_lock_wait_timeout = %s", (previous,))


def chunks(items: Sequence, size: int) -> Iterator[Sequence]:
    for start in range(0, len(items), max(1, size)):
        yield items[start:start + size]
