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
        # Read-only work runs on autocommit connections: no COMMIT round trip.
        self._pools: dict[bool, queue.LifoQueue] = {False: queue.LifoQueue(), True: queue.LifoQueue()}
        self._slots = threading.BoundedSemaphore(int(config.get("pool_size", 8)))

    def connect(self, autocommit: bool = False) -> Any:
        cfg = self.config
        kwargs = dict(user=cfg["user"], passwd=cfg.get("password", ""), charset="utf8mb4",
                      connect_timeout=int(cfg.get("connect_timeout", 5)), autocommit=autocommit)
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

    def _acquire(self, readonly: bool) -> Any:
        self._slots.acquire()
        try:
            try:
                return self._pools[readonly].get_nowait()
            except queue.Empty:
                pass
            try:  # keep at most pool_size connections open in all
                self._pools[not readonly].get_nowait().close()
            except queue.Empty:
                pass
            return self.connect(autocommit=readonly)
        except BaseException:
            self._slots.release()
            raise

    def _release(self, connection: Any, broken: bool, readonly: bool) -> None:
        if broken:
            try:
                connection.close()
            except Exception:
                pass
        else:
            self._pools[readonly].put(connection)
        self._slots.release()

    @contextmanager
    def transaction(self, readonly: bool = False) -> Iterator[Tx]:
        """Open a transaction; commit on success, roll back on any exception.  A
        ``readonly`` one runs each statement on its own (autocommit): for reads that need
        no snapshot across statements."""
        connection = self._acquire(readonly)
        broken = False
        try:
            tx = Tx(connection)
            try:
                yield tx
                if not readonly:
                    connection.commit()
            except BaseException as exc:
                broken = error_code(exc) in CONNECTION_LOST
                if not broken and not readonly:
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
            self._release(connection, broken, readonly)
        tx._run_after_commit()

    def run(self, work: Callable[[Tx], T], retries: int = 8, readonly: bool = False) -> T:
        """Run ``work(tx)`` in its own transaction, retrying deadlocks and lost connections."""
        for attempt in range(retries + 1):
            try:
                with self.transaction(readonly) as tx:
                    return work(tx)
            except DriverError as exc:
                code = error_code(exc)
                if attempt == retries or (code not in RETRYABLE and code not in CONNECTION_LOST):
                    raise
                log.debug("retrying transaction", extra={"code": code, "attempt": attempt})
                time.sleep(min(0.2, 0.005 * 2 ** attempt) * random.random())
        raise AssertionError("unreachable")

    def close(self) -> None:
        for pool in self._pools.values():
            while True:
                try:
                    pool.get_nowait().close()
                except queue.Empty:
                    break
