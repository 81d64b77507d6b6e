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
``tbls``        ``<db><table>``                  ``i:obj`` a ``Record``: Table without its SD's
                                                 shared part, hash of that part, location
``parts``       ``rowkey.row_key(db, table,      ``i:obj`` a ``Record``: Partition (values
                typed values)``                  included, SD removed), SD hash, location,
                                                 partition name
``sds``         sha256 of the shared SD          ``i:obj`` StorageDescriptor without location
                                                 (empty once released), ``i:refs`` reference
                                                 counter (64-bit)
``funcs``       ``<db><function>``               ``i:obj`` Function
``stats``       ``<db><table><partition or ''>`` ``c:<column>`` ColumnStatisticsObj per column
``idxs``        ``<db><base table><index>``      ``i:obj`` a ``Record``: Index (Hive 2 struct)
                                                 without its SD, SD hash, index table name
                                                 (``hbase.indexes``)
``meta``        ``format``                       ``i:format`` the row format of these tables
==============  ===============================  ==========================================

Storage descriptors are deduplicated by content (Hive's HBaseStore idea): the SD without its
location is hashed and stored once with a reference count; tables and partitions keep their
location next to the hash.  A partition row key is ``db + table + typed values`` (see
``hbase.rowkey``): a table's partitions are one contiguous key range, in typed order, and
partition filters run as the Gets and Scans of ``hbase.planner`` (HBase's own RowFilters
for later columns; the residual the filter language cannot hold evaluated here).  The plans
are the seed's (HIVE-9452's example table) except in three rows where the seed's own
notation shows a slip that returns wrong partitions -- ``p1 = 10`` over several partition
columns stops at ``X10+``, not ``X+``; ``p1 > 10`` starts at ``X10+`` (also inside ``p1 > 10
or p1 < 20`` and ``p1 > 10 and condition1``): the planner's docstring gives each.

Locks stay on the metastore's database (HIVE_LOCKS), as Hive's HBaseStore left locks and
transactions to its RDBMS TxnHandler.

Consistency (HBase has no foreign keys and no transactions across rows).  The order of
operations makes sure a reader never sees a live object's rows name a missing directory,
and a crash leaves only what fsck finds:

* create: the directory first (its own transaction, committed), then the rows;
* drop: the rows first, then the directory;
* rename/move (``alter_table``, ``rename_partition``): the directory move runs in a database
  transaction that stays open while the rows naming the new place are written, and commits
  after them (``_moving``); a failed HBase write rolls the move back.  The new place is
  recorded as a move in flight before those rows are written and the record goes with the
  commit (``hbase.moves``), so nothing takes the new rows for lost ones in between;
* within HBase an SD is counted before the row that references it and released after; a
  table row is written before its partitions, and a drop deletes the table row first, then
  its partitions and statistics (a partition writer checks its table after writing and
  takes its rows back if the table went: ``_attached``).

A crash in between leaves only rows nothing reaches (an SD with a stale count, statistics or
partitions of a table that is gone), a directory without metadata, or -- a crash after a
rename's rows and before its commit -- rows naming a directory that does not exist.
``hopshive-metatool fsck-hbase --repair`` (``hbase/fsck.py``) finds and removes all of
those; the last kind is also what a directory deleted or moved behind the metastore's back
leaves (no inode foreign key here): the cleaner (``hopshive.cleaner.hbase``) follows every
directory delete and move in the binlog and drops the metadata at or below it whose
directory is gone, re-reading row and directory just before and skipping the places of
moves in flight, and its sweeps run the same check over everything.

Several instances share the tables (the cluster runs one per metastore host): every object
row is one cell written with ``checkAndPut`` and descriptors are counted with
``atomicIncrement`` (``hbase.records``), so two creates of one table or partition give one
AlreadyExists, an update racing a drop fails instead of resurrecting the row, and a
descriptor is never deleted under a reference.  Writers of one table in one process also
take turns, which keeps those conflicts to instances.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import threading
import time
from collections import defaultdict
from typing import Mapping, Sequence

import happybase
from thriftpy2.transport import TTransportException

from ...core.db import Database
from ..api import CATALOG, api
from ..exceptions import AlreadyExists, InvalidOperation, MetastoreError, NoSuchObject
from ..filter.keytypes import key_type
from ..locations import Locations, replace_prefix
from ..app import HBASE_DEFAULTS
from ..store import RawStore
from .hbase import moves, records, rowkey
from .hbase.indexes import IndexOps
from .hbase.partition_ops import PartitionOps
from .hbase.records import RECORD as OBJ, Record, changed as _changed, decode as _decode, encode as _encode, now as _now
from .hbase.records import shallow as _shallow, string_key as _s
from .hbase.statistics import StatisticsOps
from .mysql.base import StoreBase
from .mysql.locks import LockOps
from .mysql.tables import is_managed

