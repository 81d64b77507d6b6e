"""Removing orphans: targeted (for what binlog events touched) and sweeping (everything).

What an orphan is comes from hopshive.metastore.orphans, the definition fsck uses.  Every
delete runs in a short transaction of at most ``batch_size`` rows that first checks the
fencing token (``fence``): a deposed leader rolls back instead of acting.  Candidates are
only candidates: ``repair_ids`` locks them (skipping rows a concurrent CREATE holds through
its foreign-key check) and re-checks before deleting, so nothing still referenced goes.

An event costs what it touched, not the size of the catalog: the SDs below a moved
directory are found through the inode tree from its id, and what the SDs that cascaded away
unseen used (CDs, serdes, skewed-value lists, index SDs and tables) through the cleaner's
record (``refs``), by the directory's old inode key.  Only sweeps read everything.
"""

from __future__ import annotations

import logging
import time
from typing import Callable, Protocol

from ..core.db import Database, Tx
from ..metastore.fsck import InodePaths
from ..metastore.orphans import (ORPHAN_CD, ORPHAN_SD, ORPHAN_SERDE, ORPHAN_SKEWED_LIST, REPAIR_ORDER, candidates,
                                 chunks, inodes_of_sds, orphan_index_tables, parts_of_sds, repair_ids, sds_below)
from . import refs
from .events import Touches
from .hbase import HBaseStoreCleaner, old_paths
from .metrics import Metrics

log = logging.getLogger(__name__)
ORPHAN_INDEX_TABLE = "orphan_index_table"
WHY = {
    ORPHAN_SD: "no database, table, partition or index uses it (its owner went with a parent directory)",
    ORPHAN_CD: "no storage descriptor uses it",
    ORPHAN_SERDE: "no storage descriptor uses it",
    ORPHAN_SKEWED_LIST: "no storage descriptor lists it as skewed values",
    ORPHAN_INDEX_TABLE: "its index went with its base table; its directory was deleted so its metadata cascades",
}


class DirectoryRemover(Protocol):
    def delete(self, path: str) -> bool:
        """Delete a directory tree through the namespace (metadata over it cascades)."""


