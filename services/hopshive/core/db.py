"""MariaDB access: a small connection pool and transactions that retry on deadlock.

Every namespace and metastore operation is one transaction.  ``Database.run`` executes a
function inside a fresh transaction and re-runs it when InnoDB (or Galera certification)
aborts it with a deadlock or lock-wait timeout, so callers write straight-line code.

On a Galera cluster the pool knows every node (``hosts``): new connections go to the node
that last worked, and to the next one when it is down or not ready (not Synced, or in a
non-primary component).  A transaction whose connection is lost before COMMIT is re-run on
another connection; one lost *during* COMMIT may or may not have been applied, so it is
never re-run: the caller gets CommitOutcomeUnknown.
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

from ..exceptions import HopsHiveError

log = logging.getLogger(__name__)
T = TypeVar("T")

RETRYABLE = {ER.LOCK_DEADLOCK, ER.LOCK_WAIT_TIMEOUT, 1180}  # 1180: Galera commit conflict
# The connection is gone, or its Galera node cannot serve (1047: not ready / non-primary).
CONNECTION_LOST = {2006, 2013, 2055, 4031, 1047}
CANNOT_CONNECT = {2002, 2003, 2005}
DriverError = MySQLdb.Error
IntegrityError = MySQLdb.IntegrityError


def error_code(exc: BaseException) -> int | None:
    """The MariaDB error number of a driver exception, if any."""
    args = getattr(exc, "args", ())
    return args[0] if args and isinstance(args[0], int) else None


class CommitOutcomeUnknown(HopsHiveError):
    """The connection was lost while COMMIT was in flight: the transaction may or may not
    have been applied.  Never retried blindly (it could apply twice)."""


class TransactionConflict(Exception):
    """Raised by work that lost a race to a transaction that committed first (a name it
    meant to insert was taken meanwhile): run() rolls it back and runs it again, as after a
    deadlock, and raises it only once its retries are spent."""


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

    def literal(self, value: str) -> str:
        """``value`` as an SQL string literal, escaped by the driver for this connection."""
        return self.connection.literal(value).decode("utf-8")

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


def endpoints(config: dict) -> list[dict]:
    """Where to connect, in order of preference: the unix socket, else every ``hosts`` entry
    ("host" or "host:port"), else ``host``/``port``."""
    if config.get("unix_socket"):
        return [{"unix_socket": config["unix_socket"]}]
    hosts = config.get("hosts") or [f"{config['host']}:{config['port']}"]
    found = []
    for entry in map(str, hosts):
        host, colon, port = entry.rpartition(":")
        found.append({"host": host, "port": int(port)} if colon else {"host": entry, "port": int(config["port"])})
    return found


class Database:
    """A pool of connections to one MariaDB server or the nodes of a Galera cluster."""

    def __init__(self, config: dict):
        self.config = config
        self.endpoints = endpoints(config)
        self._preferred = 0     # the endpoint that last accepted a connection
        # Read-only work runs on autocommit connections: no COMMIT round trip.
        self._pools: dict[bool, queue.LifoQueue] = {False: queue.LifoQueue(), True: queue.LifoQueue()}
        self._slots = threading.BoundedSemaphore(int(config.get("pool_size", 8)))

    def connect(self, autocommit: bool = False) -> Any:
        """A new connection to the first endpoint that accepts and is ready, starting with
        the one that last worked."""
        last_error: BaseException | None = None
        count = len(self.endpoints)
        for step in range(count):
            index = (self._preferred + step) % count
            try:
                connection = self._open(self.endpoints[index], autocommit)
            except DriverError as exc:
                if error_code(exc) not in CANNOT_CONNECT | CONNECTION_LOST:
                    raise
                last_error = exc
                log.warning("database endpoint unavailable", extra={"endpoint": self.endpoints[index],
                                                                     "error": str(exc)})
                continue
            self._preferred = index
            return connection
        raise last_error

    def _open(self, endpoint: dict, autocommit: bool) -> Any:
        cfg = self.config
        timeouts = {"read_timeout": int(cfg["read_timeout"])} if cfg.get("read_timeout") else {}
        connection = MySQLdb.connect(user=cfg["user"], passwd=cfg.get("password", ""), charset="utf8mb4",
                                     connect_timeout=int(cfg.get("connect_timeout", 5)), autocommit=autocommit,
                                     **endpoint, **timeouts)
        try:
            cursor = connection.cursor()
            cursor.execute("SELECT @@wsrep_on, (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS"
                           " WHERE VARIABLE_NAME='WSREP_READY')")
            galera, ready = cursor.fetchone()
            if galera and ready != "ON":    # a Galera node that cannot serve (yet)
                raise MySQLdb.OperationalError(1047, f"Galera node {endpoint} is not ready (wsrep_ready={ready})")
            cursor.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
            if cfg.get("wsrep_sync_wait"):
                cursor.execute("SET SESSION wsrep_sync_wait=1")
            cursor.close()
        except BaseException:
            connection.close()
            raise
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
                    try:
                        connection.commit()
                    except DriverError as exc:
                        if error_code(exc) not in CONNECTION_LOST:
                            raise
                        broken = True
                        raise CommitOutcomeUnknown(
                            "the database connection was lost while committing: the change may or may not "
                            "have been applied; check before retrying") from exc
            except BaseException as exc:
                broken = broken or error_code(exc) in CONNECTION_LOST
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
        """Run ``work(tx)`` in its own transaction, retrying deadlocks, lost connections and
        lost races (TransactionConflict)."""
        for attempt in range(retries + 1):
            try:
                with self.transaction(readonly) as tx:
                    return work(tx)
            except TransactionConflict:
                if attempt == retries:
                    raise
                log.debug("re-running a transaction that lost a race", extra={"attempt": attempt})
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
