"""The HBase store: the metastore's objects in HBase tables, through happybase (HBase's
Thrift1 API), after Hive's HBaseStore (HIVE-9452).  Selected with ``metastore.backend:
hbase``; ``hbase.host``/``hbase.port`` name the Thrift server (Apache HBase's, or ours:
``hopshive-hbase``).

Layout (every table has one column family ``i``; ``<x>`` is ``rowkey.encode_string(x)``,
objects are Thrift-binary encodings of the Hive API structs):

==============  ===============================  ==========================================
HBase table     row key                          columns
==============  ===============================  ==========================================
``dbs``         ``<db>``                         ``i:obj`` Database
``tbls``        ``<db><table>``                  ``i:obj`` Table without its SD's shared part,
                                                 ``i:sd`` hash of that part, ``i:loc``
``parts``       ``rowkey.row_key(db, table,      ``i:obj`` Partition (values included, SD
                typed values)``                  removed), ``i:sd``, ``i:loc``, ``i:name``
``sds``         sha256 of the shared SD          ``i:obj`` StorageDescriptor without location,
                                                 ``i:refs`` reference counter (64-bit)
``funcs``       ``<db><function>``               ``i:obj`` Function
``stats``       ``<db><table><partition or ''>`` ``c:<column>`` ColumnStatisticsObj per column
==============  ===============================  ==========================================

Storage descriptors are deduplicated by content (Hive's HBaseStore idea): the SD without its
location is hashed and stored once with a reference count; tables and partitions keep their
location next to the hash.  A partition row key is ``db + table + typed values`` (see
``hbase.rowkey``): a table's partitions are one contiguous key range, in typed order, and
partition filters run as the Gets and Scans of ``hbase.planner`` (server-side filters for
later columns; the residual, LIKE, evaluated here).

Locks stay on the metastore's database (HIVE_LOCKS), as Hive's HBaseStore left locks and
transactions to its RDBMS TxnHandler.

Consistency (HBase has no foreign keys and no transactions across rows).  The order of
operations makes sure a reader never sees a live object's rows name a missing directory,
and a crash leaves only what fsck finds:

* create: the directory first (its own transaction, committed), then the rows;
* drop: the rows first, then the directory;
* rename/move (``alter_table``, ``rename_partition``): the directory move runs in a database
  transaction that stays open while the rows naming the new place are written, and commits
  after them (``_moving``); a failed HBase write rolls the move back;
* within HBase, children are written after their parents and deleted before them (SD row
  before the partition that references it; a table's partitions and statistics before the
  table row).

A crash in between leaves only unreferenced rows (an SD with a stale count, statistics or
partitions of a table row that is gone), a directory without metadata, or -- a crash after
a rename's rows and before its commit -- rows naming a directory that does not exist.
``hopshive-metatool fsck-hbase --repair`` (``hbase/fsck.py``) finds and removes all of
those; the last kind is also what a directory deleted or moved behind the metastore's back
leaves (no inode foreign key here): the cleaner (``hopshive.cleaner.hbase``) follows every
directory delete and move in the binlog and drops the metadata at or below it whose
directory is gone, re-reading row and directory just before (a rename in flight has
rewritten its rows before its directory move becomes visible), and its sweeps run the same
check over everything.  Writers of one table take turns within a process; writers in
different processes or instances are not serialised (no cross-row transactions).
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import logging
import threading
import time
from collections import defaultdict
from typing import Mapping, Sequence

import happybase
from thrift.protocol import TBinaryProtocol
from thriftpy2.transport import TTransportException
from thrift.TSerialization import deserialize, serialize

from ...core.db import Database
from ..api import CATALOG, api
from ..exceptions import AlreadyExists, InvalidInput, InvalidObject, InvalidOperation, MetastoreError, NoSuchObject
from ..filter import FilterError, KeyColumn, compile_predicate, compile_value_sets
from ..filter.keytypes import key_type
from ..locations import Locations, replace_prefix
from ..names import make_part_name, parse_part_name
from ..app import HBASE_DEFAULTS
from ..store import Capabilities, RawStore
from .hbase import planner, rowkey
from .mysql.base import StoreBase
from .mysql.locks import LockOps
from .mysql.tables import is_managed

log = logging.getLogger("hopshive.metastore.hbase")

TABLES = {"dbs": "i", "tbls": "i", "parts": "i", "sds": "i", "funcs": "i", "stats": "c"}
_PROTOCOL = TBinaryProtocol.TBinaryProtocolAcceleratedFactory()
OBJ, SD, LOC, NAME, REFS = b"i:obj", b"i:sd", b"i:loc", b"i:name", b"i:refs"


def _encode(obj) -> bytes:
    return serialize(obj, _PROTOCOL)


def _decode(cls, data: bytes):
    return deserialize(cls(), data, _PROTOCOL)


def _shallow(struct):
    """A shallow copy of a Thrift struct (copy.copy's generic path costs ~10 us)."""
    twin = object.__new__(type(struct))
    twin.__dict__.update(struct.__dict__)
    return twin


def _s(text: str) -> bytes:
    return rowkey.encode_string(text)


def _now() -> int:
    return int(time.time())


class HBaseStore(LockOps, StoreBase, RawStore):
    capabilities = Capabilities(atomic_directories=False, inode_foreign_keys=False)

    def __init__(self, db: Database, config: Mapping | None = None):
        StoreBase.__init__(self, db)
        self.config = dict(HBASE_DEFAULTS, **(config or {}))
        self.pool = happybase.ConnectionPool(int(self.config["pool_size"]), host=self.config["host"],
                                             port=int(self.config["port"]),
                                             timeout=int(float(self.config["timeout"]) * 1000))
        self.names = {t: (self.config["table_prefix"] + t).encode() for t in TABLES}
        self._table_locks: defaultdict = defaultdict(threading.RLock)
        self._last_used: dict[int, float] = {}   # id(pooled connection) -> when its last work ended
        with self.pool.connection() as conn:
            existing = set(conn.tables())
            for table, family in TABLES.items():
                if self.names[table] not in existing:
                    try:
                        conn.create_table(self.names[table], {family: dict(max_versions=1)})
                    except Exception as exc:  # noqa: BLE001 -- created concurrently by another worker
                        if self.names[table] not in conn.tables():
                            raise MetastoreError(f"cannot create HBase table {self.names[table]!r}: {exc}") from exc

    @classmethod
    def open(cls, db: Database, config: Mapping) -> "HBaseStore":
        return cls(db, config.get("hbase"))

    def close(self) -> None:
        self.db.close()

    # ------------------------------------------------------------------ plumbing
    def _hb(self, work):
        try:
            with self.pool.connection() as conn:
                self._revive_if_stale(conn)
                result = work(lambda name: conn.table(self.names[name]))
                self._last_used[id(conn)] = time.monotonic()
                return result
        except MetastoreError:
            raise
        except (OSError, EOFError) as exc:
            raise MetastoreError(f"HBase {self.config['host']}:{self.config['port']} unreachable: {exc}") from exc
        except Exception as exc:
            if type(exc).__name__ in ("IOError", "IllegalArgument", "TTransportException", "TApplicationException"):
                raise MetastoreError(f"HBase error: {getattr(exc, 'message', exc)}") from exc
            raise

    def _revive_if_stale(self, conn: happybase.Connection) -> None:
        """A pooled connection idle for a while may be closed at the other end (the
        server's read timeout, a restart).  Check it with one cheap call and reconnect if
        it is dead, so that a caller's work -- whose writes may not be safe to repeat --
        never starts on a dead socket."""
        if time.monotonic() - self._last_used.get(id(conn), 0.0) < float(self.config["check_after"]):
            return
        try:
            conn.tables()
        except (TTransportException, OSError, EOFError):
            log.info("reconnecting to HBase", extra={"host": self.config["host"], "port": self.config["port"]})
            conn._refresh_thrift_client()   # what happybase's pool does with a failed connection
            conn.open()

    @contextlib.contextmanager
    def _writing(self, db_name: str, table_name: str):
        """Writers of one table in this process take turns (HBase has no row locks across
        rows; other processes and instances are not serialised -- see the module doc)."""
        with self._table_locks[(db_name, table_name)]:
            yield

    def _dirs(self, work):
        """Directory operations run on the namespace's database, in their own transaction."""
        return self.db.run(work)

    @contextlib.contextmanager
    def _moving(self):
        """A directory move that commits only after the metadata naming its new place is
        written (yields ``in_move(work)``, running ``work(tx)`` in the open transaction).  The
        cleaner, which drops metadata whose directory is gone, sees the move only at commit,
        when no row names the old place any more; a failed HBase write rolls the move back."""
        with self.db.transaction() as tx:
            yield lambda work: work(tx)

    def _scan(self, table, start: bytes, stop: bytes, filter_text: bytes | None = None, columns=None):
        return table.scan(row_start=start or None, row_stop=stop or None, filter=filter_text, columns=columns,
                          batch_size=int(self.config["scan_batch"]))

    # ---------------------------------------------------------------------- SDs
    def _put_sd(self, t, sd) -> tuple[bytes, str | None]:
        """Store the shared part of ``sd`` (count one more reference); returns (hash, location)."""
        shared = copy.deepcopy(sd) if sd is not None else api.StorageDescriptor()
        location, shared.location = shared.location, None
        blob = _encode(shared)
        digest = hashlib.sha256(blob).digest()
        sds = t("sds")
        if sds.counter_inc(digest, REFS) == 1 or not sds.row(digest, columns=[OBJ]):
            sds.put(digest, {OBJ: blob})
        return digest, location

    def _release_sd(self, t, digest: bytes | None) -> None:
        if not digest:
            return
        sds = t("sds")
        if sds.counter_dec(digest, REFS) <= 0:
            sds.delete(digest)

    def _load_sds(self, t, digests) -> dict[bytes, object]:
        """hash -> the shared StorageDescriptor, decoded once per call."""
        wanted = [d for d in dict.fromkeys(digests) if d]
        out = {}
        for start in range(0, len(wanted), 500):
            for key, data in t("sds").rows(wanted[start:start + 500], columns=[OBJ]):
                out[key] = _decode(api.StorageDescriptor, data[OBJ])
        return out

    @staticmethod
    def _with_sd(obj, shared: dict, data: dict):
        """``obj`` with its SD: a shallow copy of the shared one (callers treat results as
        read-only; writers deep-copy before changing) with the object's own location."""
        sd = shared.get(data.get(SD))
        obj.sd = _shallow(sd) if sd is not None else None
        if obj.sd is not None:
            obj.sd.location = data.get(LOC, b"").decode() or None
        return obj

    # ---------------------------------------------------------------- databases
    def create_database(self, db, dirs) -> None:
        def work(t):
            if t("dbs").row(_s(db.name), columns=[OBJ]):
                raise AlreadyExists(f"Database {db.name} already exists")
            self._dirs(lambda tx: dirs.link(tx, db.locationUri, create=True, foreign_ok=True))
            stored = copy.copy(db)
            stored.catalogName = CATALOG
            t("dbs").put(_s(db.name), {OBJ: _encode(stored)})
        self._hb(work)

    def _database(self, t, name: str):
        data = t("dbs").row(_s(name), columns=[OBJ])
        if not data:
            raise NoSuchObject(f"Database {name} does not exist" if name else "database name is empty")
        return _decode(api.Database, data[OBJ])

    def get_database(self, name: str):
        return self._hb(lambda t: self._database(t, name))

    def get_database_names(self) -> list[str]:
        return self._hb(lambda t: sorted(rowkey.decode_string(k)[0] for k, _ in
                                           t("dbs").scan(filter=b"KeyOnlyFilter()")))

    def alter_database(self, name: str, db) -> None:
        def work(t):
            old = self._database(t, name)
            old.description, old.ownerName, old.ownerType = db.description, db.ownerName, db.ownerType
            if db.parameters is not None:
                old.parameters = db.parameters
            t("dbs").put(_s(name), {OBJ: _encode(old)})
        self._hb(work)

    def drop_database(self, name: str, dirs, cascade: bool) -> None:
        def work(t):
            db = self._database(t, name)
            tables = self.get_table_names(name)
            functions = [k for k, _ in self._scan(t("funcs"), _s(name), rowkey.prefix_successor(_s(name)))]
            if tables and not cascade:
                raise InvalidOperation(f"Database {name} is not empty. One or more tables exist.")
            if functions and not cascade:
                raise InvalidOperation(f"Database {name} is not empty. One or more functions exist.")
            for table in tables:
                self.drop_table(name, table, dirs)
            for key in functions:
                t("funcs").delete(key)
            t("dbs").delete(_s(name))
            if dirs is not None:
                self._dirs(lambda tx: dirs.delete(tx, db.locationUri, db.ownerName))
        self._hb(work)

    # ------------------------------------------------------------------- tables
    def _table_data(self, t, db_name: str, name: str) -> dict:
        data = t("tbls").row(_s(db_name) + _s(name))
        if not data:
            raise NoSuchObject(f"Table {db_name}.{name} does not exist")
        return data

    def _tables(self, t, rows: list[tuple[bytes, dict]]) -> list:
        blobs = self._load_sds(t, [d.get(SD) for _, d in rows])
        return [self._with_sd(_decode(api.Table, d[OBJ]), blobs, d) for _, d in rows]

    def _table(self, t, db_name: str, name: str):
        return self._tables(t, [(b"", self._table_data(t, db_name, name))])[0]

    def create_table(self, table, dirs, create_dir: bool) -> None:
        def work(t):
            self._database(t, table.dbName)
            key = _s(table.dbName) + _s(table.tableName)
            if t("tbls").row(key, columns=[OBJ]):
                raise AlreadyExists(f"Table {table.dbName}.{table.tableName} already exists")
            location = table.sd.location if table.sd else None
            self._dirs(lambda tx: dirs.link(tx, location, create=create_dir, foreign_ok=not create_dir))
            self._put_table(t, key, table)
        with self._writing(table.dbName, table.tableName):
            self._hb(work)

    def _put_table(self, t, key: bytes, table) -> None:
        stored = copy.copy(table)
        digest, location = self._put_sd(t, table.sd)
        stored.sd, stored.catName, stored.temporary = None, CATALOG, False
        stored.partitionKeys = [api.FieldSchema(k.name.lower(), k.type, k.comment) for k in table.partitionKeys or []]
        t("tbls").put(key, {OBJ: _encode(stored), SD: digest, LOC: (location or "").encode()})

    def get_table(self, db_name: str, name: str):
        return self._hb(lambda t: self._table(t, db_name, name))

    def get_tables(self, db_name: str, names: Sequence[str]) -> list:
        def work(t):
            keys = [_s(db_name) + _s(n) for n in dict.fromkeys(names)]
            return self._tables(t, t("tbls").rows(keys)) if keys else []
        return self._hb(work)

    def _table_rows(self, t, db_name: str):
        prefix = _s(db_name)
        return list(self._scan(t("tbls"), prefix, rowkey.prefix_successor(prefix), columns=[OBJ]))

    def get_table_names(self, db_name: str, table_type: str | None = None) -> list[str]:
        def work(t):
            self._database(t, db_name)
            tables = [_decode(api.Table, d[OBJ]) for _, d in self._table_rows(t, db_name)]
            return sorted(x.tableName for x in tables if table_type is None or x.tableType == table_type)
        return self._hb(work)

    def get_table_meta(self) -> list[tuple]:
        def work(t):
            tables = [_decode(api.Table, d[OBJ]) for _, d in self._scan(t("tbls"), b"", b"", columns=[OBJ])]
            return sorted((x.dbName, x.tableName, x.tableType, (x.parameters or {}).get("comment")) for x in tables)
        return self._hb(work)

    def alter_table(self, db_name: str, name: str, new_table, dirs, cascade: bool) -> None:
        def work(t):
            old_data = self._table_data(t, db_name, name)
            old = self._tables(t, [(b"", old_data)])[0]
            if [(k.name.lower(), k.type) for k in old.partitionKeys or []] != \
                    [(k.name.lower(), k.type) for k in new_table.partitionKeys or []]:
                raise InvalidOperation("partition keys can not be changed.")
            new_db, new_name = new_table.dbName, new_table.tableName
            renamed = (new_db, new_name) != (db_name, name)
            new_key = _s(new_db) + _s(new_name)
            if renamed:
                target = self._database(t, new_db)
                if t("tbls").row(new_key, columns=[OBJ]):
                    raise AlreadyExists(f"new table {new_db}.{new_name} already exists")
            old_location = old.sd.location if old.sd else None
            new_sd = copy.deepcopy(new_table.sd) if new_table.sd else api.StorageDescriptor()
            if not new_sd.location and old.tableType != "VIRTUAL_VIEW":
                new_sd.location = old_location
            managed = is_managed(new_table.tableType)
            with self._moving() as in_move:
                if renamed and managed and old_location and new_sd.location in (None, "", old_location):
                    new_sd.location = Locations.child(target.locationUri, new_name)
                    if not in_move(lambda tx: dirs.rename(tx, old_location, new_sd.location, lambda *a: None)):
                        new_sd.location = old_location
                elif new_sd.location != old_location:
                    in_move(lambda tx: dirs.link(tx, new_sd.location, create=managed, foreign_ok=not managed))
                stored = copy.copy(new_table)
                stored.sd = new_sd
                parts = list(self._scan(t("parts"), *self._part_range(db_name, name)))
                if renamed or new_sd.location != old_location or cascade:
                    self._move_partitions(t, old, stored, parts, cascade)
                self._put_table(t, new_key, stored)
                if renamed:
                    self._move_stats(t, db_name, name, new_db, new_name)
                    t("tbls").delete(_s(db_name) + _s(name))
                self._release_sd(t, old_data.get(SD))
        with self._writing(db_name, name):
            self._hb(work)

    def _move_partitions(self, t, old, new, parts, cascade: bool) -> None:
        """Partitions follow a renamed or moved table (new row keys, new locations) and take
        its columns with ``cascade``."""
        kinds = [key_type(k.type) for k in new.partitionKeys or []]
        old_location = old.sd.location if old.sd else None
        new_location = new.sd.location if new.sd else None
        blobs = self._load_sds(t, [d.get(SD) for _, d in parts])
        table = t("parts")
        for key, data in parts:
            part = self._with_sd(_decode(api.Partition, data[OBJ]), blobs, data)
            part.dbName, part.tableName = new.dbName, new.tableName
            if part.sd is not None and old_location and new_location and part.sd.location:
                part.sd.location = replace_prefix(part.sd.location, old_location, new_location)
            if cascade and part.sd is not None and new.sd is not None:
                part.sd.cols = new.sd.cols
            new_key = rowkey.row_key(new.dbName, new.tableName, kinds, part.values)
            self._put_partition(t, new_key, part, data[NAME].decode())
            if new_key != key:
                table.delete(key)
            self._release_sd(t, data.get(SD))

    def drop_table(self, db_name: str, name: str, dirs, purge: bool = False) -> None:
        def work(t):
            data = self._table_data(t, db_name, name)
            table = self._tables(t, [(b"", data)])[0]
            parts = list(self._scan(t("parts"), *self._part_range(db_name, name)))
            with t("parts").batch() as batch:
                for key, _ in parts:
                    batch.delete(key)
            stats_prefix = _s(db_name) + _s(name)
            with t("stats").batch() as batch:
                for key, _ in self._scan(t("stats"), stats_prefix, rowkey.prefix_successor(stats_prefix),
                                         columns=[b"c"]):
                    batch.delete(key)
            t("tbls").delete(_s(db_name) + _s(name))
            for _, part_data in parts:
                self._release_sd(t, part_data.get(SD))
            self._release_sd(t, data.get(SD))
            if dirs is None or not is_managed(table.tableType):
                return
            location = table.sd.location if table.sd else None

            def remove(tx):
                if location:
                    dirs.delete(tx, location, table.owner, purge)
                for _, part_data in parts:
                    part_location = part_data.get(LOC, b"").decode()
                    if part_location and replace_prefix(part_location, location or "\0", "") == part_location:
                        dirs.delete(tx, part_location, table.owner, purge)
            self._dirs(remove)
        with self._writing(db_name, name):
            self._hb(work)

    # --------------------------------------------------------------- partitions
    @staticmethod
    def _part_range(db_name: str, table_name: str) -> tuple[bytes, bytes]:
        prefix = rowkey.table_prefix(db_name, table_name)
        return prefix, rowkey.prefix_successor(prefix)

    def _check_values(self, table, values) -> list[str]:
        values = list(values or [])
        keys = table.partitionKeys or []
        if not keys:
            raise InvalidObject(f"table {table.dbName}.{table.tableName} is not partitioned")
        if len(values) != len(keys) or any(v is None for v in values):
            raise InvalidObject(f"partition values {values} do not match the partition keys {[k.name for k in keys]}")
        return values

    @staticmethod
    def _kinds(table) -> list:
        return [key_type(k.type) for k in table.partitionKeys or []]

    def _part_key(self, table, values) -> bytes:
        return rowkey.row_key(table.dbName, table.tableName, self._kinds(table), values)

    def _put_partition(self, t, key: bytes, part, name: str) -> None:
        stored = copy.copy(part)
        digest, location = self._put_sd(t, part.sd)
        stored.sd, stored.catName = None, CATALOG
        t("parts").put(key, {OBJ: _encode(stored), SD: digest, LOC: (location or "").encode(), NAME: name.encode()})

    def _partitions(self, t, rows) -> list:
        blobs = self._load_sds(t, [d.get(SD) for _, d in rows])
        return [self._with_sd(_decode(api.Partition, d[OBJ]), blobs, d) for _, d in rows]

    def add_partitions(self, db_name: str, table_name: str, parts: Sequence, dirs, if_not_exists: bool) -> list:
        def work(t):
            table = self._table(t, db_name, table_name)
            names = [k.name for k in table.partitionKeys or []]
            new, seen = [], set()
            for part in parts:
                values = self._check_values(table, part.values)
                key = self._part_key(table, values)
                name = make_part_name(names, values)
                if key in seen or t("parts").row(key, columns=[NAME]):
                    if if_not_exists:
                        continue
                    raise AlreadyExists(f"Partition already exists: {db_name}.{table_name} {name}")
                seen.add(key)
                new.append((key, name, self._new_partition(table, name, values, part)))
            managed = is_managed(table.tableType)
            self._dirs(lambda tx: [dirs.link(tx, p.sd.location, create=True, foreign_ok=not managed)
                                   for _, _, p in new])
            for key, name, part in new:
                self._put_partition(t, key, part, name)
            return [p for _, _, p in new]
        with self._writing(db_name, table_name):
            return self._hb(work)

    @staticmethod
    def _new_partition(table, name: str, values: list, part):
        part = copy.copy(part)
        part.values, part.dbName, part.tableName = values, table.dbName, table.tableName
        part.createTime = part.createTime or _now()
        part.sd = copy.deepcopy(part.sd) if part.sd else api.StorageDescriptor(cols=table.sd.cols if table.sd else [])
        if not part.sd.location:
            if not (table.sd and table.sd.location):
                raise InvalidObject(f"partition {name} has no location and its table none to derive it from")
            part.sd.location = Locations.child(table.sd.location, name)
        part.parameters = part.parameters or {}
        return part

    def get_partition(self, db_name: str, table_name: str, values: Sequence[str]):
        def work(t):
            table = self._table(t, db_name, table_name)
            data = t("parts").row(self._part_key(table, self._check_values(table, values)))
            if not data:
                raise NoSuchObject(f"partition values={list(values)} of table {db_name}.{table_name} does not exist")
            return self._partitions(t, [(b"", data)])[0]
        return self._hb(work)

    def _all_rows(self, t, db_name: str, table_name: str, columns=None):
        return list(self._scan(t("parts"), *self._part_range(db_name, table_name), columns=columns))

    @staticmethod
    def _by_name(rows, max_parts: int):
        rows = sorted(rows, key=lambda r: r[1][NAME])
        return rows[:max_parts] if max_parts is not None and max_parts >= 0 else rows

    def _select(self, t, table, keep, max_parts: int) -> list:
        rows = [(k, d) for k, d in self._all_rows(t, table.dbName, table.tableName)
                if keep(_decode(api.Partition, d[OBJ]).values)]
        return self._partitions(t, self._by_name(rows, max_parts))

    def get_partitions(self, db_name: str, table_name: str, max_parts: int = -1,
                       partial_values: Sequence[str] | None = None, names: Sequence[str] | None = None) -> list:
        def work(t):
            table = self._table(t, db_name, table_name)
            if names is not None:
                keys = [k.name for k in table.partitionKeys or []]
                wanted = []
                for name in names:
                    try:
                        wanted.append(self._part_key(table, parse_part_name(name, keys)))
                    except (ValueError, InvalidObject, MetastoreError):
                        continue
                rows = [r for r in t("parts").rows(list(dict.fromkeys(wanted)))] if wanted else []
                return self._partitions(t, self._by_name(rows, max_parts))
            return self._select(t, table, _partial(partial_values), max_parts)
        return self._hb(work)

    def get_partition_names(self, db_name: str, table_name: str, max_parts: int = -1,
                            partial_values: Sequence[str] | None = None) -> list[str]:
        return [make_part_name([k.name for k in self.get_table(db_name, table_name).partitionKeys], p.values)
                for p in self.get_partitions(db_name, table_name, max_parts, partial_values)]

    def plan(self, table, filter_text: str) -> planner.Plan:
        keys = [(k.name, k.type) for k in table.partitionKeys or []]
        if not keys:
            raise InvalidInput(f"table {table.dbName}.{table.tableName} is not partitioned: no filter applies")
        try:
            return planner.plan_filter(filter_text, keys)
        except FilterError as exc:
            raise InvalidInput(str(exc)) from None

    def explain(self, db_name: str, table_name: str, filter_text: str) -> str:
        """The plan of a filter: the seed's notation, then each HBase call with its rows."""
        table = self.get_table(db_name, table_name)
        plan = self.plan(table, filter_text)
        lines = [f"plan: {plan.render()}"]
        if plan.collapsed:
            lines.append(f"collapsed to one scan: {plan.collapsed}")
        for call in planner.hbase_calls(plan, rowkey.table_prefix(db_name, table_name)):
            if call.kind == "get":
                lines.append(f"get {len(call.rows)} row(s): " + ", ".join(r.hex() for r in call.rows))
            else:
                lines.append(f"scan start={call.start.hex() or '-'} stop={call.stop.hex() or '-'}"
                             f" filter={call.filter.decode('latin-1') if call.filter else '-'}")
        lines.append("residual: the metastore re-checks the whole filter (LIKE cannot run in HBase)"
                     if plan.residual else "residual: none (HBase returns exactly the matching partitions)")
        return "\n".join(lines)

    def _filtered_rows(self, t, table, filter_text: str) -> list:
        if not filter_text or not filter_text.strip():
            return self._all_rows(t, table.dbName, table.tableName)
        plan = self.plan(table, filter_text)
        log.debug("partition filter plan", extra={"table": f"{table.dbName}.{table.tableName}",
                                                  "filter": filter_text, "plan": plan.render()})
        found: dict[bytes, dict] = {}
        for call in planner.hbase_calls(plan, rowkey.table_prefix(table.dbName, table.tableName)):
            if call.kind == "get":
                found.update(t("parts").rows(list(call.rows)))
            else:
                found.update(self._scan(t("parts"), call.start, call.stop, call.filter))
        rows = list(found.items())
        if plan.residual:
            predicate = compile_predicate(filter_text, [(k.name, k.type) for k in table.partitionKeys])
            rows = [(k, d) for k, d in rows if predicate(_decode(api.Partition, d[OBJ]).values)]
        return rows

    def get_partitions_by_filter(self, db_name: str, table_name: str, filter_text: str, max_parts: int = -1) -> list:
        def work(t):
            table = self._table(t, db_name, table_name)
            return self._partitions(t, self._by_name(self._filtered_rows(t, table, filter_text), max_parts))
        return self._hb(work)

    def count_partitions_by_filter(self, db_name: str, table_name: str, filter_text: str) -> int:
        return self._hb(lambda t: len(self._filtered_rows(t, self._table(t, db_name, table_name), filter_text)))

    def get_partitions_by_value_sets(self, db_name: str, table_name: str, value_sets: Mapping[str, Sequence[str]],
                                     max_parts: int = -1) -> list:
        def work(t):
            table = self._table(t, db_name, table_name)
            try:
                compiled = compile_value_sets(value_sets, [KeyColumn(k.name.lower(), k.type, "")
                                                           for k in table.partitionKeys or []])
            except FilterError as exc:
                raise InvalidInput(str(exc)) from None
            return self._select(t, table, compiled.matches, max_parts)
        return self._hb(work)

    def alter_partitions(self, db_name: str, table_name: str, parts: Sequence, dirs) -> None:
        def work(t):
            table = self._table(t, db_name, table_name)
            keys = [k.name for k in table.partitionKeys or []]
            managed = is_managed(table.tableType)
            for part in parts:
                values = self._check_values(table, part.values)
                key, name = self._part_key(table, values), make_part_name(keys, values)
                data = t("parts").row(key)
                if not data:
                    new = self._new_partition(table, name, values, part)
                    self._dirs(lambda tx: dirs.link(tx, new.sd.location, create=True, foreign_ok=not managed))
                    self._put_partition(t, key, new, name)
                    continue
                old = self._partitions(t, [(key, data)])[0]
                updated = copy.copy(part)
                updated.values, updated.dbName, updated.tableName = values, db_name, table_name
                updated.createTime = old.createTime
                updated.sd = copy.deepcopy(part.sd) if part.sd else old.sd
                if updated.sd is not None:
                    if updated.sd.location and old.sd and updated.sd.location != old.sd.location:
                        location = updated.sd.location
                        self._dirs(lambda tx: dirs.link(tx, location, create=True, foreign_ok=not managed))
                    updated.sd.location = updated.sd.location or (old.sd.location if old.sd else None)
                self._put_partition(t, key, updated, name)
                self._release_sd(t, data.get(SD))
        with self._writing(db_name, table_name):
            self._hb(work)

    def rename_partition(self, db_name: str, table_name: str, values: Sequence[str], new_part, dirs) -> None:
        def work(t):
            table = self._table(t, db_name, table_name)
            keys = [k.name for k in table.partitionKeys or []]
            old_values = self._check_values(table, values)
            new_values = self._check_values(table, new_part.values)
            old_key, new_key = self._part_key(table, old_values), self._part_key(table, new_values)
            data = t("parts").row(old_key)
            if not data:
                raise NoSuchObject(f"partition {make_part_name(keys, old_values)} of table {db_name}.{table_name}"
                                   " does not exist")
            new_name = make_part_name(keys, new_values)
            if new_key != old_key and t("parts").row(new_key, columns=[NAME]):
                raise AlreadyExists(f"Partition already exists: {db_name}.{table_name} {new_name}")
            old = self._partitions(t, [(old_key, data)])[0]
            part = copy.copy(new_part)
            part.values, part.dbName, part.tableName = new_values, db_name, table_name
            part.sd = copy.deepcopy(new_part.sd) if new_part.sd else copy.deepcopy(old.sd)
            old_location = old.sd.location if old.sd else None
            with self._moving() as in_move:
                if is_managed(table.tableType) and old_location and table.sd and table.sd.location:
                    target = Locations.child(table.sd.location, new_name)
                    if in_move(lambda tx: dirs.rename(tx, old_location, target, lambda *a: None)) \
                            or part.sd.location == old_location:
                        part.sd.location = target
                part.sd.location = part.sd.location or old_location
                self._put_partition(t, new_key, part, new_name)
                if new_key != old_key:
                    t("parts").delete(old_key)
                    self._move_stats(t, db_name, table_name, db_name, table_name, make_part_name(keys, old_values),
                                     new_name)
                self._release_sd(t, data.get(SD))
        with self._writing(db_name, table_name):
            self._hb(work)

    def drop_partitions(self, db_name: str, table_name: str, values_list: Sequence[Sequence[str]], dirs,
                        if_exists: bool = False, purge: bool = False) -> list:
        def work(t):
            table = self._table(t, db_name, table_name)
            keys = [k.name for k in table.partitionKeys or []]
            wanted = {}
            for values in values_list:
                checked = self._check_values(table, values)
                wanted[self._part_key(table, checked)] = make_part_name(keys, checked)
            found = dict(t("parts").rows(list(wanted)))
            missing = [name for key, name in wanted.items() if key not in found]
            if missing and not if_exists:
                raise NoSuchObject(f"partition {missing[0]} of table {db_name}.{table_name} does not exist")
            dropped = self._partitions(t, list(found.items()))
            with t("parts").batch() as batch:
                for key in found:
                    batch.delete(key)
            for key, data in found.items():
                self._delete_stats(t, db_name, table_name, data[NAME].decode())
                self._release_sd(t, data.get(SD))
            if dirs is not None and is_managed(table.tableType):
                table_location = table.sd.location if table.sd else None

                def remove(tx):
                    for part in dropped:
                        location = part.sd.location if part.sd else None
                        if not location or not dirs.delete(tx, location, table.owner, purge):
                            continue
                        if not table_location or replace_prefix(location, table_location, "") == location:
                            continue
                        parent = location.rstrip("/").rsplit("/", 1)[0]
                        while parent.rstrip("/") != table_location.rstrip("/") and \
                                parent.startswith(table_location.rstrip("/") + "/"):
                            if not dirs.delete_if_empty(tx, parent):
                                break
                            parent = parent.rsplit("/", 1)[0]
                self._dirs(remove)
            return sorted(dropped, key=lambda p: make_part_name(keys, p.values))
        with self._writing(db_name, table_name):
            return self._hb(work)

    # ---------------------------------------------------------------- functions
    def create_function(self, function) -> None:
        def work(t):
            self._database(t, function.dbName)
            key = _s(function.dbName) + _s(function.functionName)
            if t("funcs").row(key, columns=[OBJ]):
                raise AlreadyExists(f"Function {function.dbName}.{function.functionName} already exists")
            stored = copy.copy(function)
            stored.createTime = stored.createTime or _now()
            stored.catName = CATALOG
            t("funcs").put(key, {OBJ: _encode(stored)})
        self._hb(work)

    def get_function(self, db_name: str, name: str):
        def work(t):
            data = t("funcs").row(_s(db_name) + _s(name))
            if not data:
                raise NoSuchObject(f"Function {db_name}.{name} does not exist")
            return _decode(api.Function, data[OBJ])
        return self._hb(work)

    def get_functions(self, db_name: str | None = None) -> list:
        def work(t):
            prefix = _s(db_name) if db_name is not None else b""
            rows = self._scan(t("funcs"), prefix, rowkey.prefix_successor(prefix) if prefix else b"")
            return [_decode(api.Function, d[OBJ]) for _, d in rows]
        return self._hb(work)

    def alter_function(self, db_name: str, name: str, function) -> None:
        def work(t):
            old = self.get_function(db_name, name)
            new_key = _s(function.dbName or db_name) + _s(function.functionName or name)
            if (function.dbName or db_name, function.functionName or name) != (db_name, name):
                self._database(t, function.dbName)
                if t("funcs").row(new_key, columns=[OBJ]):
                    raise InvalidOperation(f"Function {function.dbName}.{function.functionName} already exists")
            stored = copy.copy(function)
            stored.createTime = old.createTime
            stored.catName = CATALOG
            t("funcs").put(new_key, {OBJ: _encode(stored)})
            if new_key != _s(db_name) + _s(name):
                t("funcs").delete(_s(db_name) + _s(name))
        self._hb(work)

    def drop_function(self, db_name: str, name: str) -> None:
        def work(t):
            self.get_function(db_name, name)
            t("funcs").delete(_s(db_name) + _s(name))
        self._hb(work)

    # --------------------------------------------------------------- statistics
    @staticmethod
    def _stats_key(db_name: str, table_name: str, part_name: str | None) -> bytes:
        return _s(db_name) + _s(table_name) + _s(part_name or "")

    def update_column_statistics(self, stats, part_values: Sequence[str] | None = None) -> None:
        desc = stats.statsDesc

        def work(t):
            table = self._table(t, desc.dbName.lower(), desc.tableName.lower())
            part_name = None
            columns = {c.name.lower(): c for c in (table.sd.cols if table.sd else [])}
            if not desc.isTblLevel:
                values = part_values or parse_part_name(desc.partName, [k.name for k in table.partitionKeys])
                part = self.get_partition(table.dbName, table.tableName, values)
                part_name = make_part_name([k.name for k in table.partitionKeys], part.values)
                columns = {c.name.lower(): c for c in (part.sd.cols if part.sd else [])}
            cells = {}
            for obj in stats.statsObj or []:
                if obj.colName.lower() not in columns:
                    raise InvalidObject(f"column {obj.colName} is not a column of {table.dbName}.{table.tableName}")
                stored = copy.copy(obj)
                stored.colName = obj.colName.lower()
                cells[b"c:" + stored.colName.encode()] = _encode(stored)
            if cells:
                t("stats").put(self._stats_key(table.dbName, table.tableName, part_name), cells)
        self._hb(work)

    def get_table_column_statistics(self, db_name: str, table_name: str, columns: Sequence[str]) -> list:
        def work(t):
            self._table_data(t, db_name, table_name)
            wanted = [b"c:" + c.lower().encode() for c in columns]
            data = t("stats").row(self._stats_key(db_name, table_name, None), columns=wanted) if wanted else {}
            return [_decode(api.ColumnStatisticsObj, data[c]) for c in wanted if c in data]
        return self._hb(work)

    def get_partition_column_statistics(self, db_name: str, table_name: str, part_names: Sequence[str],
                                        columns: Sequence[str]) -> dict[str, list]:
        def work(t):
            self._table_data(t, db_name, table_name)
            wanted = [b"c:" + c.lower().encode() for c in columns]
            out = {}
            for name in dict.fromkeys(part_names):
                data = t("stats").row(self._stats_key(db_name, table_name, name), columns=wanted) if wanted else {}
                objs = [_decode(api.ColumnStatisticsObj, data[c]) for c in wanted if c in data]
                if objs:
                    out[name] = objs
            return out
        return self._hb(work)

    def delete_column_statistics(self, db_name: str, table_name: str, part_name: str | None,
                                 column: str | None) -> bool:
        def work(t):
            table = self._table(t, db_name, table_name)
            if part_name is not None:
                self.get_partition(db_name, table_name,
                                   parse_part_name(part_name, [k.name for k in table.partitionKeys]))
            key = self._stats_key(db_name, table_name, part_name)
            data = t("stats").row(key)
            doomed = [c for c in data if column is None or c == b"c:" + column.lower().encode()]
            if doomed:
                t("stats").delete(key, columns=doomed)
            return bool(doomed)
        return self._hb(work)

    def _delete_stats(self, t, db_name: str, table_name: str, part_name: str | None) -> None:
        t("stats").delete(self._stats_key(db_name, table_name, part_name))

    def _move_stats(self, t, db_name, table_name, new_db, new_table, part_name=None, new_part=None) -> None:
        """Statistics follow a renamed table (all of them) or partition (``part_name``)."""
        if part_name is not None:
            moves = [(self._stats_key(db_name, table_name, part_name), self._stats_key(new_db, new_table, new_part))]
        else:
            prefix = _s(db_name) + _s(table_name)
            new_prefix = _s(new_db) + _s(new_table)
            moves = [(k, new_prefix + k[len(prefix):]) for k, _ in
                     self._scan(t("stats"), prefix, rowkey.prefix_successor(prefix), columns=[b"c"])]
        for old, new in moves:
            data = t("stats").row(old)
            if data:
                t("stats").put(new, data)
                t("stats").delete(old)


def _partial(partial_values: Sequence[str] | None):
    """A prefix spec ('' = any value) as a test on a partition's values."""
    spec = list(partial_values or [])

    def keep(values) -> bool:
        return all(want == "" or want == have for want, have in zip(spec, values))
    return keep
