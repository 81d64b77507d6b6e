"""Tables, rows and versioned cells on LMDB (an embedded, sorted, crash-safe B+tree).

Layout: one LMDB environment (a directory); a named database ``meta`` maps a table name to
its column families (JSON); each table is the named database ``t/<name>`` whose keys are
the row keys (so LMDB's byte order is HBase's row order) and whose value holds the row's
cells: for each column ``family:qualifier`` (sorted) its versions, newest first, at most
the family's ``maxVersions``.  A row is read and rewritten whole, so every mutation of a
row (and every batch of rows: one LMDB write transaction) is atomic, and a call returns
only after LMDB's commit (fsync): an acknowledged write survives ``kill -9``.

Limits (stated, not hidden): row keys up to 480 bytes (LMDB's key limit is 511); cells
are kept in the row's value, so a row is meant to be small (metadata, not blobs);
``timeToLive`` and compression are accepted and ignored.
"""

from __future__ import annotations

import json
import struct
import threading
import time
from dataclasses import dataclass

import lmdb

from .exceptions import IllegalArgument, TableExists, TableNotFound

MAX_ROW_KEY = 480
_COL = struct.Struct(">HI")        # column length, version count
_VER = struct.Struct(">qI")        # timestamp, value length

# A row's cells: column -> [(timestamp, value)], newest first.
Cells = dict[bytes, list[tuple[int, bytes]]]


def now_ms() -> int:
    return int(time.time() * 1000)


def encode_row(cells: Cells) -> bytes:
    out = bytearray()
    for column in sorted(cells):
        versions = cells[column]
        out += _COL.pack(len(column), len(versions)) + column
        for ts, value in versions:
            out += _VER.pack(ts, len(value)) + value
    return bytes(out)


def decode_row(data: bytes) -> Cells:
    cells: Cells = {}
    pos, end = 0, len(data)
    while pos < end:
        col_len, count = _COL.unpack_from(data, pos)
        pos += _COL.size
        column = bytes(data[pos:pos + col_len])
        pos += col_len
        versions = []
        for _ in range(count):
            ts, value_len = _VER.unpack_from(data, pos)
            pos += _VER.size
            versions.append((ts, bytes(data[pos:pos + value_len])))
            pos += value_len
        cells[column] = versions
    return cells


def split_column(column: bytes) -> tuple[bytes, bytes | None]:
    """``b"f:q"`` -> (b"f", b"q"); ``b"f"`` or ``b"f:"`` names a whole family (qualifier None
    for ``f``, empty qualifier for ``f:``)."""
    family, sep, qualifier = column.partition(b":")
    if not family:
        raise IllegalArgument(f"column {column!r} has no family")
    return family, (qualifier if sep else None)


@dataclass
class Mutation:
    column: bytes
    value: bytes | None          # None: delete
    # for deletes: versions at or before this timestamp go (None: all)


@dataclass(frozen=True)
class Family:
    name: bytes
    max_versions: int = 3

    def to_json(self) -> dict:
        return {"max_versions": self.max_versions}


