"""Short reads on the event loop's own thread.

A GETFILESTATUS is one statement of a few hundred microseconds; handing it to a worker
thread and back cost about as much CPU again (the executor's queue and wake-ups, the GIL
passing between threads).  So each worker keeps one autocommit connection that its event
loop uses directly for reads that take no locks (a consistent read under READ COMMITTED
never waits for a row lock): the loop is blocked for the statement, as it is for any CPU
work.  The connection is opened off the loop; while it is missing, or after it failed or
timed out (``read_timeout`` bounds how long the loop can be held by a database that stops
answering), reads take the thread pool like everything else.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable, TypeVar

from ..core.db import CANNOT_CONNECT, CONNECTION_LOST, Database, DriverError, Tx, error_code

log = logging.getLogger(__name__)
T = TypeVar("T")
READ_TIMEOUT_S = 2


class LoopReads:
    def __init__(self, config: dict):
        self.db = Database(dict(config, read_timeout=READ_TIMEOUT_S))
        self.connection: Any = None
        self._connecting: asyncio.Future | None = None

    async def run(self, work: Callable[[Tx], T], fallback: Callable[[], Awaitable[T]]) -> T:
        """``work`` on the loop's connection, or ``fallback()`` when there is none."""
        if self.connection is None:
            self._connect()
            return await fallback()
        tx = Tx(self.connection)
        try:
            return work(tx)
        except DriverError as exc:
            if error_code(exc) not in CONNECTION_LOST | CANNOT_CONNECT:
                raise
            error = exc
        finally:
            try:
                tx.cursor.close()
            except DriverError:     # the connection is gone: nothing to discard
                pass
        log.warning("loop connection lost; reads go through the thread pool until it is back",
                    extra={"error": str(error)})
        self.close()
        self._connect()
        return await fallback()

    def _connect(self) -> None:
        if self._connecting is not None:
            return

        def opened(future: asyncio.Future) -> None:
            self._connecting = None
            if future.exception() is not None:
                log.warning("loop connection could not be opened", extra={"error": str(future.exception())})
            else:
                self.connection = future.result()
        self._connecting = asyncio.get_running_loop().run_in_executor(None, self.db.connect, True)
        self._connecting.add_done_callback(opened)

    def close(self) -> None:
        if self.connection is not None:
            try:
                self.connection.close()
            except DriverError:
                pass
            self.connection = None
