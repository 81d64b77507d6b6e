"""Metastore fsck: find the metadata that foreign keys cannot clean up, and remove it.

The schema (``schema/001_hive_2_3_consistent.sql``) cascades every 1-to-n relation from
the directory inodes down, so deleting or moving a directory removes the database, table or
partition stored there.  What it cannot reach is what the thesis's hiveCleaner handled
(section 3.1.3), plus checks that only a human should act on:

repaired (``repair``)
  ``orphan_sd``           storage descriptors no database, table, partition or index uses,
                          typically the tables' and partitions' SDs left behind when a
                          database directory was moved; deleting one cascades to its
                          SD_PARAMS, BUCKETING_COLS, SORT_COLS and SKEWED_* rows;
  ``orphan_cd``           column descriptors used by no live storage descriptor;
  ``orphan_serde``        serdes used by no live storage descriptor;
  ``orphan_skewed_list``  skewed-value lists used by no live storage descriptor;
reported only
  ``stale_location``      an SD whose LOCATION is not the path of the inode it points at;
  ``broken_inode_path``   an SD whose inode's parent chain does not reach the root;
  ``orphan_index_table``  an INDEX_TABLE whose index went with its base table (deleting
                          its directory removes it, as the hiveCleaner did);
  ``db_location_mismatch`` DBS.DB_LOCATION_URI differs from the location of the DB's SD.

What counts as an orphan, and how a repair re-checks and locks, is defined once in
hopshive.metastore.orphans, shared with the cleaner service (hopshive.cleaner).  A CD,
serde or list counts as orphaned when only orphaned SDs use it, so one report shows
everything one repair removes.  ``repair`` takes the report's ids as candidates only: it
locks them (``FOR UPDATE SKIP LOCKED``: rows held by another fsck, or by a transaction
that is inserting a row referencing them, are skipped until the next run) and deletes with
``NOT EXISTS`` re-checks, so it is idempotent and safe to run concurrently with itself and
with the metastore (a re-check that would wait long for another transaction gives up on
that row until the next run).  Rows younger than the grace period (``CREATED_AT``) are never touched:
the store makes a new SD reachable in the transaction that creates it, so under READ
COMMITTED no other session sees it unreferenced; the grace period covers anything slower.
"""

from __future__ import annotations

import logging
import re
from dataclasses import asdict, dataclass, field
from typing import Iterable, Iterator
from urllib.parse import unquote

from ..core.db import Database, Tx
from .orphans import (MS, ORPHAN_CD, ORPHAN_SD, ORPHAN_SERDE, ORPHAN_SKEWED_LIST, REPAIR_ORDER,
                      grace_param, orphan_index_table_predicate, orphan_predicate, owned, repair_chunk)
from .orphans import chunks as _chunks

log = logging.getLogger(__name__)
ROOT_ID = 1  # the root inode (hops schema, migration 001)
DEFAULT_GRACE_SECONDS = 600.0
DEFAULT_BATCH_SIZE = 500
_MAX_DEPTH = 4096  # deeper parent chains are treated as cycles
_PAGE = 5000

STALE_LOCATION = "stale_location"
BROKEN_INODE_PATH = "broken_inode_path"
ORPHAN_INDEX_TABLE = "orphan_index_table"
DB_LOCATION_MISMATCH = "db_location_mismatch"


@dataclass(frozen=True)
class Finding:
    """One inconsistency: ``what`` names the object, ``why`` says what is wrong with it."""

    kind: str
    id: int
    what: str
    why: str

    @property
    def repairable(self) -> bool:
        return self.kind in REPAIR_ORDER


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    grace_seconds: float = DEFAULT_GRACE_SECONDS

    def ids(self, kind: str) -> list[int]:
        return [f.id for f in self.findings if f.kind == kind]

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for finding in self.findings:
            counts[finding.kind] = counts.get(finding.kind, 0) + 1
        return counts

    @property
    def repairable(self) -> list[Finding]:
        return [f for f in self.findings if f.repairable]

    def to_dict(self) -> dict:
        return {"grace_seconds": self.grace_seconds, "counts": self.counts(),
                "findings": [dict(asdict(f), repairable=f.repairable) for f in self.findings]}


def _first(column: str, table: str, where: str, order: str = "", shown: int = 8) -> str:
    """SQL for (count, the first `shown` values joined by ', ') of `column`; the values are
    cut before GROUP_CONCAT's length limit could cut one in half."""
    return (f"(SELECT COUNT(*) FROM {MS}.{table} WHERE {where}),"
            f" (SELECT SUBSTRING_INDEX(GROUP_CONCAT({column} ORDER BY {order or column} SEPARATOR ', '),"
            f" ', ', {shown}) FROM {MS}.{table} WHERE {where})")


def _listed(total: int, first: str | None, shown: int = 8) -> str:
    return (first or "") + (f" and {total - shown} more" if total > shown else "")


