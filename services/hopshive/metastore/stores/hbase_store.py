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
==============  ===============================  ==========================================

Storage descriptors are deduplicated by content (Hive's HBaseStore idea): the SD without its
location is hashed and stored once with a reference count; tables and partitions keep their
location next to the hash.  A partition row key is ``db + table + typed values`` (see
``hbase.rowkey``): a table's partitions are one contiguous key range, in typed order, and
partition filters run as the Gets and Scans of ``hbase.planner`` (HBase's own RowFilters
for later columns; the residual the filter language cannot hold evaluated here).

Locks stay on the metastore's database (HIVE_LOCKS), as Hive's HBaseStore left locks and
transactions to its RDBMS TxnHandler.

Consistency (HBase has no foreign keys and no transactions across rows): the directory side
goes first on create (the directory exists before any metadata names it) and last on drop
(metadata first, then the directory).  Within HBase an SD is counted before the row that
references it and released after; a table row is written before its partitions, and a drop
deletes the table row first, then its partitions and statistics (a partition writer checks
its table after writing and takes its rows back if the table went: ``_attached``).  A crash
in between leaves only rows nothing reaches (an SD with a stale count, statistics or
partitions of a table that is gone) or a directory without metadata;
``hopshive-metatool fsck-hbase --repair`` (``hbase/fsck.py``) finds and removes those rows.
Directories deleted behind the metastore's back (no inode foreign key here) are not
followed yet: see the README.

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
from collections import Counter, defaultdict
from typing import Mapping, Sequence

import happybase
from thrift.protocol import TBinaryProtocol
from thriftpy2.transport import TTransportException
from thrift.TSerialization import deserialize, serialize

from ...core.db import Database
from ..api import CATALOG, api
from ..exceptions import AlreadyExists, InvalidInput, InvalidObject, InvalidOperation, MetastoreError, NoSuchObject
from ..filter import FilterError, KeyColumn, compile_value_sets
from ..filter.keytypes import key_type
from ..locations import Locations, replace_prefix
from ..names import make_part_name, parse_part_name
from ..app import HBASE_DEFAULTS
from ..store import Capabilities, RawStore
from .hbase import explain, planner, records, rowkey
from .hbase.records import RECORD as OBJ, Record
from .mysql.base import StoreBase
from .mysql.locks import LockOps
from .mysql.tables import is_managed

log = logging.getLogger("hopshive.metastore.hbase")

TABLES = {"dbs": "i", "tbls": "i", "parts": "i", "sds": "i", "funcs": "i", "stats": "c"}
SD_CACHE = 4096
_PROTOCOL = TBinaryProtocol.TBinaryProtocolAcceleratedFactory()


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


def _changed(what: str) -> MetastoreError:
    return MetastoreError(f"{what} was changed by another metastore instance meanwhile; retry")


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
            if renamed and managed and old_location and new_sd.location in (None, "", old_location):
                new_sd.location = Locations.child(target.locationUri, new_name)
                if not self._dirs(lambda tx: dirs.rename(tx, old_location, new_sd.location, lambda *a: None)):
                    new_sd.location = old_location
            elif new_sd.location != old_location:
                self._dirs(lambda tx: dirs.link(tx, new_sd.location, create=managed, foreign_ok=not managed))
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

    def _partitions(self, t, found: list[Record]) -> list:
        blobs = self._load_sds(t, [r.sd for r in found])
        return [self._with_sd(_decode(api.Partition, r.blob), blobs, r) for r in found]

    @staticmethod
    def _part_rows(rows) -> list[tuple[bytes, Record]]:
        return [(key, Record.of(data)) for key, data in rows]

    def add_partitions(self, db_name: str, table_name: str, parts: Sequence, dirs, if_not_exists: bool) -> list:
        def work(t):
            table = self._table(t, db_name, table_name)
            names = [k.name for k in table.partitionKeys or []]
            wanted = [(self._part_key(table, values), make_part_name(names, values), values, part)
                      for part in parts for values in [self._check_values(table, part.values)]]
            existing = {key for key, _ in t("parts").rows([w[0] for w in wanted], columns=[OBJ])} if wanted else set()
            new, seen = [], set()
            for key, name, values, part in wanted:
                if key in seen or key in existing:
                    if if_not_exists:
                        continue
                    raise AlreadyExists(f"Partition already exists: {db_name}.{table_name} {name}")
                seen.add(key)
                new.append((key, name, self._new_partition(table, name, values, part)))
            managed = is_managed(table.tableType)
            self._dirs(lambda tx: [dirs.link(tx, p.sd.location, create=True, foreign_ok=not managed)
                                   for _, _, p in new])
            shared = [self._shared(p.sd) for _, _, p in new]
            digests = {blob: records.acquire(t("sds"), blob, count)     # one increment per descriptor
                       for blob, count in Counter(blob for blob, _ in shared).items()}
            added = []
            for (key, name, part), (blob, location) in zip(new, shared):
                if self._put(t, "parts", key, part, None, name, (digests[blob], location)):
                    added.append((key, part))
                elif not if_not_exists:     # another instance added it meanwhile: undo ours
                    for made, _ in added:
                        self._release_sd(t, Record.of(t("parts").row(made)).sd)
                        t("parts").delete(made)
                    raise AlreadyExists(f"Partition already exists: {db_name}.{table_name} {name}")
            self._attached(t, db_name, table_name, [key for key, _ in added])
            return [p for _, p in added]
        with self._writing(db_name, table_name):
            return self._hb(work)

    def _attached(self, t, db_name: str, table_name: str, keys) -> None:
        """After creating partition rows: if their table was dropped meanwhile, take them
        back.  A drop deletes the table row before it scans the partitions, so either the drop
        sees ours or we see the table gone -- no partition outlives its table."""
        if not keys or t("tbls").row(_s(db_name) + _s(table_name), columns=[OBJ]):
            return
        for key in keys:
            record = Record.of(t("parts").row(key))
            if record is not None:
                t("parts").delete(key)
                self._release_sd(t, record.sd)
        raise NoSuchObject(f"Table {db_name}.{table_name} was dropped meanwhile")

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
            record = Record.of(t("parts").row(self._part_key(table, self._check_values(table, values))))
            if record is None:
                raise NoSuchObject(f"partition values={list(values)} of table {db_name}.{table_name} does not exist")
            return self._partitions(t, [record])[0]
        return self._hb(work)

    def _all_rows(self, t, db_name: str, table_name: str) -> list[tuple[bytes, Record]]:
        return self._part_rows(self._scan(t("parts"), *self._part_range(db_name, table_name)))

    @staticmethod
    def _by_name(found, max_parts: int) -> list[Record]:
        """Records in partition-name order, at most ``max_parts`` (negative: all)."""
        found = sorted(found, key=lambda r: r.name)
        return found[:max_parts] if max_parts is not None and max_parts >= 0 else found

    def _select(self, t, table, keep, max_parts: int) -> list:
        found = [r for _, r in self._all_rows(t, table.dbName, table.tableName)
                 if keep(_decode(api.Partition, r.blob).values)]
        return self._partitions(t, self._by_name(found, max_parts))

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
                rows = self._part_rows(t("parts").rows(list(dict.fromkeys(wanted)))) if wanted else []
                return self._partitions(t, self._by_name([r for _, r in rows], max_parts))
            return self._select(t, table, _partial(partial_values), max_parts)
        return self._hb(work)

    def get_partition_names(self, db_name: str, table_name: str, max_parts: int = -1,
                            partial_values: Sequence[str] | None = None) -> list[str]:
        return [make_part_name([k.name for k in self.get_table(db_name, table_name).partitionKeys], p.values)
                for p in self.get_partitions(db_name, table_name, max_parts, partial_values)]

    @staticmethod
    def plan(table, filter_text: str) -> tuple[planner.Plan, tuple]:
        """The planner's plan of ``filter_text`` for ``table`` and the HBase calls that run it."""
        keys = tuple((k.name, k.type) for k in table.partitionKeys or [])
        if not keys:
            raise InvalidInput(f"table {table.dbName}.{table.tableName} is not partitioned: no filter applies")
        try:
            return planner.plan_calls(filter_text, keys, rowkey.table_prefix(table.dbName, table.tableName))
        except FilterError as exc:
            raise InvalidInput(str(exc)) from None

    def explain(self, db_name: str, table_name: str, filter_text: str) -> str:
        """The plan of a filter: the seed's notation, then each HBase call in values."""
        return explain.render(*self.plan(self.get_table(db_name, table_name), filter_text))

    def _filtered_rows(self, t, table, filter_text: str) -> list[Record]:
        if not filter_text or not filter_text.strip():
            return [r for _, r in self._all_rows(t, table.dbName, table.tableName)]
        plan, calls = self.plan(table, filter_text)
        if log.isEnabledFor(logging.DEBUG):
            log.debug("partition filter plan", extra={"table": f"{table.dbName}.{table.tableName}",
                                                      "filter": filter_text, "plan": explain.render(plan, calls)})
        found: dict[bytes, Record] = {}
        for call in calls:
            if call.kind == "get":
                found.update(self._part_rows(t("parts").rows(list(call.rows))))
                continue
            check = planner.residual_predicate(call, plan.generator.kinds)
            for key, record in self._part_rows(self._scan(t("parts"), call.start, call.stop, call.filter)):
                if check is None or check(_decode(api.Partition, record.blob).values):
                    found[key] = record
        return list(found.values())

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
            created = []
            for part in parts:
                values = self._check_values(table, part.values)
                key, name = self._part_key(table, values), make_part_name(keys, values)
                record = Record.of(t("parts").row(key))
                if record is None:
                    new = self._new_partition(table, name, values, part)
                    self._dirs(lambda tx: dirs.link(tx, new.sd.location, create=True, foreign_ok=not managed))
                    if not self._put(t, "parts", key, new, None, name):
                        raise _changed(f"Partition {name} of {db_name}.{table_name}")
                    created.append(key)
                    continue
                old = self._partitions(t, [record])[0]
                updated = copy.copy(part)
                updated.values, updated.dbName, updated.tableName = values, db_name, table_name
                updated.createTime = old.createTime
                updated.sd = copy.deepcopy(part.sd) if part.sd else old.sd
                if updated.sd is not None:
                    if updated.sd.location and old.sd and updated.sd.location != old.sd.location:
                        location = updated.sd.location
                        self._dirs(lambda tx: dirs.link(tx, location, create=True, foreign_ok=not managed))
                    updated.sd.location = updated.sd.location or (old.sd.location if old.sd else None)
                if not self._put(t, "parts", key, updated, record.raw, name):
                    raise _changed(f"Partition {name} of {db_name}.{table_name}")
                self._release_sd(t, record.sd)
            self._attached(t, db_name, table_name, created)
        with self._writing(db_name, table_name):
            self._hb(work)

    def rename_partition(self, db_name: str, table_name: str, values: Sequence[str], new_part, dirs) -> None:
        def work(t):
            table = self._table(t, db_name, table_name)
            keys = [k.name for k in table.partitionKeys or []]
            old_values = self._check_values(table, values)
            new_values = self._check_values(table, new_part.values)
            old_key, new_key = self._part_key(table, old_values), self._part_key(table, new_values)
            record = Record.of(t("parts").row(old_key))
            if record is None:
                raise NoSuchObject(f"partition {make_part_name(keys, old_values)} of table {db_name}.{table_name}"
                                   " does not exist")
            new_name = make_part_name(keys, new_values)
            exists = AlreadyExists(f"Partition already exists: {db_name}.{table_name} {new_name}")
            if new_key != old_key and t("parts").row(new_key, columns=[OBJ]):
                raise exists
            old = self._partitions(t, [record])[0]
            part = copy.copy(new_part)
            part.values, part.dbName, part.tableName = new_values, db_name, table_name
            part.sd = copy.deepcopy(new_part.sd) if new_part.sd else copy.deepcopy(old.sd)
            old_location = old.sd.location if old.sd else None
            if is_managed(table.tableType) and old_location and table.sd and table.sd.location:
                target = Locations.child(table.sd.location, new_name)
                if self._dirs(lambda tx: dirs.rename(tx, old_location, target, lambda *a: None)) \
                        or part.sd.location == old_location:
                    part.sd.location = target
            part.sd.location = part.sd.location or old_location
            if not self._put(t, "parts", new_key, part, None if new_key != old_key else record.raw, new_name):
                if new_key != old_key:
                    raise exists
                raise _changed(f"Partition {new_name} of {db_name}.{table_name}")
            if new_key != old_key:
                t("parts").delete(old_key)
                self._move_stats(t, db_name, table_name, db_name, table_name, make_part_name(keys, old_values),
                                 new_name)
                self._attached(t, db_name, table_name, [new_key])
            self._release_sd(t, record.sd)
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
            found = dict(self._part_rows(t("parts").rows(list(wanted))))
            missing = [name for key, name in wanted.items() if key not in found]
            if missing and not if_exists:
                raise NoSuchObject(f"partition {missing[0]} of table {db_name}.{table_name} does not exist")
            dropped = self._partitions(t, list(found.values()))
            with t("parts").batch() as batch:
                for key in found:
                    batch.delete(key)
            for record in found.values():
                self._delete_stats(t, db_name, table_name, record.name)
                self._release_sd(t, record.sd)
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
            self._table_record(t, db_name, table_name)
            wanted = [b"c:" + c.lower().encode() for c in columns]
            data = t("stats").row(self._stats_key(db_name, table_name, None), columns=wanted) if wanted else {}
            return [_decode(api.ColumnStatisticsObj, data[c]) for c in wanted if c in data]
        return self._hb(work)

    def get_partition_column_statistics(self, db_name: str, table_name: str, part_names: Sequence[str],
                                        columns: Sequence[str]) -> dict[str, list]:
        def work(t):
            self._table_record(t, db_name, table_name)
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
