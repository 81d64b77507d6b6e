"""The cleaner's record of what each storage descriptor uses: ``metastore.CLEANER_SD_REFS``.

A directory delete or move cascades the SDs over it away without a binlog row, and with them
the only link to the column descriptor, serde, skewed-value lists and index they used.  The
record keeps those links, with the SD's inode key, from the rows the cleaner reads in the
binlog (``apply``, in binlog order, in the same transaction as the batch's clean-up), so that
the key of a deleted directory inode finds the vanished SDs by index (``vanished_at``) and
what they used (``used_by``).  Candidates only: ``hopshive.metastore.orphans`` still decides
what is an orphan, under lock.

The record is rebuilt from SDS (``rebuild``) when a leader cannot trust it: it has never been
built, or the binlog position was lost; otherwise replaying the binlog from the stored
position keeps it exact (every change is idempotent).  Rows of vanished SDs are dropped once
their clean-up ran (``forget``), or by a sweep when an earlier sweep already saw them
vanished (``sweep``): that earlier sweep's full pass has covered them.
"""

from __future__ import annotations

from typing import Iterable

from ..core.db import Database, Tx
from ..metastore.orphans import ORPHAN_CD, ORPHAN_SERDE, ORPHAN_SKEWED_LIST, chunks
from .events import RefChange

MS = "metastore"
REFS = f"{MS}.CLEANER_SD_REFS"
CD, SERDE, LIST, CHILD_SD, INDEX_TABLE = "cd", "serde", "list", "child_sd", "index_table"
KIND_OF = {CD: ORPHAN_CD, SERDE: ORPHAN_SERDE, LIST: ORPHAN_SKEWED_LIST}  # record kind -> orphan kind
_COLUMNS = "SD_ID, KIND, REF_ID, PARTITION_ID, PARENT_ID, NAME"
_INSERT = (f"INSERT INTO {REFS} ({_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s) ON DUPLICATE KEY UPDATE"
           f" PARTITION_ID = VALUES(PARTITION_ID), PARENT_ID = VALUES(PARENT_ID), NAME = VALUES(NAME),"
           f" GONE_SEEN_AT = NULL")
_NO_KEY = (None, None, None)
# For statements about a few SDs: keep MariaDB from turning NOT EXISTS (SDS) into a NOT IN
# materialized from every SD (see orphans.candidates).
_FEW = "SET STATEMENT optimizer_switch='exists_to_in=off' FOR "
_PAGE = 2000


def _sd_rows(sd: int, key: tuple | None, cd: int | None, serde: int | None) -> list[tuple]:
    key = key or _NO_KEY
    return [(sd, kind, ref, *key) for kind, ref in ((CD, cd), (SERDE, serde)) if ref is not None]


# A child SD (a table's in its database, a partition's in its table) is recorded only when
# the inode tree cannot find it below its parent's directory: it has no directory (a view, a
# foreign location) or its location is not below the parent's.
_NOT_BELOW = ("(c.PARTITION_ID IS NULL OR p.LOCATION IS NULL"
              " OR LEFT(c.LOCATION, CHAR_LENGTH(p.LOCATION) + 1) <> CONCAT(p.LOCATION, '/'))")
_CHILD_LINKS = {
    "table": (f"SELECT p.SD_ID, '{CHILD_SD}', c.SD_ID, p.PARTITION_ID, p.PARENT_ID, p.NAME FROM {MS}.TBLS o"
              f" JOIN {MS}.DBS d ON d.DB_ID = o.DB_ID JOIN {MS}.SDS p ON p.SD_ID = d.SD_ID"
              f" JOIN {MS}.SDS c ON c.SD_ID = o.SD_ID WHERE o.TBL_ID IN ({{}}) AND {_NOT_BELOW}",
              f"SELECT TBL_ID FROM {MS}.TBLS WHERE TBL_ID IN ({{}})"),
    "partition": (f"SELECT p.SD_ID, '{CHILD_SD}', c.SD_ID, p.PARTITION_ID, p.PARENT_ID, p.NAME FROM {MS}.PARTITIONS o"
                  f" JOIN {MS}.TBLS t ON t.TBL_ID = o.TBL_ID JOIN {MS}.SDS p ON p.SD_ID = t.SD_ID"
                  f" JOIN {MS}.SDS c ON c.SD_ID = o.SD_ID WHERE o.PART_ID IN ({{}}) AND {_NOT_BELOW}",
                  f"SELECT PART_ID FROM {MS}.PARTITIONS WHERE PART_ID IN ({{}})"),
}


