"""Inode and block ids, reserved from the database in ranges (as HopsFS does) so that a
create costs no extra round trip and several namenodes never hand out the same id."""

from __future__ import annotations

import threading

from ..core.db import Database


class IdAllocator:
    def __init__(self, db: Database, name: str, batch: int = 1000):
        self.db, self.name, self.batch = db, name, batch
        self._next = self._end = 0
        self._lock = threading.Lock()

    def _reserve(self, tx) -> int:
        tx.execute("UPDATE hops.hdfs_variables SET value = LAST_INSERT_ID(value + %s) WHERE name=%s",
                   (self.batch, self.name))
        return tx.query_one("SELECT LAST_INSERT_ID()")[0]

    def next(self) -> int:
        with self._lock:
            if self._next >= self._end:
                end = self.db.run(self._reserve)
                self._next, self._end = end - self.batch + 1, end + 1
            value = self._next
            self._next += 1
            return value
