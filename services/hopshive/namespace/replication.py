"""Block replication: who holds blocks, the monitor that keeps each block at its file's
replication factor, and fsck.

Holders.  Every namenode process is a block holder: its heartbeat renews its address's row
in `hops.hdfs_block_holders`.  Two thresholds, as HDFS's stale and dead datanodes:
``dead_after`` (seconds, the namenode heartbeat timeout) decides whom reads and writes
prefer and whom writes copy to; ``holder_timeout`` (longer) decides when a silent holder's
replicas are forgotten, which makes its blocks under-replicated.

Writes (hopshive.webhdfs.app, .pipeline): the namenode receiving a file writes each block
to its own disk and streams it, as it arrives, to ``min(replication, live holders) - 1``
other live holders (PUT to their internal block endpoint; each fsyncs the block and its
checksums before answering); the file is closed, and the client answered, only once that
many replicas are durable.  A peer that fails is replaced by the next live one (a
synchronous copy after the last byte); a peer that failed counts as dead for the rest of
the write, as HDFS's pipeline recovery drops a failed datanode, so the write then succeeds
under-replicated and the monitor adds the replica later.  When the count still falls short
the write fails (BlockMissingException) and nothing becomes visible.  As in
HDFS, a replication factor above the number of live holders is accepted: the file gets a
replica on each live holder, fsck lists it as under-replicated, and the monitor adds the
missing replicas when holders join.  Replication 0 (or above 512) is refused, as HDFS does.

Reads verify every chunk against its stored CRC; a corrupt replica is reported (marked
corrupt here), skipped, and the read continues from another replica at the same byte.

The monitor runs on one namenode at a time, elected through a replicated lease row
(`hops.hdfs_duty_leases`; GET_LOCK would be node-local on Galera).  Each round it forgets
holders silent past ``holder_timeout``, copies every block with fewer sound replicas than
its file wants from a live holder to another live one (a holder with a corrupt copy is a
valid target: its endpoint replaces the bad file), then drops corrupt and excess replicas
(their holders delete the files).  Finding the blocks is a scan of the block table: fine
for this deployment's size; a cluster of millions of blocks would keep HDFS's queue of
needed replications instead.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from dataclasses import dataclass, field

import requests

from ..core.db import Database, Tx
from ..core.tls import VerifyingSession, http_scheme
from ..security.block_tokens import READ, WRITE, BlockTokens
from .blocks import READ_CHUNK

log = logging.getLogger(__name__)
INTERNAL = "/internal/v1/blocks"


def replica_url(scheme: str, holder: str, block_id: int) -> str:
    """A peer namenode's internal endpoint for one block (https when the namenodes serve TLS)."""
    return f"{scheme}://{holder}{INTERNAL}/{block_id}"
MONITOR_LEASE = "replication_monitor"
COPY_TIMEOUT = 60.0


class Holders:
    """This process's holder row, and which holders are live (cached for a second)."""

    def __init__(self, db: Database, address: str, dead_after: float, holder_timeout: float):
        self.db, self.address = db, address
        self.dead_after, self.holder_timeout = dead_after, holder_timeout
        self._live: list[str] = []
        self._checked = 0.0
        self._lock = threading.Lock()

    def heartbeat(self) -> None:
        self.db.run(lambda tx: tx.execute(
            "INSERT INTO hops.hdfs_block_holders (address, last_seen) VALUES (%s, NOW(3))"
            " ON DUPLICATE KEY UPDATE last_seen=NOW(3)", (self.address,)))

    def live(self, fresh: bool = False) -> list[str]:
        """Addresses that heartbeated within ``dead_after`` seconds (this one first); read
        from the database at most once a second unless ``fresh``."""
        with self._lock:
            if fresh or time.monotonic() - self._checked > 1.0:
                rows = self.db.run(lambda tx: tx.query(
                    "SELECT address FROM hops.hdfs_block_holders WHERE last_seen >= NOW(3) - INTERVAL %s SECOND",
                    (self.dead_after,)), readonly=True)
                self._live = sorted(row[0] for row in rows)
                self._checked = time.monotonic()
            return [self.address] + [a for a in self._live if a != self.address]

    def order(self, replicas: tuple[str, ...]) -> list[str]:
        """``replicas`` in the order to read them: this one, the live, then the rest."""
        live = self.live()
        return sorted(replicas, key=lambda a: (a != self.address, a not in live))

    def copy_targets(self, exclude: tuple[str, ...] = ()) -> list[str]:
        """Live holders other than this one and ``exclude``, shuffled to spread replicas."""
        peers = [a for a in self.live() if a != self.address and a not in exclude]
        random.shuffle(peers)
        return peers