def _link_children(tx: Tx, what: str, owners: dict[int, int]) -> set[int]:
    """Record the tables' or partitions' SDs (owner id -> SD id) that need it; returns the
    SDs of owners already gone (their parent cascaded away within the batch: orphans now)."""
    links, present = _CHILD_LINKS[what]
    live: set[int] = set()
    for chunk in chunks(sorted(owners), 1000):
        marks = ", ".join(["%s"] * len(chunk))
        rows = tx.query(links.format(marks), list(chunk))
        if rows:
            tx.executemany(_INSERT, rows)
        live.update(row[0] for row in tx.query(present.format(marks), list(chunk)))
    return {sd for owner, sd in owners.items() if owner not in live}


def apply(tx: Tx, changes: Iterable[RefChange]) -> tuple[set[int], set[int]]:
    """Record ``changes`` in order.  Returns (SDs, index tables) whose owner was gone before
    it could be recorded: orphan candidates already."""
    pending: list[tuple] = []
    owners: dict[str, dict[int, int]] = {"table": {}, "partition": {}}
    orphan_sds: set[int] = set()
    orphan_tables: set[int] = set()

    def flush() -> None:
        if pending:
            tx.executemany(_INSERT, pending)
            pending.clear()
        for what, batch in owners.items():
            if batch:
                orphan_sds.update(_link_children(tx, what, batch))
                batch.clear()
    for change in changes:            # SDs, tables and partitions come in bulk (add_partitions)
        if change.what == "sd":
            pending += _sd_rows(change.sd, change.key, change.cd, change.serde)
            continue
        if change.what in owners:       # linked from the live rows: order does not matter
            owners[change.what][change.sd] = change.ref
            continue
        flush()
        if change.what == "sd_update":
            tx.execute(f"DELETE FROM {REFS} WHERE SD_ID = %s AND KIND IN (%s, %s)", (change.sd, CD, SERDE))
            tx.execute(f"UPDATE {REFS} SET PARTITION_ID = %s, PARENT_ID = %s, NAME = %s WHERE SD_ID = %s",
                       (*(change.key or _NO_KEY), change.sd))
            tx.executemany(_INSERT, _sd_rows(change.sd, change.key, change.cd, change.serde))
        elif change.what == "list":
            tx.execute(f"INSERT IGNORE INTO {REFS} ({_COLUMNS}) SELECT SD_ID, %s, %s, PARTITION_ID, PARENT_ID, NAME"
                       f" FROM {MS}.SDS WHERE SD_ID = %s", (LIST, change.ref, change.sd))
        elif change.what == "index":
            added = 0
            for kind, ref in ((CHILD_SD, change.ref), (INDEX_TABLE, change.other)):
                if ref is not None:
                    added += tx.execute(
                        f"INSERT IGNORE INTO {REFS} ({_COLUMNS}) SELECT t.SD_ID, %s, %s, s.PARTITION_ID, s.PARENT_ID,"
                        f" s.NAME FROM {MS}.TBLS t JOIN {MS}.SDS s ON s.SD_ID = t.SD_ID WHERE t.TBL_ID = %s",
                        (kind, ref, change.sd))
            if not added and not tx.query_one(f"SELECT 1 FROM {MS}.TBLS WHERE TBL_ID = %s", (change.sd,)):
                orphan_sds.update({change.ref} - {None})
                orphan_tables.update({change.other} - {None})
        else:
            raise ValueError(f"unknown change {change.what!r}")
    flush()
    return orphan_sds, orphan_tables


