"""MariaDB access: a small connection pool and transactions that retry on deadlock.

Every namespace and metastore operation is one transaction.  ``Database.run`` executes a
function inside a fresh transaction and re-runs it when InnoDB (or Galera certification)
aborts it with a deadlock or lock-wait timeout, so callers write straight-line code.
"""

from __future__ import annotations

import logging
import queue
import random
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence, TypeVar

import MySQLdb
from MySQLdb.constants import ER

log = logging.getLogger(__name__)
T = TypeVar("T")

RETRYABLE = {ER.LOCK_DEADLOCK, ER.LOCK_WAIT_TIMEOUT, 1180}  # 1180: Galera commit conflict
CONNECTION_LOST = {2006, 2013, 2055, 4031}
DriverError = MySQLdb.Error
IntegrityError = MySQLdb.IntegrityError


def error_code(exc: BaseException) -> int | None:
    """The MariaDB error number of a driver exception, if any."""
    args = getattr(exc, "args", ())
    return args[0] if args and isinstance(args[0], int) else None


class Tx:
    """One open transaction: run statements, and queue work to do only after commit."""

    def __init__(self, connection: Any):
        self.connection = connection
        self.cursor = connection.cursor()
        self._after_commit: list[Callable[[], None]] = []

    def execute(self, sql: str, params: Sequence | dict | None = None) -> int:
        """Run one statement; returns the affected row count."""
        return self.cursor.execute(sql, params)

    def executemany(self, sql: str, rows: Sequence[Sequence]) -> int:
        return self.cursor.executemany(sql, rows) if rows else 0

    def query(self, sql: str, params: Sequence | dict | None = None) -> list[tuple]:
        self.cursor.execute(sql, params)
        return list(self.cursor.fetchall())

    def query_one(self, sql: str, params: Sequence | dict | None = None) -> tuple | None:
        self.cursor.execute(sql, params)
        return self.cursor.fetchone()

    @property
    def lastrowid(self) -> int:
        return self.cursor.lastrowid

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once this transaction has committed (never if it rolls back)."""
        self._after_commit.append(callback)

    def _run_after_commit(self) -> None:
        for callback in self._after_commit:
            try:
                callback()
            except Exception:  # the transaction is durable; a failed side job is only logged
                log.exception("after-commit job failed")


class Database:
    """A pool of connections to one MariaDB server (or Galera node)."""

    def __init__(self, config: dict):
        self.config = config
        self._pool: queue.LifoQueue = queue.LifoQueue()
        self._size = int(config.get("pool_size", 8))
        self._created = 0
        self._lock = threading.Lock()

    def connect(self) -> Any:
        cfg = self.config
        kwargs = dict(user=cfg["user"], passwd=cfg.get("password", ""), charset="utf8mb4",
                      connect_timeout=int(cfg.get("connect_timeout", 5)), autocommit=False)
        if cfg.get("unix_socket"):
            kwargs["unix_socket"] = cfg["unix_socket"]
        else:
            kwargs.update(host=cfg["host"], port=int(cfg["port"]))
        connection = MySQLdb.connect(**kwargs)
        cursor = connection.cursor()
        cursor.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
        if cfg.get("wsrep_sync_wait"):
            cursor.execute("SET SESSION wsrep_sync_wait=1")
        cursor.close()
        return connection

    def _acquire(self) -> Any:
        try:
            return self._pool.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            grow = self._created < self._size
            if grow:
                self._created += 1
        if grow:
            try:
                return self.connect()
            except Exception:
                with self._lock:
                    self._created -= 1
                raise
        return self._pool.get()

    def _release(self, connection: Any, broken: bool) -> None:
        if broken:
            try:
                connection.close()
            except Exception:
                pass
            with self._lock:
                self._created -= 1
        else:
            self._pool.put(connection)

    @contextmanager
    def transaction(self) -> Iterator[Tx]:
        """Open a transaction; commit on success, roll back on any exception."""
        connection = self._acquire()
        broken = False
        try:
            tx = Tx(connection)
            try:
                yield tx
                connection.commit()
            except BaseException as exc:
                broken = error_code(exc) in CONNECTION_LOST
                if not broken:
                    try:
                        connection.rollback()
                    except DriverError:
                        broken = True
                raise
            finally:
                tx.cursor.close()
        except DriverError as exc:
            broken = broken or error_code(exc) in CONNECTION_LOST
            raise
        finally:
            self._release(connection, broken)
        tx._run_after_commit()

    def run(self, work: Callable[[Tx], T], retries: int = 8) -> T:
        """Run ``work(tx)`` in its own transaction, retrying deadlocks and lost connections."""
        for attempt in range(retries + 1):
            try:
                with self.transaction() as tx:
                    return work(tx)
            except DriverError as exc:
                code = error_code(exc)
                if attempt == retries or (code not in RETRYABLE and code not in CONNECTION_LOST):
                    raise
                log.debug("retrying transaction", extra={"code": code, "attempt": attempt})
                time.sleep(min(0.2, 0.005 * 2 ** attempt) * random.random())
        raise AssertionError("unreachable")

    def close(self) -> None:
        while True:
            try:
                self._pool.get_nowait().close()
            except queue.Empty:
                return