def acquire_lease(db: Database, name: str, owner: str, ttl: float) -> bool:
    """Take or renew the lease ``name`` for ``ttl`` seconds; True when ``owner`` holds it."""
    def work(tx: Tx) -> bool:
        tx.execute("INSERT IGNORE INTO hops.hdfs_duty_leases (name, owner, expires) VALUES (%s, '', NOW(3))", (name,))
        tx.execute("UPDATE hops.hdfs_duty_leases SET owner=%s, expires=NOW(3) + INTERVAL %s SECOND"
                   " WHERE name=%s AND (owner=%s OR expires < NOW(3))", (owner, ttl, name, owner))
        row = tx.query_one("SELECT owner FROM hops.hdfs_duty_leases WHERE name=%s", (name,))
        return row is not None and row[0] == owner
    return db.run(work)


def release_lease(db: Database, name: str, owner: str) -> None:
    db.run(lambda tx: tx.execute("UPDATE hops.hdfs_duty_leases SET expires=NOW(3) - INTERVAL 1 SECOND"
                                 " WHERE name=%s AND owner=%s", (name, owner)))


# Every block with its file's replication factor and its replicas: (location, corrupt, holder
# seen within holder_timeout, holder seen within dead_after).
_BLOCK_STATES = """
SELECT b.block_id, b.num_bytes, MAX(i.header) >> 48,
       GROUP_CONCAT(CONCAT_WS('|', r.location, r.corrupt,
                              h.last_seen >= NOW(3) - INTERVAL %s SECOND,
                              h.last_seen >= NOW(3) - INTERVAL %s SECOND) SEPARATOR ',')
FROM hops.hdfs_block_infos b
JOIN hops.hdfs_inodes i ON i.id = b.inode_id AND i.under_construction = 0
LEFT JOIN hops.hdfs_replicas r ON r.block_id = b.block_id
LEFT JOIN hops.hdfs_block_holders h ON h.address = r.location
{where}
GROUP BY b.block_id, b.num_bytes
"""


@dataclass
class BlockState:
    block_id: int
    num_bytes: int
    wanted: int
    sound: list[str] = field(default_factory=list)      # not corrupt, holder not timed out
    readable: list[str] = field(default_factory=list)   # sound and holder live now
    corrupt: list[str] = field(default_factory=list)

    @property
    def missing(self) -> bool:
        return not self.sound

    @property
    def under_replicated(self) -> bool:
        return 0 < len(self.sound) < self.wanted


def block_states(tx: Tx, holder_timeout: float, dead_after: float, inode_ids: list[int] | None = None,
                 limit: int | None = None) -> list[BlockState]:
    where, params = "", [holder_timeout, dead_after]
    if inode_ids is not None:
        if not inode_ids:
            return []
        where = f"WHERE b.inode_id IN ({','.join(['%s'] * len(inode_ids))})"
        params += inode_ids
    sql = _BLOCK_STATES.format(where=where) + (f" LIMIT {int(limit)}" if limit else "")
    states = []
    for block_id, num_bytes, wanted, replicas in tx.query(sql, params):
        state = BlockState(block_id, num_bytes, max(int(wanted or 1), 1))
        for entry in (replicas or "").split(","):
            if not entry:
                continue
            location, corrupt, seen, live = (entry.split("|") + ["", "", ""])[:4]
            if corrupt == "1":
                state.corrupt.append(location)
            elif seen == "1":
                state.sound.append(location)
                if live == "1":
                    state.readable.append(location)
        states.append(state)
    return states


