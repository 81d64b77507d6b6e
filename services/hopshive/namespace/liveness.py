"""Which namenodes are alive: registration, heartbeats, and recovery of the dead.

Each namenode process registers a row in `hops.hdfs_namenodes` (with the build it runs) and
heartbeats it.  Subtree locks and file leases name their namenode; once its heartbeat is
older than ``dead_after`` seconds (or a newer process has started at the same address), any
survivor clears its subtree locks and rolls back its unfinished writes.  Recovery is
idempotent, so every namenode may run it.
"""

from __future__ import annotations

import logging
import threading
import time

from ..core.build import RUNNING
from ..core.db import Database, Tx

log = logging.getLogger(__name__)


class Liveness:
    def __init__(self, db: Database, address: str, dead_after: float, generation: float | None = None):
        # Liveness is checked while an operation holds row locks on a connection of the
        # main pool; a pool of its own keeps a full main pool from stalling that check.
        self.db = Database(dict(db.config, pool_size=2))
        self.address, self.dead_after = address, dead_after
        # Milliseconds, exactly as TIMESTAMP(3) stores them, so equal generations compare equal.
        self.generation_ms = int((generation or time.time()) * 1000)
        self.namenode_id: int | None = None
        self._alive: set[int] = set()
        self._checked = 0.0
        self._lock = threading.Lock()

    def register(self) -> int:
        def work(tx: Tx) -> int:
            tx.execute("UPDATE hops.hdfs_variables SET value = LAST_INSERT_ID(value + 1) WHERE name='namenode_id'")
            ident = tx.query_one("SELECT LAST_INSERT_ID()")[0]
            tx.execute("INSERT INTO hops.hdfs_namenodes (id, address, started_at, heartbeat, build)"
                       " VALUES (%s, %s, FROM_UNIXTIME(%s / 1000), NOW(3), %s)",
                       (ident, self.address, self.generation_ms, RUNNING["source"]))
            return ident
        self.namenode_id = self.db.run(work)
        return self.namenode_id

    def heartbeat(self) -> None:
        self.db.run(lambda tx: tx.execute("UPDATE hops.hdfs_namenodes SET heartbeat=NOW(3) WHERE id=%s",
                                          (self.namenode_id,)))

    def unregister(self) -> None:
        self.db.run(lambda tx: tx.execute("DELETE FROM hops.hdfs_namenodes WHERE id=%s", (self.namenode_id,)))
        self.db.close()

    def dead(self, tx: Tx) -> list[int]:
        """Namenodes whose heartbeat expired, or that an earlier start at our address left behind."""
        rows = tx.query("SELECT id FROM hops.hdfs_namenodes WHERE heartbeat < NOW(3) - INTERVAL %s SECOND"
                        " OR (address=%s AND started_at < FROM_UNIXTIME(%s / 1000))",
                        (self.dead_after, self.address, self.generation_ms))
        return [row[0] for row in rows]

    def is_alive(self, namenode_id: int | None) -> bool:
        if namenode_id is None:
            return False
        if namenode_id == self.namenode_id:
            return True
        with self._lock:
            if time.monotonic() - self._checked > 1.0:
                rows = self.db.run(lambda tx: tx.query(
                    "SELECT id FROM hops.hdfs_namenodes WHERE heartbeat >= NOW(3) - INTERVAL %s SECOND"
                    " AND NOT (address=%s AND started_at < FROM_UNIXTIME(%s / 1000))",
                    (self.dead_after, self.address, self.generation_ms)))
                self._alive = {row[0] for row in rows}
                self._checked = time.monotonic()
            return namenode_id in self._alive