class Storage:
    """The store of one server process.  Thread-safe: LMDB serialises writers and lets
    readers run beside them on snapshots."""

    def __init__(self, path: str, map_size_mb: int = 4096, max_tables: int = 4096):
        self.env = lmdb.open(path, map_size=map_size_mb << 20, max_dbs=max_tables + 1,
                             sync=True, metasync=True, lock=True, max_readers=512)
        self.meta = self.env.open_db(b"meta")
        self._handles: dict[bytes, object] = {}
        self._lock = threading.Lock()
        # Handles are opened here and by create_table, in transactions that commit: a handle
        # first opened in a transaction that ends otherwise would not be valid afterwards.
        for name in self.table_names():
            self._handles[name] = self.env.open_db(b"t/" + name, create=False)

    def close(self) -> None:
        self.env.close()

    # ------------------------------------------------------------------- tables
    def _families(self, txn, name: bytes) -> dict[bytes, Family]:
        raw = txn.get(name, db=self.meta)
        if raw is None:
            raise TableNotFound(name)
        return {k.encode(): Family(k.encode(), v["max_versions"]) for k, v in json.loads(raw).items()}

    def _db(self, txn, name: bytes):
        with self._lock:
            handle = self._handles.get(name)
        if handle is None:
            raise TableNotFound(name)
        return handle

    def create_table(self, name: bytes, families: list[Family]) -> None:
        if not name or b"/" in name or len(name) > 200:
            raise IllegalArgument(f"table name {name!r} must be 1-200 bytes without '/'")
        if not families:
            raise IllegalArgument("a table needs at least one column family")
        with self.env.begin(write=True) as txn:
            if txn.get(name, db=self.meta) is not None:
                raise TableExists(name)
            spec = {}
            for family in families:
                if not family.name or b":" in family.name:
                    raise IllegalArgument(f"column family name {family.name!r} is empty or contains ':'")
                if family.max_versions < 1:
                    raise IllegalArgument(f"maxVersions of {family.name!r} must be >= 1")
                spec[family.name.decode("utf-8", "surrogateescape")] = family.to_json()
            with self._lock:
                self._handles[name] = self.env.open_db(b"t/" + name, txn=txn, create=True)
            txn.put(name, json.dumps(spec).encode(), db=self.meta)

    def delete_table(self, name: bytes) -> None:
        with self.env.begin(write=True) as txn:
            self._families(txn, name)
            txn.drop(self._db(txn, name), delete=True)
            txn.delete(name, db=self.meta)
            with self._lock:
                self._handles.pop(name, None)

    def usage(self) -> tuple[int, int]:
        """(bytes of the LMDB map in use, the map's size): the map is the most data the
        server can hold, so an operator watches the first approach the second."""
        info = self.env.info()
        return (info["last_pgno"] + 1) * self.env.stat()["psize"], info["map_size"]

    def table_names(self) -> list[bytes]:
        with self.env.begin(db=self.meta) as txn:
            return [bytes(k) for k, _ in txn.cursor(db=self.meta)]

    def families(self, name: bytes) -> dict[bytes, Family]:
        with self.env.begin() as txn:
            return self._families(txn, name)

    # ------------------------------------------------------------------ writes
    def _check_row(self, row: bytes) -> None:
        if not row:
            raise IllegalArgument("row key must not be empty")
        if len(row) > MAX_ROW_KEY:
            raise IllegalArgument(f"row key of {len(row)} bytes: this server takes at most {MAX_ROW_KEY}")

    @staticmethod
    def _apply(cells: Cells, families: dict[bytes, Family], mutations: list[Mutation], ts: int,
               delete_ts: int | None) -> None:
        for m in mutations:
            family, qualifier = split_column(m.column)
            if family not in families:
                raise IllegalArgument(f"column family {family.decode('utf-8', 'replace')!r} does not exist "
                                      "(NoSuchColumnFamilyException)")
            if m.value is None:
                doomed = [c for c in cells if (c == m.column if qualifier is not None
                                               else split_column(c)[0] == family)]
                for column in doomed:
                    kept = [v for v in cells[column] if delete_ts is not None and v[0] > delete_ts]
                    if kept:
                        cells[column] = kept
                    else:
                        del cells[column]
                continue
            if qualifier is None:
                m.column = family + b":"
            versions = [v for v in cells.get(m.column, []) if v[0] != ts]
            versions.append((ts, m.value))
            versions.sort(key=lambda v: -v[0])
            cells[m.column] = versions[:families[family].max_versions]

    def mutate_rows(self, table: bytes, batch: list[tuple[bytes, list[Mutation]]], ts: int | None = None) -> None:
        """Apply every row's mutations in one transaction (all or nothing).  Puts get ``ts``
        (default: now); deletes remove the versions at or before ``ts`` when given, else all."""
        for row, _ in batch:
            self._check_row(row)
        put_ts = now_ms() if ts is None else ts
        with self.env.begin(write=True) as txn:
            families = self._families(txn, table)
            db = self._db(txn, table)
            for row, mutations in batch:
                raw = txn.get(row, db=db)
                cells = decode_row(raw) if raw is not None else {}
                self._apply(cells, families, mutations, put_ts, ts)
                if cells:
                    txn.put(row, encode_row(cells), db=db)
                elif raw is not None:
                    txn.delete(row, db=db)

    def check_and_put(self, table: bytes, row: bytes, column: bytes, expected: bytes | None,
                      put: Mutation) -> bool:
        """HBase's checkAndPut: apply ``put`` (timestamp now) if the newest version of
        ``column`` equals ``expected``; an absent or empty ``expected`` asks for the cell to
        be absent or empty (HBase's rule).  All in one transaction."""
        self._check_row(row)
        family, qualifier = split_column(column)
        if not qualifier:
            raise IllegalArgument(f"checkAndPut: column {column!r} needs family:qualifier")
        with self.env.begin(write=True) as txn:
            families = self._families(txn, table)
            if family not in families:
                raise IllegalArgument(f"column family {family.decode('utf-8', 'replace')!r} does not exist "
                                      "(NoSuchColumnFamilyException)")
            db = self._db(txn, table)
            raw = txn.get(row, db=db)
            cells = decode_row(raw) if raw is not None else {}
            current = cells.get(column, [(0, b"")])[0][1]
            if (current or None) != (expected or None):
                return False
            self._apply(cells, families, [put], now_ms(), None)
            txn.put(row, encode_row(cells), db=db)
            return True

    def delete_row(self, table: bytes, row: bytes, ts: int | None = None) -> None:
        with self.env.begin(write=True) as txn:
            self._families(txn, table)
            db = self._db(txn, table)
            raw = txn.get(row, db=db)
            if raw is None:
                return
            if ts is None:
                txn.delete(row, db=db)
                return
            cells = {c: [v for v in vs if v[0] > ts] for c, vs in decode_row(raw).items()}
            cells = {c: vs for c, vs in cells.items() if vs}
            if cells:
                txn.put(row, encode_row(cells), db=db)
            else:
                txn.delete(row, db=db)

    def increment(self, table: bytes, row: bytes, column: bytes, amount: int) -> int:
        """HBase counters: an 8-byte big-endian signed long; a missing cell counts as 0."""
        self._check_row(row)
        with self.env.begin(write=True) as txn:
            families = self._families(txn, table)
            db = self._db(txn, table)
            raw = txn.get(row, db=db)
            cells = decode_row(raw) if raw is not None else {}
            current = cells.get(column)
            value = 0
            if current:
                if len(current[0][1]) != 8:
                    raise IllegalArgument(f"cell {column!r} of row {row!r} is not a 64-bit counter")
                value = struct.unpack(">q", current[0][1])[0]
            value += amount
            if not -(1 << 63) <= value < (1 << 63):
                raise IllegalArgument("counter overflow")
            ts = max(now_ms(), current[0][0] + 1 if current else 0)
            self._apply(cells, families, [Mutation(column, struct.pack(">q", value))], ts, None)
            txn.put(row, encode_row(cells), db=db)
            return value

    # ------------------------------------------------------------------- reads
    def get_row(self, table: bytes, row: bytes) -> Cells | None:
        with self.env.begin() as txn:
            self._families(txn, table)
            raw = txn.get(row, db=self._db(txn, table))
            return decode_row(raw) if raw is not None else None

    def scan(self, table: bytes, start: bytes, stop: bytes, after: bytes | None = None,
             reverse: bool = False, limit: int = 1000) -> list[tuple[bytes, Cells]]:
        """Up to ``limit`` rows of ``[start, stop)`` (empty: unbounded) in order, resuming
        after the row ``after`` (exclusive).  Reverse scans run from ``start`` (inclusive)
        down to ``stop`` (exclusive), as HBase's reversed scans do."""
        out: list[tuple[bytes, Cells]] = []
        with self.env.begin() as txn:
            self._families(txn, table)
            cursor = txn.cursor(db=self._db(txn, table))
            if not reverse:
                position = after if after is not None else start
                found = cursor.set_range(position) if position else cursor.first()
                if found and after is not None and cursor.key() == after:
                    found = cursor.next()
                while found:
                    key = cursor.key()
                    if stop and key >= stop:
                        break
                    out.append((bytes(key), decode_row(cursor.value())))
                    if len(out) >= limit:
                        break
                    found = cursor.next()
                return out
            position = after if after is not None else start
            if position:
                found = cursor.set_range(position)
                if not found:
                    found = cursor.last()
                elif cursor.key() > position or (after is not None and cursor.key() == after):
                    found = cursor.prev()
            else:
                found = cursor.last()
            while found:
                key = cursor.key()
                if stop and key <= stop:
                    break
                out.append((bytes(key), decode_row(cursor.value())))
                if len(out) >= limit:
                    break
                found = cursor.prev()
            return out