def block_health(tx: Tx, holders: Holders) -> tuple[int, int]:
    """(under-replicated, missing) blocks of every closed file, counted as fsck counts them."""
    states = block_states(tx, holders.holder_timeout, holders.dead_after)
    return sum(1 for s in states if s.under_replicated), sum(1 for s in states if s.missing)


class ReplicationMonitor:
    """One round of the elected namenode's replication duty (see the module docstring)."""

    def __init__(self, db: Database, holders: Holders, block_tokens: BlockTokens, max_copies_per_round: int = 100,
                 tls: dict | None = None):
        """``tls``: the namenode section (tls_cert_file set: peers are called over https and
        verified with its tls_ca_file)."""
        self.db, self.holders, self.block_tokens = db, holders, block_tokens
        self.max_copies = max_copies_per_round
        self.scheme = http_scheme(tls or {})
        self.http = VerifyingSession((tls or {}).get("tls_ca_file", ""))

    def forget_dead_holders(self) -> list[str]:
        def work(tx: Tx) -> list[str]:
            dead = [row[0] for row in tx.query(
                "SELECT address FROM hops.hdfs_block_holders WHERE last_seen < NOW(3) - INTERVAL %s SECOND FOR UPDATE",
                (self.holders.holder_timeout,))]
            for address in dead:
                tx.execute("DELETE FROM hops.hdfs_replicas WHERE location=%s", (address,))
                tx.execute("DELETE FROM hops.hdfs_invalidated_blocks WHERE location=%s", (address,))
                tx.execute("DELETE FROM hops.hdfs_block_holders WHERE address=%s", (address,))
            return dead
        dead = self.db.run(work)
        if dead:
            log.warning("block holders timed out; their replicas are forgotten", extra={"holders": dead})
        return dead

    def round(self) -> dict[str, int]:
        counts = {"holders_forgotten": len(self.forget_dead_holders()), "copied": 0, "failed": 0,
                  "dropped": 0}
        states = self.db.run(lambda tx: block_states(tx, self.holders.holder_timeout, self.holders.dead_after),
                             readonly=True)
        live = self.holders.live(fresh=True)
        for state in states:
            need = min(state.wanted, len(live)) - len(state.sound)
            if need > 0 and state.readable and counts["copied"] < self.max_copies:
                targets = [a for a in live if a not in state.sound]
                random.shuffle(targets)
                targets.sort(key=lambda a: a not in state.corrupt)   # replace corrupt copies in place first
                for target in targets:
                    if need <= 0:
                        break
                    if self.copy(state, target):
                        state.sound.append(target)
                        state.corrupt = [a for a in state.corrupt if a != target]
                        counts["copied"] += 1
                        need -= 1
                    else:
                        counts["failed"] += 1
            if len(state.sound) >= min(state.wanted, max(len(live), 1)):
                counts["dropped"] += self.drop(state)
        if counts["copied"] or counts["dropped"] or counts["failed"]:
            log.info("replication round", extra=counts)
        return counts

    def copy(self, state: BlockState, target: str) -> bool:
        """Stream the block from a live sound replica to ``target``; record the new replica."""
        for source in state.readable:
            try:
                with self.http.get(replica_url(self.scheme, source, state.block_id),
                                   params={"length": state.num_bytes}, stream=True, timeout=COPY_TIMEOUT,
                                   headers=self.block_tokens.headers(state.block_id, READ)) as got:
                    if got.status_code != 200:
                        continue
                    put = self.http.put(replica_url(self.scheme, target, state.block_id),
                                        params={"length": state.num_bytes},
                                        headers=self.block_tokens.headers(state.block_id, WRITE),
                                        data=got.iter_content(READ_CHUNK), timeout=COPY_TIMEOUT)
                if put.status_code not in (200, 201):
                    log.warning("replica copy refused", extra={"block_id": state.block_id, "target": target,
                                                               "status": put.status_code, "reply": put.text[:200]})
                    return False
            except requests.RequestException as exc:
                log.warning("replica copy failed", extra={"block_id": state.block_id, "source": source,
                                                          "target": target, "error": str(exc)})
                continue
            self.db.run(lambda tx: record_replica(tx, state.block_id, target))
            return True
        return False

    def drop(self, state: BlockState) -> int:
        """Forget corrupt replicas and those beyond the wanted count; their holders delete them."""
        excess = state.sound[state.wanted:] if len(state.sound) > state.wanted else []
        doomed = state.corrupt + excess
        if not doomed:
            return 0

        def work(tx: Tx) -> None:
            for location in doomed:
                tx.execute("DELETE FROM hops.hdfs_replicas WHERE block_id=%s AND location=%s",
                           (state.block_id, location))
                tx.execute("INSERT IGNORE INTO hops.hdfs_invalidated_blocks (block_id, location) VALUES (%s, %s)",
                           (state.block_id, location))
        self.db.run(work)
        return len(doomed)