def find_orphans(tx: Tx, grace_seconds: float = DEFAULT_GRACE_SECONDS) -> Report:
    """Everything fsck knows to look for; changes nothing."""
    params = grace_param(grace_seconds)
    report = Report(grace_seconds=grace_seconds)
    add = report.findings.append

    for sd_id, location in tx.query(
            f"SELECT s.SD_ID, s.LOCATION FROM {MS}.SDS s WHERE {orphan_predicate(ORPHAN_SD, 's')}"
            f" ORDER BY s.SD_ID", params):
        add(Finding(ORPHAN_SD, sd_id, f"storage descriptor {sd_id} ({location or 'no location'})",
                    "no database, table, partition or index uses it: its owner was removed "
                    "through a parent (e.g. a database directory moved to the trash)"))

    for cd_id, n_columns, columns, n_users, users in tx.query(
            f"SELECT c.CD_ID, {_first('COLUMN_NAME', 'COLUMNS_V2', 'CD_ID = c.CD_ID', 'INTEGER_IDX')},"
            f" {_first('SD_ID', 'SDS', 'CD_ID = c.CD_ID')}"
            f" FROM {MS}.CDS c WHERE {orphan_predicate(ORPHAN_CD, 'c')}"
            f" ORDER BY c.CD_ID", params):
        add(Finding(ORPHAN_CD, cd_id, f"column descriptor {cd_id} ({n_columns} columns: "
                    f"{_listed(n_columns, columns)})", _shared_why(n_users, users)))

    for serde_id, slib, n_users, users in tx.query(
            f"SELECT d.SERDE_ID, d.SLIB, {_first('SD_ID', 'SDS', 'SERDE_ID = d.SERDE_ID')} FROM {MS}.SERDES d"
            f" WHERE {orphan_predicate(ORPHAN_SERDE, 'd')}"
            f" ORDER BY d.SERDE_ID", params):
        add(Finding(ORPHAN_SERDE, serde_id, f"serde {serde_id} ({slib or 'no library'})",
                    _shared_why(n_users, users)))

    for list_id, n_values, values in tx.query(
            f"SELECT l.STRING_LIST_ID,"
            f" {_first('STRING_LIST_VALUE', 'SKEWED_STRING_LIST_VALUES', 'STRING_LIST_ID = l.STRING_LIST_ID', 'INTEGER_IDX')}"
            f" FROM {MS}.SKEWED_STRING_LIST l WHERE {orphan_predicate(ORPHAN_SKEWED_LIST, 'l')}"
            f" ORDER BY l.STRING_LIST_ID", params):
        add(Finding(ORPHAN_SKEWED_LIST, list_id, f"skewed value list {list_id} ({_listed(n_values, values) or 'empty'})",
                    "no live storage descriptor lists it as skewed values"))

    for tbl_id, db_name, tbl_name, location in tx.query(
            f"SELECT t.TBL_ID, d.NAME, t.TBL_NAME, s.LOCATION FROM {MS}.TBLS t"
            f" JOIN {MS}.DBS d ON d.DB_ID = t.DB_ID LEFT JOIN {MS}.SDS s ON s.SD_ID = t.SD_ID"
            f" WHERE {orphan_index_table_predicate('t')} ORDER BY t.TBL_ID"):
        add(Finding(ORPHAN_INDEX_TABLE, tbl_id, f"index table {db_name}.{tbl_name} ({location or 'no location'})",
                    "its index went with its base table; delete its directory to remove it"))

    for db_id, name, uri, location in tx.query(
            f"SELECT d.DB_ID, d.NAME, d.DB_LOCATION_URI, s.LOCATION FROM {MS}.DBS d"
            f" JOIN {MS}.SDS s ON s.SD_ID = d.SD_ID WHERE NOT (d.DB_LOCATION_URI <=> s.LOCATION) ORDER BY d.DB_ID"):
        add(Finding(DB_LOCATION_MISMATCH, db_id, f"database {name}",
                    f"DB_LOCATION_URI {uri} differs from its storage descriptor's location {location}"))

    report.findings += _location_findings(tx)
    return report


def _shared_why(n_users: int, users: str | None) -> str:
    if n_users:
        return f"used only by orphaned storage descriptors {_listed(n_users, users)}, which fsck deletes first"
    return "no storage descriptor uses it"


