"""Hive's lock manager on HIVE_LOCKS (what pyiceberg's HiveCatalog takes around a commit).

Lock operations serialise on the NEXT_LOCK_ID row, which also numbers locks in time order
(Galera-safe).  A lock is all of its components; it is ACQUIRED when no earlier lock on an
overlapping object (a database covers its tables, a table its partitions) has a conflicting
type, else WAITING until ``check_lock`` finds the way clear.  Locks not heartbeated within
the timeout are removed, so a dead client cannot block a table for ever."""

from __future__ import annotations

import time

from ...api import api
from ...exceptions import InvalidInput, NoSuchLock

STATE = {"a": api.LockState.ACQUIRED, "w": api.LockState.WAITING}
TYPE_CODE = {api.LockType.EXCLUSIVE: "e", api.LockType.SHARED_READ: "r", api.LockType.SHARED_WRITE: "w"}
TYPE_OF = {code: kind for kind, code in TYPE_CODE.items()}
CONFLICTS = {"e": {"e", "w", "r"}, "w": {"e", "w"}, "r": {"e"}}
_COLUMNS = ("HL_LOCK_EXT_ID, HL_LOCK_INT_ID, HL_TXNID, HL_DB, HL_TABLE, HL_PARTITION, HL_LOCK_STATE, HL_LOCK_TYPE,"
            " HL_LAST_HEARTBEAT, HL_ACQUIRED_AT, HL_USER, HL_HOST, HL_HEARTBEAT_COUNT, HL_AGENT_INFO,"
            " HL_BLOCKEDBY_EXT_ID, HL_BLOCKEDBY_INT_ID")


def _now_ms() -> int:
    return int(time.time() * 1000)


def _overlaps(a: tuple, b: tuple) -> bool:
    """(db, table, partition) objects overlap when one contains the other."""
    return a[0] == b[0] and (a[1] is None or b[1] is None or a[1] == b[1]) and \
        (a[2] is None or b[2] is None or a[2] == b[2])