def record_replica(tx: Tx, block_id: int, location: str) -> None:
    """``location`` now holds a sound replica; if the block was deleted meanwhile, its file
    there is invalidated instead (the holder deletes it)."""
    tx.execute("DELETE FROM hops.hdfs_invalidated_blocks WHERE block_id=%s AND location=%s", (block_id, location))
    if tx.query_one("SELECT 1 FROM hops.hdfs_block_infos WHERE block_id=%s LOCK IN SHARE MODE", (block_id,)):
        tx.execute("INSERT INTO hops.hdfs_replicas (block_id, location, corrupt) VALUES (%s, %s, 0)"
                   " ON DUPLICATE KEY UPDATE corrupt=0", (block_id, location))
    else:
        tx.execute("INSERT INTO hops.hdfs_invalidated_blocks (block_id, location) VALUES (%s, %s)",
                   (block_id, location))


def fsck_counts(tx: Tx, holders: Holders, inode_ids: list[int], sizes: int, directories: int,
                default_replication: int) -> dict:
    """HDFS fsck's summary over the files ``inode_ids`` (sizes and directory count given)."""
    states: list[BlockState] = []
    for start in range(0, len(inode_ids), 1000):
        states += block_states(tx, holders.holder_timeout, holders.dead_after, inode_ids[start:start + 1000])
    live = tx.query_one("SELECT COUNT(*) FROM hops.hdfs_block_holders WHERE last_seen >= NOW(3) - INTERVAL %s SECOND",
                        (holders.holder_timeout,))[0]
    missing = [s for s in states if s.missing]
    corrupt_blocks = [s for s in missing if s.corrupt]
    replicas = sum(len(s.sound) for s in states)
    return {
        "status": "CORRUPT" if missing else "HEALTHY",
        "dataNodes": live, "totalSize": sizes, "totalFiles": len(inode_ids), "totalDirs": directories,
        "totalBlocks": len(states),
        "minimallyReplicatedBlocks": len(states) - len(missing),
        "underReplicatedBlocks": sum(1 for s in states if s.under_replicated),
        "overReplicatedBlocks": sum(1 for s in states if len(s.sound) > s.wanted),
        "corruptReplicas": sum(len(s.corrupt) for s in states),
        "corruptBlocks": len(corrupt_blocks), "missingBlocks": len(missing),
        "missingBlockIds": [s.block_id for s in missing][:100],
        "defaultReplication": default_replication,
        "averageBlockReplication": round(replicas / len(states), 3) if states else 0.0,
    }
