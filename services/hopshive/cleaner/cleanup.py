"""Removing orphans: targeted (for what binlog events touched) and sweeping (everything).

What an orphan is comes from hopshive.metastore.orphans, the definition fsck uses.  Every
delete runs in a short transaction of at most ``batch_size`` rows that first checks the
fencing token (``fence``): a deposed leader rolls back instead of acting.  Candidates are
only candidates: ``repair_ids`` locks them (skipping rows a concurrent CREATE holds through
its foreign-key check) and re-checks before deleting, so nothing still referenced goes.
"""

from __future__ import annotations

import logging
import time
from typing import Callable, Protocol

from ..core.db import Database, Tx
from ..metastore.fsck import InodePaths
from ..metastore.orphans import (ORPHAN_CD, ORPHAN_SD, ORPHAN_SERDE, ORPHAN_SKEWED_LIST, REPAIR_ORDER, candidates,
                                 chunks, inodes_of_sds, orphan_index_tables, parts_of_sds, repair_ids, sds_below,
                                 sds_without_directory)
from .events import Touches
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
                 batch_size: int = 500, remover: DirectoryRemover | None = None):
        self.db, self.fence, self.metrics = db, fence, metrics
        self.grace, self.batch_size, self.remover = grace_seconds, batch_size, remover

    # ------------------------------------------------------------ deleting
    def _remove(self, kind: str, ids: list[int], trigger: str) -> tuple[list[int], dict[str, set[int]]]:
        """Delete the orphans among ``ids`` in fenced batches; (deleted ids, parts the
        deleted SDs used)."""
        removed: list[int] = []
        freed: dict[str, set[int]] = {}
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
        """Targeted cleanup for what some binlog transactions touched; removed per kind."""
        counts = dict.fromkeys((*REPAIR_ORDER, ORPHAN_INDEX_TABLE), 0)
        if not touches:
            return counts

        def find(tx: Tx) -> list[int]:
            roots = touches.inode_ids | set(inodes_of_sds(tx, touches.owner_sds))
            ids = touches.owner_sds | set(sds_below(tx, roots))
            if touches.cascaded:  # an index may have gone with its base table, unseen
                ids |= set(sds_without_directory(tx))
            return candidates(tx, ORPHAN_SD, self.grace, ids=ids)
        sds, freed = self._remove(ORPHAN_SD, self.db.run(find, readonly=True), "event")
        counts[ORPHAN_SD] = len(sds)
        for kind in (ORPHAN_CD, ORPHAN_SERDE, ORPHAN_SKEWED_LIST):
            everywhere = touches.cascaded or (kind == ORPHAN_SKEWED_LIST and (touches.sds_deleted or sds))
            if everywhere:
                counts[kind] = self._sweep_kind(kind, "event")
                continue
            scoped = touches.parts.get(kind, set()) | freed.get(kind, set())
            if scoped:
                ids = self.db.run(lambda tx, k=kind, s=scoped: candidates(tx, k, self.grace, ids=s), readonly=True)
                counts[kind] = len(self._remove(kind, ids, "event")[0])
        # An index goes with its base table's directory by cascade, unseen: look at all index tables then.
        counts[ORPHAN_INDEX_TABLE] = self._index_tables(None if touches.cascaded else touches.index_tables, "event")
        return counts

    def sweep(self) -> dict[str, int]:
        """Reconciliation: every orphan, in bounded batches; removed per kind."""
        started = time.time()
        counts = {kind: self._sweep_kind(kind, "sweep") for kind in REPAIR_ORDER}
        counts[ORPHAN_INDEX_TABLE] = self._index_tables(None, "sweep")
        self.metrics.sweep(started)
        log.info("sweep done", extra={"removed": counts, "seconds": round(time.time() - started, 3)})
        return counts