def vanished_at(tx: Tx, keys: Iterable[tuple]) -> set[int]:
    """Recorded SDs over the inode keys ``keys`` that no longer exist (they cascaded)."""
    found: set[int] = set()
    for chunk in chunks(list(set(keys)), 500):
        marks = ", ".join(["(%s, %s, %s)"] * len(chunk))
        found.update(row[0] for row in tx.query(
            f"{_FEW}SELECT DISTINCT r.SD_ID FROM {REFS} r FORCE INDEX (CLEANER_SD_REFS_INODE)"
            f" WHERE (r.PARTITION_ID, r.PARENT_ID, r.NAME) IN ({marks}) AND NOT EXISTS (SELECT 1 FROM {MS}.SDS s WHERE s.SD_ID = r.SD_ID)",
            [value for key in chunk for value in key]))
    return found


def used_by(tx: Tx, sd_ids: Iterable[int]) -> dict[str, set[int]]:
    """What the given SDs used, by record kind."""
    used: dict[str, set[int]] = {kind: set() for kind in (CD, SERDE, LIST, CHILD_SD, INDEX_TABLE)}
    for chunk in chunks(sorted(set(sd_ids)), 1000):
        marks = ", ".join(["%s"] * len(chunk))
        for kind, ref in tx.query(f"SELECT KIND, REF_ID FROM {REFS} WHERE SD_ID IN ({marks})", list(chunk)):
            used[kind].add(ref)
    return used


def forget(tx: Tx, sd_ids: Iterable[int]) -> int:
    """Drop the rows of those SDs that no longer exist (their clean-up has run)."""
    done = 0
    for chunk in chunks(sorted(set(sd_ids)), 1000):
        marks = ", ".join(["%s"] * len(chunk))
        done += tx.execute(f"{_FEW}DELETE FROM {REFS} WHERE SD_ID IN ({marks})"
                           f" AND NOT EXISTS (SELECT 1 FROM {MS}.SDS s WHERE s.SD_ID = {REFS}.SD_ID)", list(chunk))
    return done