class LockOps:
    def _serialise(self, tx, timeout: float) -> int:
        next_id = tx.query_one("SELECT NL_NEXT FROM metastore.NEXT_LOCK_ID WHERE ID=1 FOR UPDATE")[0]
        tx.execute("DELETE FROM metastore.HIVE_LOCKS WHERE HL_LAST_HEARTBEAT < %s", (_now_ms() - int(timeout * 1000),))
        return next_id

    def _try_acquire(self, tx, ext_id: int):
        mine = tx.query("SELECT HL_LOCK_INT_ID, HL_DB, HL_TABLE, HL_PARTITION, HL_LOCK_TYPE FROM metastore.HIVE_LOCKS"
                        " WHERE HL_LOCK_EXT_ID=%s", (ext_id,))
        if not mine:
            raise NoSuchLock(f"lock {ext_id} does not exist (released, or expired for lack of heartbeats)")
        earlier = tx.query("SELECT HL_LOCK_EXT_ID, HL_LOCK_INT_ID, HL_DB, HL_TABLE, HL_PARTITION, HL_LOCK_TYPE"
                           " FROM metastore.HIVE_LOCKS WHERE HL_LOCK_EXT_ID < %s AND HL_DB IN ({})".format(
                               ",".join(["%s"] * len({m[1] for m in mine}))), (ext_id, *{m[1] for m in mine}))
        for _, db, table, part, kind in mine:
            for other_ext, other_int, o_db, o_table, o_part, o_kind in earlier:
                if _overlaps((db, table, part), (o_db, o_table, o_part)) and o_kind in CONFLICTS[kind]:
                    tx.execute("UPDATE metastore.HIVE_LOCKS SET HL_BLOCKEDBY_EXT_ID=%s, HL_BLOCKEDBY_INT_ID=%s"
                               " WHERE HL_LOCK_EXT_ID=%s", (other_ext, other_int, ext_id))
                    return api.LockResponse(ext_id, api.LockState.WAITING)
        tx.execute("UPDATE metastore.HIVE_LOCKS SET HL_LOCK_STATE='a', HL_ACQUIRED_AT=%s, HL_BLOCKEDBY_EXT_ID=NULL,"
                   " HL_BLOCKEDBY_INT_ID=NULL WHERE HL_LOCK_EXT_ID=%s AND HL_LOCK_STATE='w'", (_now_ms(), ext_id))
        return api.LockResponse(ext_id, api.LockState.ACQUIRED)

    def lock(self, request, timeout: float):
        components = request.component or []
        if not components:
            raise InvalidInput("a lock request needs at least one component")

        def work(tx):
            ext_id = self._serialise(tx, timeout)
            tx.execute("UPDATE metastore.NEXT_LOCK_ID SET NL_NEXT=%s WHERE ID=1", (ext_id + 1,))
            now = _now_ms()
            rows = []
            for i, c in enumerate(components, start=1):
                if c.type not in TYPE_CODE or not c.dbname:
                    raise InvalidInput(f"invalid lock component {c}")
                table = (c.tablename or None) if c.level != api.LockLevel.DB else None
                part = (c.partitionname or None) if c.level == api.LockLevel.PARTITION else None
                rows.append((ext_id, i, request.txnid or None, c.dbname.lower(), table and table.lower(), part, "w",
                             TYPE_CODE[c.type], now, None, request.user or "", request.hostname or "", 0,
                             request.agentInfo, None, None))
            tx.executemany(f"INSERT INTO metastore.HIVE_LOCKS ({_COLUMNS}) VALUES ({','.join(['%s'] * 16)})", rows)
            return self._try_acquire(tx, ext_id)
        return self._write(work)

    def check_lock(self, lock_id: int, timeout: float):
        def work(tx):
            self._serialise(tx, timeout)
            tx.execute("UPDATE metastore.HIVE_LOCKS SET HL_LAST_HEARTBEAT=%s WHERE HL_LOCK_EXT_ID=%s",
                       (_now_ms(), lock_id))
            return self._try_acquire(tx, lock_id)
        return self._write(work)

    def unlock(self, lock_id: int) -> None:
        def work(tx):
            if not tx.execute("DELETE FROM metastore.HIVE_LOCKS WHERE HL_LOCK_EXT_ID=%s", (lock_id,)):
                raise NoSuchLock(f"lock {lock_id} does not exist")
        self._write(work)

    def heartbeat(self, lock_id: int) -> None:
        def work(tx):
            if not tx.query_one("SELECT 1 FROM metastore.HIVE_LOCKS WHERE HL_LOCK_EXT_ID=%s LIMIT 1", (lock_id,)):
                raise NoSuchLock(f"lock {lock_id} does not exist (released, or expired for lack of heartbeats)")
            tx.execute("UPDATE metastore.HIVE_LOCKS SET HL_LAST_HEARTBEAT=%s,"
                       " HL_HEARTBEAT_COUNT=COALESCE(HL_HEARTBEAT_COUNT, 0)+1 WHERE HL_LOCK_EXT_ID=%s",
                       (_now_ms(), lock_id))
        self._write(work)

    def show_locks(self, db_name: str | None = None, table_name: str | None = None) -> list:
        def work(tx):
            sql, params = f"SELECT {_COLUMNS} FROM metastore.HIVE_LOCKS", []
            if db_name:
                sql, params = sql + " WHERE HL_DB=%s", [db_name.lower()]
                if table_name:
                    sql, params = sql + " AND HL_TABLE=%s", params + [table_name.lower()]
            rows = tx.query(sql + " ORDER BY HL_LOCK_EXT_ID, HL_LOCK_INT_ID", params)
            return [api.ShowLocksResponseElement(
                lockid=r[0], lockIdInternal=r[1], txnid=r[2] or 0, dbname=r[3], tablename=r[4], partname=r[5],
                state=STATE.get(r[6], api.LockState.WAITING), type=TYPE_OF.get(r[7]), lastheartbeat=r[8],
                acquiredat=r[9], user=r[10], hostname=r[11], heartbeatCount=r[12] or 0, agentInfo=r[13],
                blockedByExtId=r[14], blockedByIntId=r[15]) for r in rows]
        return self._read(work)
