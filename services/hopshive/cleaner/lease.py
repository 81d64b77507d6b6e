"""Leader election by a replicated lease row, with fencing.

``GET_LOCK`` is node-local on Galera (facts.md), so the leader is whoever holds the row
``metastore.CLEANER_LEASE[name]``: a conditional UPDATE takes it when it has expired (or is
ours already) and pushes its expiry ``lease_seconds`` into the future, by the database's
clock.  Two guards keep a deposed leader from acting:

* **local deadline**: the lease is trusted only until ``lease_seconds - margin`` after the
  renewal *was sent* (monotonic clock), so an instance that cannot renew stops before the
  database lets anyone else take over;
* **fencing token**: every cleanup transaction re-reads the row (``fence``) and rolls back
  unless it still names this owner and epoch and has not expired; ``EPOCH`` grows with
  every change of owner.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Callable

from ..core.db import Database, Tx
from .exceptions import Fenced

log = logging.getLogger(__name__)
MS = "metastore"


@dataclass(frozen=True)
class Holder:
    owner: str | None
    epoch: int
    remaining_seconds: float  # <= 0 when expired


class Lease:
    def __init__(self, db: Database, name: str, owner: str, lease_seconds: float, margin_seconds: float,
                 clock: Callable[[], float] = time.monotonic):
        if not 0 < margin_seconds < lease_seconds:
            raise ValueError("the lease margin must be positive and shorter than the lease")
        self.db, self.name, self.owner = db, name, owner
        self.lease_seconds, self.margin_seconds = lease_seconds, margin_seconds
        self._clock = clock
        self.epoch: int | None = None
        self._valid_until = 0.0

    def acquire_or_renew(self) -> bool:
        """Try to take or extend the lease; True when this instance holds it now."""
        sent = self._clock()
        micros = int(self.lease_seconds * 1_000_000)

        def work(tx: Tx) -> int | None:
            tx.execute(f"INSERT IGNORE INTO {MS}.CLEANER_LEASE (NAME, EXPIRES) VALUES (%s, NOW(3) - INTERVAL 1 DAY)",
                       (self.name,))
            changed = tx.execute(
                f"UPDATE {MS}.CLEANER_LEASE SET EPOCH = IF(OWNER <=> %(me)s, EPOCH, EPOCH + 1),"
                f" ACQUIRED_AT = IF(OWNER <=> %(me)s, ACQUIRED_AT, NOW(3)), OWNER = %(me)s,"
                f" EXPIRES = NOW(3) + INTERVAL {micros} MICROSECOND"
                f" WHERE NAME = %(name)s AND (OWNER <=> %(me)s OR EXPIRES < NOW(3))",
                {"me": self.owner, "name": self.name})
            if not changed:
                return None
            return tx.query_one(f"SELECT EPOCH FROM {MS}.CLEANER_LEASE WHERE NAME=%s", (self.name,))[0]
        epoch = self.db.run(work, retries=2)
        if epoch is None:
            if self.epoch is not None:
                log.warning("lost the lease", extra={"lease": self.name, "owner": self.owner})
            self.epoch, self._valid_until = None, 0.0
            return False
        if epoch != self.epoch:
            log.info("took the lease", extra={"lease": self.name, "owner": self.owner, "epoch": epoch})
        self.epoch = epoch
        self._valid_until = sent + self.lease_seconds - self.margin_seconds
        return True

    def valid(self) -> bool:
        """Whether this instance may act now (it holds the lease, with margin to spare)."""
        return self.epoch is not None and self._clock() < self._valid_until

    def expire_locally(self) -> None:
        """Stop trusting the lease at once (renewal failed, or shutting down)."""
        self._valid_until = 0.0

    def fence(self, tx: Tx) -> int:
        """Inside a cleanup transaction: raise Fenced unless this instance still holds the
        lease (by the database's clock and the epoch); returns the epoch."""
        epoch = self.epoch
        if epoch is None or not self.valid() or not tx.query_one(
                f"SELECT 1 FROM {MS}.CLEANER_LEASE WHERE NAME=%s AND OWNER=%s AND EPOCH=%s AND EXPIRES > NOW(3)",
                (self.name, self.owner, epoch)):
            raise Fenced(f"{self.owner} no longer holds the cleaner lease {self.name!r}")
        return epoch

    def release(self) -> None:
        """Give the lease up now, so a follower takes over without waiting for expiry."""
        self.expire_locally()
        if self.epoch is None:
            return
        self.db.run(lambda tx: tx.execute(
            f"UPDATE {MS}.CLEANER_LEASE SET EXPIRES = NOW(3) - INTERVAL 1 SECOND WHERE NAME=%s AND OWNER=%s",
            (self.name, self.owner)), retries=2)
        log.info("released the lease", extra={"lease": self.name, "owner": self.owner, "epoch": self.epoch})
        self.epoch = None


def holder(tx: Tx, name: str) -> Holder | None:
    row = tx.query_one(f"SELECT OWNER, EPOCH, TIMESTAMPDIFF(MICROSECOND, NOW(3), EXPIRES) / 1e6"
                       f" FROM {MS}.CLEANER_LEASE WHERE NAME=%s", (name,))
    return Holder(row[0], int(row[1]), float(row[2])) if row else None