log = logging.getLogger("hopshive.metastore.hbase")

TABLES = {"dbs": "i", "tbls": "i", "parts": "i", "sds": "i", "funcs": "i", "stats": "c", "meta": "i", "idxs": "i"}
FORMAT, FORMAT_CELL = b"2", b"i:format"      # 2: UTF-8 partition keys, one-cell records
SD_CACHE = 4096


class HBaseStore(PartitionOps, IndexOps, StatisticsOps, LockOps, StoreBase, RawStore):

    def __init__(self, db: Database, config: Mapping | None = None):
        StoreBase.__init__(self, db)
        self.config = dict(HBASE_DEFAULTS, **(config or {}))
        self.pool = happybase.ConnectionPool(int(self.config["pool_size"]), host=self.config["host"],
                                             port=int(self.config["port"]),
                                             timeout=int(float(self.config["timeout"]) * 1000))
        self.names = {t: (self.config["table_prefix"] + t).encode() for t in TABLES}
        self._table_locks: defaultdict = defaultdict(threading.RLock)
        self._last_used: dict[int, float] = {}   # id(pooled connection) -> when its last work ended
        self._sd_cache: dict[bytes, object] = {}
        with self.pool.connection() as conn:
            existing = set(conn.tables())
            for table, family in TABLES.items():
                if self.names[table] not in existing:
                    try:
                        conn.create_table(self.names[table], {family: dict(max_versions=1)})
                    except Exception as exc:  # noqa: BLE001 -- created concurrently by another worker
                        if self.names[table] not in conn.tables():
                            raise MetastoreError(f"cannot create HBase table {self.names[table]!r}: {exc}") from exc
            self._check_format(conn)

    def _check_format(self, conn) -> None:
        """Refuse tables written in another row format (their keys and records would read as
        garbage); new tables get this one's mark."""
        meta = conn.table(self.names["meta"])
        found = meta.row(b"format").get(FORMAT_CELL)
        if found is None and not any(True for _ in conn.table(self.names["tbls"]).scan(limit=1)):
            records.check_and_put(meta, b"format", None, FORMAT, column=FORMAT_CELL)
            found = meta.row(b"format").get(FORMAT_CELL)
        if found != FORMAT:
            raise MetastoreError(
                f"the HBase tables {self.config['table_prefix']}* hold rows of row format "
                f"{(found or b'1').decode()}, this metastore writes format {FORMAT.decode()}: move them aside "
                "(or, holding nothing to keep, delete them) and start again")

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
        """Writers of one table in this process take turns; instances race, and checkAndPut
        decides (see the module doc)."""
        with self._table_locks[(db_name, table_name)]:
            yield

    def _dirs(self, work):
        """Directory operations run on the namespace's database, in their own transaction."""
        return self.db.run(work)

    @contextlib.contextmanager
    def _moving(self):
        """A directory move that commits only after the metadata naming its new place is
        written (yields ``in_move(work, location)``, running ``work(tx)`` in the open
        transaction).  The cleaner, which drops metadata whose directory is gone, sees the
        move's old place go only at commit, when no row names it any more; the new place,
        which rows name before the commit, is recorded as a move in flight first
        (``hbase.moves``) and the record goes with the commit.  A failed HBase write rolls
        the move back."""
        recorded: list[int] = []
        try:
            with self.db.transaction() as tx:
                def in_move(work, location: str):
                    recorded.append(self.db.run(lambda own: moves.begin(own, location)))
                    return work(tx)
                yield in_move
                moves.end(tx, recorded)
            recorded.clear()    # deleted with the move's commit
        finally:
            if recorded:
                self.db.run(lambda tx: moves.end(tx, recorded))

    def _scan(self, table, start: bytes, stop: bytes, filter_text: bytes | None = None, columns=None):
        return table.scan(row_start=start or None, row_stop=stop or None, filter=filter_text, columns=columns,
                          batch_size=int(self.config["scan_batch"]))

    # ---------------------------------------------------------------------- SDs
    @staticmethod
    def _shared(sd) -> tuple[bytes, str | None]:
        """The part of ``sd`` that is shared by content (all but the location), encoded, and
        the location."""
        shared = copy.deepcopy(sd) if sd is not None else api.StorageDescriptor()
        location, shared.location = shared.location, None
        return _encode(shared), location

    @staticmethod
    def _release_sd(t, digest: bytes | None) -> None:
        records.release(t("sds"), digest)

    def _load_sds(self, t, digests) -> dict[bytes, object]:
        """hash -> the shared StorageDescriptor.  A hash names one content for ever, so
        decoded descriptors are kept (up to SD_CACHE) and read from HBase once."""
        wanted = set(digests)
        missing = [d for d in wanted if d and d not in self._sd_cache]
        if missing:
            if len(self._sd_cache) > SD_CACHE:
                self._sd_cache.clear()
            for digest, blob in records.load(t("sds"), missing).items():
                self._sd_cache[digest] = _decode(api.StorageDescriptor, blob)
        return {d: self._sd_cache[d] for d in wanted if d in self._sd_cache}

    @staticmethod
    def _with_sd(obj, shared: dict, record: Record):
        """``obj`` with its SD: a shallow copy of the shared one (callers treat results as
        read-only; writers deep-copy before changing) with the object's own location."""
        sd = shared.get(record.sd)
        obj.sd = _shallow(sd) if sd is not None else None
        if obj.sd is not None:
            obj.sd.location = record.location or None
        return obj

    def _put(self, t, table: str, key: bytes, obj, expected: bytes | None, name: str = "",
             acquired: tuple[bytes, str | None] | None = None) -> bool:
        """Write a table or partition record with its SD counted (``acquired``: the caller
        counted it already -- (hash, location)): only if the row still holds ``expected``
        (None: is absent).  False if it does not; then nothing changed and the count is
        given back."""
        stored = copy.copy(obj)
        if acquired is None:
            blob, location = self._shared(obj.sd)
            acquired = records.acquire(t("sds"), blob), location
        digest, location = acquired
        stored.sd, stored.catName = None, CATALOG
        if table == "tbls":
            stored.temporary = False
            stored.partitionKeys = [api.FieldSchema(k.name.lower(), k.type, k.comment)
                                    for k in obj.partitionKeys or []]
        cell = Record(_encode(stored), digest, location or "", name).pack()
        if records.check_and_put(t(table), key, expected, cell):
            return True
        self._release_sd(t, digest)
        return False

    # ---------------------------------------------------------------- databases
    def create_database(self, db, dirs) -> None:
        def work(t):
            exists = AlreadyExists(f"Database {db.name} already exists")
            if t("dbs").row(_s(db.name), columns=[OBJ]):
                raise exists
            self._dirs(lambda tx: dirs.link(tx, db.locationUri, create=True, foreign_ok=True))
            stored = copy.copy(db)
            stored.catalogName = CATALOG
            if not records.check_and_put(t("dbs"), _s(db.name), None, _encode(stored)):
                raise exists
        self._hb(work)

    def _database(self, t, name: str, raw: bool = False):
        data = t("dbs").row(_s(name), columns=[OBJ])
        if not data:
            raise NoSuchObject(f"Database {name} does not exist" if name else "database name is empty")
        db = _decode(api.Database, data[OBJ])
        return (db, data[OBJ]) if raw else db

    def get_database(self, name: str):
        return self._hb(lambda t: self._database(t, name))

    def get_database_names(self) -> list[str]:
        return self._hb(lambda t: sorted(rowkey.decode_string(k)[0] for k, _ in
                                           t("dbs").scan(filter=b"KeyOnlyFilter()")))

    def alter_database(self, name: str, db) -> None:
        def work(t):
            old, cell = self._database(t, name, raw=True)
            old.description, old.ownerName, old.ownerType = db.description, db.ownerName, db.ownerType
            if db.parameters is not None:
                old.parameters = db.parameters
            if not records.check_and_put(t("dbs"), _s(name), cell, _encode(old)):
                raise _changed(f"Database {name}")
        self._hb(work)

    def drop_database(self, name: str, dirs, cascade: bool) -> None:
        def work(t):
            db = self._database(t, name)
            objects = self._table_objects(t, _s(name))
            tables = sorted(x.tableName for x in objects)
            index_tables = {x.tableName for x in objects if x.tableType == "INDEX_TABLE"}
            functions = [k for k, _ in self._scan(t("funcs"), _s(name), rowkey.prefix_successor(_s(name)))]
            if tables and not cascade:
                raise InvalidOperation(f"Database {name} is not empty. One or more tables exist.")
            if functions and not cascade:
                raise InvalidOperation(f"Database {name} is not empty. One or more functions exist.")
            for table in sorted(tables, key=lambda n: n in index_tables):
                if table in index_tables and not t("tbls").row(_s(name) + _s(table), columns=[OBJ]):
                    continue            # went with its base table
                self.drop_table(name, table, dirs)
            for key in functions:
                t("funcs").delete(key)
            t("dbs").delete(_s(name))
            if dirs is not None:
                self._dirs(lambda tx: dirs.delete(tx, db.locationUri, db.ownerName))
        self._hb(work)

    # ------------------------------------------------------------------- tables
    def _table_record(self, t, db_name: str, name: str) -> Record:
        record = Record.of(t("tbls").row(_s(db_name) + _s(name)))
        if record is None:
            raise NoSuchObject(f"Table {db_name}.{name} does not exist")
        return record

    def _tables(self, t, found: list[Record]) -> list:
        blobs = self._load_sds(t, [r.sd for r in found])
        return [self._with_sd(_decode(api.Table, r.blob), blobs, r) for r in found]

    def _table(self, t, db_name: str, name: str):
        return self._tables(t, [self._table_record(t, db_name, name)])[0]

    def create_table(self, table, dirs, create_dir: bool) -> None:
        def work(t):
            self._database(t, table.dbName)
            key = _s(table.dbName) + _s(table.tableName)
            exists = AlreadyExists(f"Table {table.dbName}.{table.tableName} already exists")
            if t("tbls").row(key, columns=[OBJ]):
                raise exists
            location = table.sd.location if table.sd else None
            self._dirs(lambda tx: dirs.link(tx, location, create=create_dir, foreign_ok=not create_dir))
            if not self._put(t, "tbls", key, table, None):
                raise exists
        with self._writing(table.dbName, table.tableName):
            self._hb(work)

    def get_table(self, db_name: str, name: str):
        return self._hb(lambda t: self._table(t, db_name, name))

    def get_tables(self, db_name: str, names: Sequence[str]) -> list:
        def work(t):
            keys = [_s(db_name) + _s(n) for n in dict.fromkeys(names)]
            return self._tables(t, [Record.of(d) for _, d in t("tbls").rows(keys)]) if keys else []
        return self._hb(work)

    def _table_objects(self, t, prefix: bytes) -> list:
        rows = self._scan(t("tbls"), prefix, rowkey.prefix_successor(prefix) if prefix else b"", columns=[OBJ])
        return [_decode(api.Table, Record.of(d).blob) for _, d in rows]

    def get_table_names(self, db_name: str, table_type: str | None = None) -> list[str]:
        def work(t):
            self._database(t, db_name)
            tables = self._table_objects(t, _s(db_name))
            return sorted(x.tableName for x in tables if table_type is None or x.tableType == table_type)
        return self._hb(work)

    def get_table_meta(self) -> list[tuple]:
        def work(t):
            return sorted((x.dbName, x.tableName, x.tableType, (x.parameters or {}).get("comment"))
                          for x in self._table_objects(t, b""))
        return self._hb(work)

    def alter_table(self, db_name: str, name: str, new_table, dirs, cascade: bool) -> None:
        def work(t):
            old_record = self._table_record(t, db_name, name)
            old = self._tables(t, [old_record])[0]
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
                    if not in_move(lambda tx: dirs.rename(tx, old_location, new_sd.location, lambda *a: None),
                                   new_sd.location):
                        new_sd.location = old_location
                elif new_sd.location != old_location:
                    in_move(lambda tx: dirs.link(tx, new_sd.location, create=managed, foreign_ok=not managed),
                            new_sd.location)
                stored = copy.copy(new_table)
                stored.sd = new_sd
                # the table row first (the parent), then its partitions and statistics
                if not self._put(t, "tbls", new_key, stored, None if renamed else old_record.raw):
                    if renamed:
                        raise AlreadyExists(f"new table {new_db}.{new_name} already exists")
                    raise _changed(f"Table {db_name}.{name}")
                parts = list(self._scan(t("parts"), *self._part_range(db_name, name)))
                if renamed or new_sd.location != old_location or cascade:
                    self._move_partitions(t, old, stored, parts, cascade)
                if renamed:
                    self._move_stats(t, db_name, name, new_db, new_name)
                    t("tbls").delete(_s(db_name) + _s(name))
                self._release_sd(t, old_record.sd)
        with self._writing(db_name, name):
            self._hb(work)
            if (new_table.dbName, new_table.tableName) != (db_name, name):
                self._rename_indexes(db_name, name, new_table.dbName, new_table.tableName)

    def _move_partitions(self, t, old, new, parts, cascade: bool) -> None:
        """Partitions follow a renamed or moved table (new row keys, new locations) and take
        its columns with ``cascade``."""
        kinds = [key_type(k.type) for k in new.partitionKeys or []]
        old_location = old.sd.location if old.sd else None
        new_location = new.sd.location if new.sd else None
        found = [(key, Record.of(data)) for key, data in parts]
        blobs = self._load_sds(t, [r.sd for _, r in found])
        for key, record in found:
            part = self._with_sd(_decode(api.Partition, record.blob), blobs, record)
            part.dbName, part.tableName = new.dbName, new.tableName
            if part.sd is not None and old_location and new_location and part.sd.location:
                part.sd.location = replace_prefix(part.sd.location, old_location, new_location)
            if cascade and part.sd is not None and new.sd is not None:
                part.sd.cols = new.sd.cols
            new_key = rowkey.row_key(new.dbName, new.tableName, kinds, part.values)
            if not self._put(t, "parts", new_key, part, None if new_key != key else record.raw, record.name):
                raise _changed(f"Partition {record.name} of {old.dbName}.{old.tableName}")
            if new_key != key:
                t("parts").delete(key)
            self._release_sd(t, record.sd)

    def drop_table(self, db_name: str, name: str, dirs, purge: bool = False) -> None:
        def work(t):
            record = self._table_record(t, db_name, name)
            table = self._tables(t, [record])[0]
            t("tbls").delete(_s(db_name) + _s(name))     # first: see _attached
            parts = [(key, Record.of(data)) for key, data in self._scan(t("parts"), *self._part_range(db_name, name))]
            with t("parts").batch() as batch:
                for key, _ in parts:
                    batch.delete(key)
            stats_prefix = _s(db_name) + _s(name)
            with t("stats").batch() as batch:
                for key, _ in self._scan(t("stats"), stats_prefix, rowkey.prefix_successor(stats_prefix),
                                         columns=[b"c"]):
                    batch.delete(key)
            for _, part_record in parts:
                self._release_sd(t, part_record.sd)
            self._release_sd(t, record.sd)
            if dirs is None or not is_managed(table.tableType):
                return
            location = table.sd.location if table.sd else None

            def remove(tx):
                if location:
                    dirs.delete(tx, location, table.owner, purge)
                for _, part_record in parts:
                    part_location = part_record.location
                    if part_location and replace_prefix(part_location, location or "\0", "") == part_location:
                        dirs.delete(tx, part_location, table.owner, purge)
            self._dirs(remove)
        with self._writing(db_name, name):
            self._hb(lambda t: self._table_record(t, db_name, name))
            self._drop_indexes(db_name, name, dirs, purge)
            self._hb(work)

    # ---------------------------------------------------------------- functions
    def create_function(self, function) -> None:
        def work(t):
            self._database(t, function.dbName)
            key = _s(function.dbName) + _s(function.functionName)
            stored = copy.copy(function)
            stored.createTime = stored.createTime or _now()
            stored.catName = CATALOG
            if not records.check_and_put(t("funcs"), key, None, _encode(stored)):
                raise AlreadyExists(f"Function {function.dbName}.{function.functionName} already exists")
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
            key = _s(db_name) + _s(name)
            cell = t("funcs").row(key, columns=[OBJ]).get(OBJ)
            if not cell:
                raise NoSuchObject(f"Function {db_name}.{name} does not exist")
            new_key = _s(function.dbName or db_name) + _s(function.functionName or name)
            renamed = new_key != key
            if renamed:
                self._database(t, function.dbName)
            stored = copy.copy(function)
            stored.createTime = _decode(api.Function, cell).createTime
            stored.catName = CATALOG
            if not records.check_and_put(t("funcs"), new_key, None if renamed else cell, _encode(stored)):
                if renamed:
                    raise InvalidOperation(f"Function {function.dbName}.{function.functionName} already exists")
                raise _changed(f"Function {db_name}.{name}")
            if renamed:
                t("funcs").delete(key)
        self._hb(work)

    def drop_function(self, db_name: str, name: str) -> None:
        def work(t):
            self.get_function(db_name, name)
            t("funcs").delete(_s(db_name) + _s(name))
        self._hb(work)
