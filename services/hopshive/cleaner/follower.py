"""Following the MariaDB binlog from a GTID position (mysql-replication, pure Python).

``BinlogFollower.transactions`` yields once per committed transaction that touched a watched
table (hops.hdfs_inodes and the metastore's DBS/TBLS/PARTITIONS/IDXS/SDS), with the GTID
position *after* it and what its row events imply (``events.Touches``), and also on
heartbeats and unwatched transactions (with empty Touches) so the caller can save the
position, check its lease and stop.  The stream resumes by MariaDB GTID (``auto_position``
with ``is_mariadb``), never by file/offset: the GTID is the same on every node of a Galera
cluster (``wsrep_gtid_mode``, ``log_slave_updates``), so a new leader may read from any node.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Iterator

import pymysql
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.event import HeartbeatLogEvent, MariadbGtidEvent, QueryEvent, XidEvent
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

from .events import WATCHED_SCHEMAS, WATCHED_TABLES, Touches
from .exceptions import PositionLost
from .positions import GtidPosition

log = logging.getLogger(__name__)
ACTIONS = {DeleteRowsEvent: "delete", UpdateRowsEvent: "update", WriteRowsEvent: "write"}
# 1236: the server cannot send from the requested position (purged binlog, unknown GTID).
POSITION_ERRORS = {1236}


@dataclass
class Step:
    position: GtidPosition
    touches: Touches
    committed_at: float | None  # the transaction's commit time by the server's clock (s)
    heartbeat: bool = False


def connection_settings(database: dict, endpoint: dict) -> dict:
    settings = {"user": database["user"], "password": database.get("password", ""),
                "connect_timeout": int(database.get("connect_timeout", 5))}
    if endpoint.get("unix_socket"):
        settings["unix_socket"] = endpoint["unix_socket"]
    else:
        settings.update(host=endpoint["host"], port=int(endpoint["port"]))
    return settings


class BinlogFollower:
    def __init__(self, settings: dict, server_id: int, start: GtidPosition, heartbeat_seconds: float = 1.0):
        self.settings, self.server_id = settings, server_id
        self.position = GtidPosition(str(start))
        self.heartbeat_seconds = heartbeat_seconds
        self._stream: BinLogStreamReader | None = None

    def _open(self) -> BinLogStreamReader:
        return BinLogStreamReader(
            connection_settings=self.settings, server_id=self.server_id, blocking=True, is_mariadb=True,
            auto_position=str(self.position), resume_stream=True, slave_heartbeat=self.heartbeat_seconds,
            only_schemas=WATCHED_SCHEMAS, only_tables=WATCHED_TABLES,
            only_events=[MariadbGtidEvent, XidEvent, QueryEvent, HeartbeatLogEvent, *ACTIONS])

    def transactions(self, keep_going: Callable[[], bool]) -> Iterator[Step]:
        """Yield a Step per transaction (and per heartbeat) until ``keep_going()`` is false.

        Raises:
            PositionLost: the server no longer has the binlog at the stored position.
        """
        self._stream = self._open()
        touches, gtid, committed_at = Touches(), None, None
        try:
            while keep_going():
                try:
                    event = self._stream.fetchone()
                except pymysql.err.OperationalError as exc:
                    if exc.args and exc.args[0] in POSITION_ERRORS:
                        raise PositionLost(f"cannot resume the binlog at {self.position}: {exc.args[-1]}") from exc
                    raise
                except pymysql.err.InternalError as exc:
                    if exc.args and exc.args[0] in POSITION_ERRORS:
                        raise PositionLost(f"cannot resume the binlog at {self.position}: {exc.args[-1]}") from exc
                    raise
                if event is None:
                    continue
                if isinstance(event, HeartbeatLogEvent):
                    yield Step(GtidPosition(str(self.position)), Touches(), None, heartbeat=True)
                elif isinstance(event, MariadbGtidEvent):
                    touches, gtid, committed_at = Touches(), event.gtid, float(event.timestamp)
                elif type(event) in ACTIONS:
                    touches.add_rows(event.schema, event.table, ACTIONS[type(event)], event.rows)
                elif isinstance(event, XidEvent) or (
                        isinstance(event, QueryEvent) and event.query.strip().upper() not in ("BEGIN", "")):
                    # the end of a transaction (XID) or a statement logged on its own (DDL)
                    if gtid is not None:
                        self.position.advance(gtid)
                    yield Step(GtidPosition(str(self.position)), touches, committed_at)
                    touches, gtid, committed_at = Touches(), None, None
        finally:
            self.close()

    def close(self) -> None:
        if self._stream is not None:
            try:
                self._stream.close()
            except Exception:  # closing a broken stream: nothing left to do
                pass
            self._stream = None