class Cleaner:
    def __init__(self, db: Database, fence: Callable[[Tx], int], metrics: Metrics, grace_seconds: float = 0.0,
                 batch_size: int = 500, remover: DirectoryRemover | None = None,
                 hbase: HBaseStoreCleaner | None = None):
        self.db, self.fence, self.metrics = db, fence, metrics
        self.grace, self.batch_size, self.remover, self.hbase = grace_seconds, batch_size, remover, hbase

    # ------------------------------------------------------------ deleting
    def _remove(self, kind: str, ids, trigger: str) -> tuple[list[int], dict[str, set[int]]]:
        """Delete the orphans among ``ids`` in fenced batches; (deleted ids, parts the
        deleted SDs used)."""
        removed: list[int] = []
        freed: dict[str, set[int]] = {}
        ids = sorted(ids)
        self.metrics.count(self.metrics.found, kind, len(ids))
        for chunk in chunks(ids, self.batch_size):
            def work(tx: Tx, chunk=chunk) -> tuple[list[int], dict[str, set[int]]]:
                self.fence(tx)
                parts = parts_of_sds(tx, chunk) if kind == ORPHAN_SD else {}
                return repair_ids(tx, kind, chunk, self.grace), parts
            done, parts = self.db.run(work)
            for part, part_ids in parts.items():
                freed.setdefault(part, set()).update(part_ids)
            if done:
                removed += done
                self.metrics.count(self.metrics.removed, kind, len(done))
                log.info("removed", extra={"kind": kind, "ids": done, "why": WHY[kind], "trigger": trigger})
        return removed, freed

    def _candidates(self, kind: str, ids: set[int]) -> list[int]:
        """The orphans of ``kind`` among ``ids``."""
        if not ids:
            return []
        return self.db.run(lambda tx: [i for chunk in chunks(sorted(ids), 1000)
                                       for i in candidates(tx, kind, self.grace, ids=chunk)], readonly=True)

    def _sweep_kind(self, kind: str, trigger: str) -> int:
        """Every orphan of ``kind``, read and deleted page by page (bounded transactions)."""
        after, total = 0, 0
        while True:
            ids = self.db.run(lambda tx: candidates(tx, kind, self.grace, after=after, limit=self.batch_size),
                              readonly=True)
            if not ids:
                return total
            total += len(self._remove(kind, ids, trigger)[0])
            after = ids[-1]

    def _index_tables(self, ids: set[int] | None, trigger: str) -> int:
        if ids is not None and not ids:
            return 0

        def work(tx: Tx) -> list[tuple[int, str]]:
            paths = InodePaths(tx)
            found = []
            for tbl_id, parent_id, name in orphan_index_tables(tx, ids):
                parent = paths.directory(parent_id)
                if parent is not None:
                    found.append((tbl_id, f"{parent}/{name}"))
            return found
        found = self.db.run(work, readonly=True)
        self.metrics.count(self.metrics.found, ORPHAN_INDEX_TABLE, len(found))
        done = 0
        for tbl_id, path in found:
            if self.remover is None:
                log.warning("orphaned index table left: no namespace configured",
                            extra={"kind": ORPHAN_INDEX_TABLE, "ids": [tbl_id], "path": path})
                continue
            self.db.run(self.fence, readonly=True)
            if self.remover.delete(path):
                done += 1
                self.metrics.count(self.metrics.removed, ORPHAN_INDEX_TABLE, 1)
                log.info("removed", extra={"kind": ORPHAN_INDEX_TABLE, "ids": [tbl_id], "path": path,
                                           "why": WHY[ORPHAN_INDEX_TABLE], "trigger": trigger})
        return done

    # ------------------------------------------------------------ entry points
    def handle(self, touches: Touches) -> dict[str, int]:
        """Targeted cleanup for what some binlog transactions touched; removed per kind.
        The record of what SDs use is brought up to date first, in the same order as the
        binlog, so that an SD made and cascaded away within one batch is known too."""
        counts = dict.fromkeys((*REPAIR_ORDER, ORPHAN_INDEX_TABLE), 0)
        if not touches:
            return counts

        def find(tx: Tx) -> tuple[set[int], set[int], set[int], list[str]]:
            self.fence(tx)
            orphaned = refs.apply(tx, touches.ref_changes)
            vanished = touches.gone_sds | refs.vanished_at(tx, touches.keys)
            roots = touches.inode_ids | set(inodes_of_sds(tx, touches.owner_sds))
            below = set(touches.owner_sds)
            for chunk in chunks(sorted(roots), 1000):
                below.update(sds_below(tx, chunk))
            paths = old_paths(tx, touches.keys, touches.inode_ids) if self.hbase else []
            return vanished, below | orphaned[0], orphaned[1], paths
        vanished, below, index_tables, paths = self.db.run(find)
        parts = {kind: set(ids) for kind, ids in touches.parts.items()}
        index_tables |= touches.index_tables
        seen: set[int] = set()
        while below or vanished - seen:     # SDs freed by removing SDs: children without a directory
            removed, freed = self._remove(ORPHAN_SD, self._candidates(ORPHAN_SD, below), "event")
            counts[ORPHAN_SD] += len(removed)
            for kind, ids in freed.items():
                parts.setdefault(kind, set()).update(ids)
            vanished.update(removed)
            fresh = vanished - seen
            seen |= fresh
            used = self.db.run(lambda tx: refs.used_by(tx, fresh), readonly=True)
            for kind, orphan_kind in refs.KIND_OF.items():
                parts.setdefault(orphan_kind, set()).update(used[kind])
            index_tables |= used[refs.INDEX_TABLE]
            below = used[refs.CHILD_SD] - seen
        for kind in (ORPHAN_CD, ORPHAN_SERDE, ORPHAN_SKEWED_LIST):
            counts[kind] = len(self._remove(kind, self._candidates(kind, parts.get(kind, set())), "event")[0])
        counts[ORPHAN_INDEX_TABLE] = self._index_tables(index_tables, "event")
        if self.hbase is not None:
            self.hbase.handle(paths)

        def forget(tx: Tx) -> None:
            self.fence(tx)
            refs.forget(tx, seen)
        if seen:
            self.db.run(forget)
        return counts

    def sweep(self) -> dict[str, int]:
        """Reconciliation: every orphan, in bounded batches; removed per kind."""
        started = time.time()
        counts = {kind: self._sweep_kind(kind, "sweep") for kind in REPAIR_ORDER}
        counts[ORPHAN_INDEX_TABLE] = self._index_tables(None, "sweep")
        if self.hbase is not None:
            counts["hbase"] = self.hbase.sweep()
        refs.sweep(self.db, self.fence)
        self.metrics.sweep(started)
        log.info("sweep done", extra={"removed": counts, "seconds": round(time.time() - started, 3)})
        return counts