# Per page of SD ids (%(lo)s < id <= %(hi)s): every link the record holds, from the live tables.
_LINKS = (
    f"SELECT SD_ID, '{CD}', CD_ID, PARTITION_ID, PARENT_ID, NAME FROM {MS}.SDS"
    f" WHERE SD_ID > %(lo)s AND SD_ID <= %(hi)s AND CD_ID IS NOT NULL",
    f"SELECT SD_ID, '{SERDE}', SERDE_ID, PARTITION_ID, PARENT_ID, NAME FROM {MS}.SDS"
    f" WHERE SD_ID > %(lo)s AND SD_ID <= %(hi)s AND SERDE_ID IS NOT NULL",
    f"SELECT s.SD_ID, '{LIST}', v.STRING_LIST_ID_EID, s.PARTITION_ID, s.PARENT_ID, s.NAME FROM {MS}.SKEWED_VALUES v"
    f" JOIN {MS}.SDS s ON s.SD_ID = v.SD_ID_OID WHERE v.SD_ID_OID > %(lo)s AND v.SD_ID_OID <= %(hi)s",
    f"SELECT s.SD_ID, '{LIST}', m.STRING_LIST_ID_KID, s.PARTITION_ID, s.PARENT_ID, s.NAME"
    f" FROM {MS}.SKEWED_COL_VALUE_LOC_MAP m JOIN {MS}.SDS s ON s.SD_ID = m.SD_ID"
    f" WHERE m.SD_ID > %(lo)s AND m.SD_ID <= %(hi)s",
    f"SELECT p.SD_ID, '{CHILD_SD}', c.SD_ID, p.PARTITION_ID, p.PARENT_ID, p.NAME FROM {MS}.TBLS o"
    f" JOIN {MS}.DBS d ON d.DB_ID = o.DB_ID JOIN {MS}.SDS p ON p.SD_ID = d.SD_ID JOIN {MS}.SDS c ON c.SD_ID = o.SD_ID"
    f" WHERE p.SD_ID > %(lo)s AND p.SD_ID <= %(hi)s AND {_NOT_BELOW}",
    f"SELECT p.SD_ID, '{CHILD_SD}', c.SD_ID, p.PARTITION_ID, p.PARENT_ID, p.NAME FROM {MS}.PARTITIONS o"
    f" JOIN {MS}.TBLS t ON t.TBL_ID = o.TBL_ID JOIN {MS}.SDS p ON p.SD_ID = t.SD_ID JOIN {MS}.SDS c ON c.SD_ID = o.SD_ID"
    f" WHERE p.SD_ID > %(lo)s AND p.SD_ID <= %(hi)s AND {_NOT_BELOW}",
    f"SELECT t.SD_ID, '{CHILD_SD}', i.SD_ID, s.PARTITION_ID, s.PARENT_ID, s.NAME FROM {MS}.IDXS i"
    f" JOIN {MS}.TBLS t ON t.TBL_ID = i.ORIG_TBL_ID JOIN {MS}.SDS s ON s.SD_ID = t.SD_ID"
    f" WHERE i.SD_ID IS NOT NULL AND t.SD_ID > %(lo)s AND t.SD_ID <= %(hi)s",
    f"SELECT t.SD_ID, '{INDEX_TABLE}', i.INDEX_TBL_ID, s.PARTITION_ID, s.PARENT_ID, s.NAME FROM {MS}.IDXS i"
    f" JOIN {MS}.TBLS t ON t.TBL_ID = i.ORIG_TBL_ID JOIN {MS}.SDS s ON s.SD_ID = t.SD_ID"
    f" WHERE i.INDEX_TBL_ID IS NOT NULL AND t.SD_ID > %(lo)s AND t.SD_ID <= %(hi)s",
)


def rebuild(db: Database, fence, page: int = _PAGE) -> int:
    """Copy every live link into the record, one page of SD ids per transaction (reads,
    then writes: no lock is held on the metastore's rows); returns the rows written."""
    top = db.run(lambda tx: tx.query_one(f"SELECT COALESCE(MAX(SD_ID), 0) FROM {MS}.SDS")[0], readonly=True)
    written, low = 0, 0
    while low < top:
        bounds = {"lo": low, "hi": low + page}
        rows = db.run(lambda tx: [row for sql in _LINKS for row in tx.query(sql, bounds)], readonly=True)

        def write(tx: Tx, rows=rows) -> None:
            fence(tx)
            tx.executemany(_INSERT, rows)
        if rows:
            db.run(write)
        written += len(rows)
        low += page
    return written


def sweep(db: Database, fence, page: int = 5000) -> int:
    """Drop the rows of SDs an earlier sweep already saw vanished, then mark the newly
    vanished ones; one page of SD ids per transaction.  Returns the rows dropped."""
    top = db.run(lambda tx: tx.query_one(f"SELECT COALESCE(MAX(SD_ID), 0) FROM {REFS}")[0], readonly=True)
    dropped, low = 0, 0
    while low < top:
        bounds = (low, low + page)

        def work(tx: Tx) -> int:
            fence(tx)
            gone = tx.execute(f"DELETE FROM {REFS} WHERE SD_ID > %s AND SD_ID <= %s AND GONE_SEEN_AT IS NOT NULL",
                              bounds)
            tx.execute(f"UPDATE {REFS} SET GONE_SEEN_AT = NOW(3) WHERE SD_ID > %s AND SD_ID <= %s"
                       f" AND NOT EXISTS (SELECT 1 FROM {MS}.SDS s WHERE s.SD_ID = {REFS}.SD_ID)", bounds)
            return gone
        dropped += db.run(work)
        low += page
    return dropped
