"""HBase-store metadata follows its directories (issue #10, requirement 6).

The HBase store has no foreign keys to the inodes: deleting or moving a directory behind the
metastore's back leaves its database, table or partition rows in HBase.  The cleaner reads
the same binlog events as for the MariaDB store; every directory deleted or moved names a
path (the old parent's path and the old name, for the topmost directory of a batch), and the
HBase store's databases, tables and partitions stored at or below it whose directory is gone
are dropped through the store -- ``stores/hbase/fsck.py``'s ``without_directory`` and
``drop_without_directory``, the implementation ``hopshive-metatool fsck-hbase`` runs too.
Each sweep runs the same check over the whole store.

Order of operations and recovery: the directory change commits first (it is the user's);
the cleaner then drops the metadata, re-reading row and directory just before, and leaves
alone what a move of the store in flight is taking to a new place (a rename by the
metastore writes its rows before its directory move commits: ``hbase_store``'s module
docstring; ``hbase.moves``).  A cleaner that dies in between has not saved the batch's binlog position: the
next leader replays the event, and every term starts with a sweep.  Nothing else can leave
metadata without its directory except a crash inside the metastore's own rename, which the
sweeps (and fsck-hbase) repair the same way.
"""

from __future__ import annotations

import logging
from typing import Callable, Iterable

from ..core.db import Database, Tx
from ..metastore.app import HBASE_DEFAULTS
from ..metastore.fsck import InodePaths
from ..metastore.exceptions import MetastoreError, NoSuchObject
from ..metastore.locations import Locations
from ..metastore.stores.hbase import fsck as hbase_fsck, moves
from .metrics import Metrics
from .scratch import NamespaceRemover

log = logging.getLogger(__name__)
KINDS = {"database without directory": "hbase_database", "table without directory": "hbase_table",
         "partition without directory": "hbase_partition"}


def old_paths(tx: Tx, keys: Iterable[tuple], inode_ids: set[int]) -> list[str]:
    """Paths the directories with these (old) inode keys had: the topmost of them (one
    deleted with its parent is covered by the parent's path), where the old parent still
    leads to the root."""
    paths = InodePaths(tx)
    found = []
    for _, parent_id, name in keys:
        if parent_id in inode_ids:
            continue
        parent = paths.directory(parent_id)
        if parent is not None:
            found.append(f"{parent}/{name}")
    return found


class HBaseStoreCleaner:
    """Drops the HBase store's metadata whose directory is gone."""

    def __init__(self, db: Database, config: dict, fence: Callable[[Tx], int], metrics: Metrics,
                 remover: NamespaceRemover | None = None):
        self.db, self.fence, self.metrics = db, fence, metrics
        self.remover = remover
        self.config = {k: config[k] for k in HBASE_DEFAULTS if k in config}
        self.locations = Locations(list(config["namespace_uris"]), config["warehouse"])
        self._store = None

    @property
    def store(self):
        """The HBase store, connected on first use (HBase may be down when a term starts)."""
        if self._store is None:
            from ..metastore.stores.hbase_store import HBaseStore
            try:
                self._store = HBaseStore(self.db, self.config)
            except MetastoreError:
                raise
            except Exception as exc:  # noqa: BLE001 -- thrift/socket errors of the first connection
                raise MetastoreError(f"HBase {self.config.get('host')}:{self.config.get('port')} unusable: "
                                     f"{type(exc).__name__}: {exc}") from exc
        return self._store

    def _drop(self, report: hbase_fsck.HBaseReport, trigger: str) -> int:
        for finding in report.findings:
            self.metrics.count(self.metrics.found, KINDS[finding.kind], 1)
        if not report.findings:
            return 0
        self.db.run(self.fence, readonly=True)
        index_dirs = self._index_directories(report)
        done = hbase_fsck.drop_without_directory(self.store, report, self.db, self.locations)
        self._remove_index_directories(index_dirs, trigger)
        for finding in done:
            self.metrics.count(self.metrics.removed, KINDS[finding.kind], 1)
            log.info("removed", extra={"kind": KINDS[finding.kind], "what": finding.what, "trigger": trigger,
                                       "why": f"HBase store metadata whose directory {finding.path} is gone"})
        return len(done)

    def _index_directories(self, report: hbase_fsck.HBaseReport) -> list[tuple[str, str, str]]:
        """(db, index table, directory) of the index tables of the tables the report drops.
        The store's drop takes their metadata and keeps their data (the cleaner drops as
        nobody, so with no directories), and nothing would ever delete those directories:
        the cleaner does, as it deletes an orphaned index table's on the MariaDB store."""
        found = []
        for finding in report.findings:
            if finding.kind != hbase_fsck.NO_DIRECTORY[1]:
                continue
            db_name, name = finding.target
            for index in self.store.get_indexes(db_name, name):
                try:
                    table = self.store.get_table(db_name, index.indexTableName) if index.indexTableName else None
                except NoSuchObject:
                    continue
                path = hbase_fsck.directory_path(self.locations, table.sd.location if table and table.sd else None)
                if path:
                    found.append((db_name, table.tableName, path))
        return found

    def _remove_index_directories(self, found: list[tuple[str, str, str]], trigger: str) -> None:
        for db_name, name, path in found:
            try:
                self.store.get_table(db_name, name)
                continue                        # its base table was not dropped after all
            except NoSuchObject:
                pass
            if self.remover is None:
                log.warning("index table directory left: no namespace configured", extra={"path": path})
                continue
            self.db.run(self.fence, readonly=True)
            if self.remover.delete(path):
                self.metrics.count(self.metrics.removed, "hbase_index_table", 1)
                log.info("removed", extra={"kind": "hbase_index_table", "what": f"{db_name}.{name}", "path": path,
                                           "trigger": trigger, "why": "its base table went with its directory"})

    def _run(self, under: list[str] | None, trigger: str) -> int:
        """An unreachable HBase must not stop the MariaDB store's clean-up: the failure is
        logged and counted, and the next sweep after HBase is back does the work."""
        try:
            return self._drop(hbase_fsck.without_directory(self.store, self.db, self.locations, under=under), trigger)
        except MetastoreError as exc:
            self.metrics.errors += 1
            log.warning("HBase store not checked; the next sweep retries", extra={"error": str(exc),
                                                                                 "trigger": trigger})
            return 0

    def handle(self, paths: list[str]) -> int:
        """Metadata at or below the directories ``paths`` (deleted or moved); dropped."""
        return self._run(paths, "event") if paths else 0

    def sweep(self) -> int:
        forgotten = self.db.run(moves.forget_abandoned)
        if forgotten:
            log.warning("forgot HBase-store moves abandoned by a metastore that died mid-move",
                        extra={"count": forgotten})
        return self._run(None, "sweep")