def _location_findings(tx: Tx) -> Iterator[Finding]:
    """Owned SDs linked to an inode whose path is not their LOCATION (an unowned SD's
    location does not matter: it is an orphan, or about to be owned)."""
    paths = InodePaths(tx)
    last = 0
    while True:
        rows = tx.query(f"SELECT s.SD_ID, s.LOCATION, s.PARENT_ID, s.NAME FROM {MS}.SDS s"
                        f" WHERE s.PARTITION_ID IS NOT NULL AND s.SD_ID > %s AND {owned('s')}"
                        f" ORDER BY s.SD_ID LIMIT {_PAGE}", (last,))
        if not rows:
            return
        last = rows[-1][0]
        paths.prefetch(row[2] for row in rows)
        for sd_id, location, parent_id, name in rows:
            parent = paths.directory(parent_id)
            if parent is None:
                yield Finding(BROKEN_INODE_PATH, sd_id, f"storage descriptor {sd_id} ({location})",
                              f"its inode {name!r} hangs below inode {parent_id}, whose parents do not "
                              f"lead to the root")
                continue
            path = f"{parent}/{name}"
            if location is None or not location_matches(location, path):
                yield Finding(STALE_LOCATION, sd_id, f"storage descriptor {sd_id} ({location or 'no location'})",
                              f"its inode is at {path}")


def directory_id(tx: Tx, path: str) -> int | None:
    """The inode id of the directory ``path`` ("/a/b"), or None when there is none (one
    indexed lookup per component, by parent id and name)."""
    current = ROOT_ID
    for name in (c for c in path.split("/") if c):
        row = tx.query_one("SELECT id FROM hops.hdfs_inodes WHERE parent_id=%s AND name=%s AND is_dir=1",
                           (current, name))
        if row is None:
            return None
        current = row[0]
    return current


class InodePaths:
    """Paths of directories by inode id, walking parent ids up to the root (cached)."""

    def __init__(self, tx: Tx):
        self._tx = tx
        self._parent: dict[int, tuple[int, str] | None] = {}
        self._paths: dict[int, str | None] = {ROOT_ID: ""}

    def prefetch(self, ids: Iterable[int]) -> None:
        """Load the parent chains of ``ids`` level by level, one query per level."""
        pending = {i for i in ids if i not in self._paths and i not in self._parent}
        for _ in range(_MAX_DEPTH):
            if not pending:
                return
            for chunk in _chunks(sorted(pending), DEFAULT_BATCH_SIZE):
                marks = ", ".join(["%s"] * len(chunk))
                found = {row[0]: (row[1], row[2]) for row in self._tx.query(
                    f"SELECT id, parent_id, name FROM hops.hdfs_inodes WHERE id IN ({marks})", chunk)}
                for inode_id in chunk:
                    self._parent[inode_id] = found.get(inode_id)
            pending = {entry[0] for entry in (self._parent[i] for i in pending) if entry
                       and entry[0] not in self._paths and entry[0] not in self._parent}

    def directory(self, inode_id: int) -> str | None:
        """The path of inode ``inode_id`` ("" for the root), or None when it is unreachable."""
        chain: list[tuple[int, str]] = []
        current = inode_id
        while current not in self._paths:
            if current not in self._parent:
                self.prefetch([current])
            entry = self._parent[current]
            if entry is None or len(chain) > _MAX_DEPTH or any(node == current for node, _ in chain):
                for node, _ in chain:
                    self._paths[node] = None
                self._paths[current] = None
                return None
            chain.append((current, entry[1]))
            current = entry[0]
        path = self._paths[current]
        for node, name in reversed(chain):
            path = None if path is None else f"{path}/{name}"
            self._paths[node] = path
        return path


_SCHEME_AUTHORITY = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:(//[^/]*)?")


def location_path(location: str) -> str:
    """The path part of a location URI (`hdfs://nn:8020/a/b/` -> `/a/b`), as stored."""
    path = re.sub("/{2,}", "/", _SCHEME_AUTHORITY.sub("", location, count=1))
    return path.rstrip("/") or "/"


def location_matches(location: str, inode_path: str) -> bool:
    """Locations are stored as the client sent them: Hadoop's Path.toString keeps names raw
    (a directory literally named `a%2Fb`, as Hive escapes partition values), URIs
    percent-encode (`%20`).  A location matches if either reading gives the inode's path."""
    path = location_path(location)
    return path == (inode_path or "/") or unquote(path) == (inode_path or "/")


# ---------------------------------------------------------------- repair

def repair(tx: Tx, report: Report, batch_size: int = DEFAULT_BATCH_SIZE) -> dict[str, int]:
    """Delete the report's repairable orphans inside ``tx``; rows deleted per kind."""
    return {kind: sum(repair_chunk(tx, kind, chunk, report.grace_seconds)
                      for chunk in _chunks(report.ids(kind), batch_size))
            for kind in REPAIR_ORDER}


def repair_in_batches(db: Database, report: Report, batch_size: int = DEFAULT_BATCH_SIZE) -> dict[str, int]:
    """Like ``repair``, one short transaction per batch (retried on deadlock), so a large
    clean-up never holds many locks or one huge undo log."""
    counts = {}
    for kind in REPAIR_ORDER:
        counts[kind] = 0
        for chunk in _chunks(report.ids(kind), batch_size):
            counts[kind] += db.run(lambda tx, c=chunk, k=kind: repair_chunk(tx, k, c, report.grace_seconds))
    return counts
