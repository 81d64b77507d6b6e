"""Sessions and operations: what a client's handles stand for.

An operation runs in a thread of its own: it opens a connection to its session's engine,
sends the request and waits for the schema (the statement has run, or its first job is
running for a query); rows are then pulled batch by batch as the client fetches, so a
slow client of a huge result holds one partition in the engine and one batch here.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Callable

from .auth import Identity
from .engines import Engine, Engines
from .exceptions import Cancelled, EngineUnavailable, NoSuchHandle, Server2Error, StatementFailed
from .progress import StageProgress
from .rowsets import list_columns
from .wire import encode_columns

INITIALIZED, RUNNING, FINISHED, CANCELED, CLOSED, ERROR = 0, 1, 2, 3, 4, 5


@dataclass
class Session:
    id: bytes
    secret: bytes
    identity: Identity
    protocol: int
    user: str | None = None
    database: str | None = None
    engine: Engine | None = None
    last_used: float = field(default_factory=time.monotonic)
    operations: dict = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def touch(self) -> None:
        self.last_used = time.monotonic()


class Operation:
    def __init__(self, session: Session, kind: str, args: tuple, description: str,
                 on_done: Callable[["Operation"], None] | None = None):
        """``on_done``: called when the engine's answer is in (or the run failed), before
        anyone waiting on ``done`` wakes."""
        self.on_done = on_done
        self.id = uuid.uuid4().bytes
        self.secret = uuid.uuid4().bytes
        self.session = session
        self.request = (kind, session.id.hex(), self.id.hex(), *args)
        self.description = description
        self.state = INITIALIZED
        self.error: Server2Error | None = None
        self.schema: list | None = None
        self.conn: Connection | None = None
        self.exhausted = False
        self.rows: list | None = None      # rows known without an engine (listings)
        self.logs = [f"server2: running as {session.user}: {description}"]
        self.logs_sent = 0
        self.started = int(time.time() * 1000)
        self.completed = 0
        self.done = threading.Event()
        self.lock = threading.Lock()
        self.cancel_requested = False

    @property
    def key(self) -> str:
        return self.id.hex()

    def start(self) -> None:
        self.state = RUNNING
        threading.Thread(target=self._run, daemon=True, name=f"op-{self.key[:8]}").start()

    def _run(self) -> None:
        try:
            conn = self.session.engine.connect()
            conn.send(self.request)
            reply = conn.recv()
            if reply[0] != "ok":
                conn.close()
                raise StatementFailed(reply[2], reply[1])
            with self.lock:
                self.conn, self.schema = conn, reply[1]
                if self.cancel_requested:
                    raise Cancelled("the operation was cancelled")
                self.state = FINISHED
            self.logs.append(f"server2: {len(self.schema)} column(s)")
        except Server2Error as exc:
            self._fail(exc)
        except (EOFError, OSError) as exc:
            self._fail(Cancelled("the operation was cancelled") if self.cancel_requested
                       else EngineUnavailable(f"the Spark engine connection broke: {exc}"))
        finally:
            self.completed = int(time.time() * 1000)
            if self.on_done is not None:
                self.on_done(self)
            self.done.set()

    def _fail(self, exc: Server2Error) -> None:
        with self.lock:
            if self.cancel_requested:
                exc = Cancelled("the operation was cancelled")
            self.error = exc
            self.state = CANCELED if isinstance(exc, Cancelled) else ERROR
            self.logs.append(f"server2: {exc}")
        self.close_connection()

    def fetch(self, count: int) -> tuple[bytes, int]:
        """The next ``count`` rows as encoded TRowSet columns (wire.py), and how many there
        are; raises the operation's error."""
        self.done.wait()
        if self.error is not None:
            raise self.error
        with self.lock:
            if self.exhausted or self.conn is None:
                return encode_columns(list_columns(self.schema, [[] for _ in self.schema])), 0
            try:
                self.conn.send(("fetch", count))
                reply = self.conn.recv()
            except (EOFError, OSError) as exc:
                raise EngineUnavailable(f"the Spark engine connection broke: {exc}") from exc
            if reply[0] != "ok":
                raise StatementFailed(reply[2], reply[1])
            columns, rows = reply[1]
            if rows < count:
                self.exhausted = True
        if self.exhausted:
            self.close_connection()
        return columns, rows

    def progress(self) -> list[StageProgress] | None:
        """The stages of this operation's Spark jobs; [] for an operation with no engine
        work (listings), None when the engine cannot be asked."""
        if self.rows is not None:
            return []
        try:
            conn = self.session.engine.connect()
            try:
                conn.send(("progress", self.key))
                reply = conn.recv()
            finally:
                conn.close()
        except (Server2Error, EOFError, OSError):
            return None
        return [StageProgress(*stage) for stage in reply[1]] if reply[0] == "ok" else None

    def cancel(self, engines_connect) -> None:
        with self.lock:
            self.cancel_requested = True
            if self.state == RUNNING:
                self.state = CANCELED
        try:
            conn = engines_connect()
            conn.send(("cancel", self.key))
            conn.recv()
            conn.close()
        except (Server2Error, EOFError, OSError):
            pass

    def close_connection(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            try:
                conn.send(("close",))
            except (EOFError, OSError):
                pass
            conn.close()


class Registry:
    """Every open session and operation, by handle id."""

    def __init__(self, engines: Engines):
        self.engines = engines
        self.sessions: dict[bytes, Session] = {}
        self.operations: dict[bytes, Operation] = {}
        self.lock = threading.Lock()

    def add_session(self, session: Session) -> None:
        with self.lock:
            self.sessions[session.id] = session

    def session(self, handle_id: bytes) -> Session:
        session = self.sessions.get(handle_id)
        if session is None:
            raise NoSuchHandle("invalid or closed session handle")
        session.touch()
        return session

    def add_operation(self, operation: Operation) -> None:
        with self.lock:
            self.operations[operation.id] = operation
            operation.session.operations[operation.id] = operation

    def operation(self, handle_id: bytes) -> Operation:
        operation = self.operations.get(handle_id)
        if operation is None:
            raise NoSuchHandle("invalid or closed operation handle")
        operation.session.touch()
        return operation

    def close_operation(self, operation: Operation) -> None:
        with self.lock:
            self.operations.pop(operation.id, None)
            operation.session.operations.pop(operation.id, None)
        if operation.state == RUNNING:
            operation.cancel(operation.session.engine.connect)
        operation.close_connection()
        operation.state = CLOSED

    def close_session(self, session: Session) -> None:
        with self.lock:
            self.sessions.pop(session.id, None)
        for operation in list(session.operations.values()):
            self.close_operation(operation)
        if session.engine is not None:
            try:
                conn = session.engine.connect()
                conn.send(("close_session", session.id.hex()))
                conn.recv()
                conn.close()
            except (Server2Error, EOFError, OSError):
                pass
            self.engines.release(session.engine)
            session.engine = None

    def idle_sessions(self, timeout: float) -> list[Session]:
        now = time.monotonic()
        with self.lock:
            return [s for s in self.sessions.values() if now - s.last_used > timeout
                    and not any(o.state == RUNNING for o in s.operations.values())]
