"""Background duties of a namenode: heartbeat (as a namenode and as a block holder),
recovery of dead namenodes' locks and writes, removal of block files nothing refers to any
more, and, on the one namenode holding the monitor lease, block replication
(hopshive.namespace.replication)."""

from __future__ import annotations

import logging
import threading
import time

from ..core.db import Tx
from ..security.block_tokens import BlockTokens
from .namespace import Namespace, release_lease
from .replication import MONITOR_LEASE, ReplicationMonitor, acquire_lease, record_replica
from .replication import release_lease as release_duty

log = logging.getLogger(__name__)
ORPHAN_SWEEP_EVERY = 600.0


def recover_dead(namespace: Namespace) -> dict[str, int]:
    """Clear subtree locks and roll back unfinished writes of dead namenodes."""
    liveness = namespace.liveness
    dead = namespace.db.run(liveness.dead)
    counts = {"namenodes": len(dead), "subtree_locks": 0, "leases": 0}
    if not dead:
        return counts
    marks = ",".join(["%s"] * len(dead))
    counts["subtree_locks"] = namespace.db.run(lambda tx: tx.execute(
        f"UPDATE hops.hdfs_inodes SET subtree_locked=NULL, subtree_lock_owner=NULL"
        f" WHERE subtree_locked=1 AND subtree_lock_owner IN ({marks})", dead))
    leases = namespace.db.run(lambda tx: tx.query(
        f"SELECT inode_id FROM hops.hdfs_leases WHERE namenode_id IN ({marks})", dead))
    for (inode_id,) in leases:
        namespace.db.run(lambda tx: release_lease(tx, namespace, inode_id, None))
    counts["leases"] = len(leases)
    namespace.db.run(lambda tx: tx.execute(f"DELETE FROM hops.hdfs_namenodes WHERE id IN ({marks})", dead))
    log.info("recovered dead namenodes", extra=counts)
    return counts


def purge_invalidated(namespace: Namespace) -> int:
    """Delete from disk the blocks of deleted files that this namenode stores."""
    # A replica recorded again since (re-replicated to this holder) stays: only its
    # invalidation goes.
    location = namespace.blocks.location
    rows = namespace.db.run(lambda tx: tx.query(
        "SELECT i.block_id, r.block_id IS NOT NULL FROM hops.hdfs_invalidated_blocks i LEFT JOIN hops.hdfs_replicas r"
        " ON r.block_id=i.block_id AND r.location=i.location WHERE i.location=%s LIMIT 10000", (location,)))
    kept = [block_id for block_id, recorded in rows if recorded]
    if kept:
        marks = ",".join(["%s"] * len(kept))
        namespace.db.run(lambda tx: tx.execute(
            f"DELETE FROM hops.hdfs_invalidated_blocks WHERE location=%s AND block_id IN ({marks})", [location, *kept]))
    doomed = [block_id for block_id, recorded in rows if not recorded]
    if doomed:
        namespace.purge_blocks(doomed)
    return len(doomed)


def sweep_orphans(namespace: Namespace, grace: float) -> int:
    """The block report: block files older than ``grace`` seconds that are not a recorded
    replica here are either re-recorded (a sound copy of a live block, e.g. on a holder
    that was forgotten while away) or removed (no file refers to them: left by a crash
    between writing a block and recording it, or a corrupt copy)."""
    location = namespace.blocks.location
    on_disk = sorted(set(namespace.blocks.block_ids_on_disk(time.time() - grace)))
    orphans, reported = [], 0
    for start in range(0, len(on_disk), 1000):
        chunk = on_disk[start:start + 1000]
        marks = ",".join(["%s"] * len(chunk))

        def known(tx: Tx) -> tuple[dict[int, int], set[int]]:
            sizes = dict(tx.query(f"SELECT block_id, num_bytes FROM hops.hdfs_block_infos WHERE block_id IN ({marks})",
                                  chunk))
            mine = {row[0] for row in tx.query(
                f"SELECT block_id FROM hops.hdfs_replicas WHERE location=%s AND block_id IN ({marks})",
                [location, *chunk])}
            return sizes, mine
        sizes, mine = namespace.db.run(known)
        for block_id in chunk:
            if block_id in mine:
                continue
            if block_id in sizes and namespace.blocks.sound(block_id, sizes[block_id]):
                namespace.db.run(lambda tx: record_replica(tx, block_id, location))
                reported += 1
            else:
                orphans.append(block_id)
    namespace.blocks.delete(orphans)
    if orphans or reported:
        log.info("block report", extra={"removed": len(orphans), "recorded": reported})
    return len(orphans)


class Maintenance(threading.Thread):
    def __init__(self, namespace: Namespace, block_tokens: BlockTokens, interval: float, orphan_grace: float,
                 replication_interval: float = 3.0, block_report_interval: float = ORPHAN_SWEEP_EVERY):
        super().__init__(name="namenode-maintenance", daemon=True)
        self.namespace, self.interval, self.orphan_grace = namespace, interval, orphan_grace
        self.replication_interval = replication_interval
        self.block_report_interval = block_report_interval
        self.monitor = ReplicationMonitor(namespace.db, namespace.holders, block_tokens, tls=namespace.config)
        self.owner = f"{namespace.blocks.location}/{namespace.liveness.namenode_id}"
        self.stopping = threading.Event()

    def run(self) -> None:
        last_sweep = last_replication = 0.0
        while not self.stopping.wait(self.interval):
            try:
                self.namespace.liveness.heartbeat()
                self.namespace.holders.heartbeat()
                recover_dead(self.namespace)
                purge_invalidated(self.namespace)
                if time.monotonic() - last_replication > self.replication_interval:
                    last_replication = time.monotonic()
                    if acquire_lease(self.namespace.db, MONITOR_LEASE, self.owner, 3 * self.replication_interval):
                        self.monitor.round()
                if time.monotonic() - last_sweep > self.block_report_interval:
                    sweep_orphans(self.namespace, self.orphan_grace)
                    last_sweep = time.monotonic()
            except Exception:
                log.exception("maintenance round failed; will retry")
        try:
            release_duty(self.namespace.db, MONITOR_LEASE, self.owner)
        except Exception:
            log.exception("could not release the replication monitor lease")
