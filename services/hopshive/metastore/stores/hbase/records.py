"""How the HBase store writes rows that several metastore instances share.

HBase has no transaction across rows, but it has two atomic operations on one row, and the
Thrift1 API (``Hbase.thrift``, what happybase speaks) offers both: ``checkAndPut`` (put one
cell if another cell of the row holds an expected value, or is absent) and
``atomicIncrement``.  The store builds on them:

* **One cell per object row.**  A table or partition row is one cell, ``i:obj``: a
  ``Record`` of the object (Thrift-encoded, its storage descriptor taken out), the hash of
  that descriptor, its location and (partitions) its name.  A create is ``checkAndPut``
  against an absent cell, so of two instances creating the same table or partition exactly
  one succeeds and the other gets AlreadyExists; an update is ``checkAndPut`` against the
  record it read, so an update racing a drop (or another update) fails instead of
  resurrecting or silently overwriting the row.  Databases and functions are one cell too.
* **Descriptors counted with increments, never deleted on the way.**  ``acquire`` adds one
  to the descriptor's counter (``atomicIncrement``) and then writes its content, which is
  the same for everyone holding that hash; ``release`` subtracts one, and when the count is
  0 empties the content with ``checkAndPut`` against the counter still being 0.  Deleting
  the row there would race a concurrent ``acquire`` (its increment, then the delete: a
  live reference to a deleted descriptor); emptying it cannot: an ``acquire`` after it
  writes the content again.  Released rows (count 0, no content) stay for reuse;
  ``fsck-hbase --repair`` removes them (with no DDL in flight).
"""

from __future__ import annotations

import hashlib
import struct
import time
from dataclasses import dataclass

from happybase.batch import Mutation  # the struct of the Hbase.thrift IDL happybase loads
from thrift.protocol import TBinaryProtocol
from thrift.TSerialization import deserialize, serialize

from ...exceptions import MetastoreError
from . import rowkey

RECORD, REFS = b"i:obj", b"i:refs"
_HEADER = struct.Struct(">BII")
_ZERO = struct.pack(">q", 0)
_PROTOCOL = TBinaryProtocol.TBinaryProtocolAcceleratedFactory()


def encode(obj) -> bytes:
    """A Hive API struct as stored: Thrift binary."""
    return serialize(obj, _PROTOCOL)


def decode(cls, data: bytes):
    return deserialize(cls(), data, _PROTOCOL)


def shallow(struct_):
    """A shallow copy of a Thrift struct (copy.copy's generic path costs ~10 us)."""
    twin = object.__new__(type(struct_))
    twin.__dict__.update(struct_.__dict__)
    return twin


def string_key(text: str) -> bytes:
    """A name as (part of) a row key: ``rowkey.encode_string``."""
    return rowkey.encode_string(text)


def now() -> int:
    return int(time.time())


def changed(what: str) -> MetastoreError:
    """The error of a checkAndPut that lost: the row is not what this call read."""
    return MetastoreError(f"{what} was changed by another metastore instance meanwhile; retry")


@dataclass(frozen=True)
class Record:
    blob: bytes               # the Thrift-encoded object, without its shared descriptor
    sd: bytes = b""           # sha256 of the shared descriptor
    location: str = ""
    name: str = ""            # a partition's name (k1=v1/k2=v2)
    raw: bytes = b""          # the cell as read: what an update expects to replace

    def pack(self) -> bytes:
        location, name = self.location.encode(), self.name.encode()
        return _HEADER.pack(len(self.sd), len(location), len(name)) + self.sd + location + name + self.blob

    @classmethod
    def unpack(cls, cell: bytes) -> "Record":
        sd_len, location_len, name_len = _HEADER.unpack_from(cell)
        at = _HEADER.size
        sd, at = cell[at:at + sd_len], at + sd_len
        location, at = cell[at:at + location_len].decode(), at + location_len
        name, at = cell[at:at + name_len].decode(), at + name_len
        return cls(cell[at:], sd, location, name, cell)

    @classmethod
    def of(cls, data: dict) -> "Record | None":
        """The record of a row as happybase returns it (None: no record)."""
        cell = data.get(RECORD) if data else None
        return cls.unpack(cell) if cell else None


def check_and_put(table, row: bytes, expected: bytes | None, value: bytes, column: bytes = RECORD,
                  checked: bytes | None = None) -> bool:
    """HBase's checkAndPut: write ``value`` to ``column`` if the cell ``checked`` (default:
    the same column) holds ``expected`` -- None: the cell is absent.  True if written."""
    mutation = Mutation(column=column, value=value, isDelete=False, writeToWAL=True)
    return table.connection.client.checkAndPut(table.name, row, checked or column, expected, mutation, {})


def acquire(sds, blob: bytes, count: int = 1) -> bytes:
    """Count ``count`` more references to the descriptor ``blob``; returns its hash."""
    digest = hashlib.sha256(blob).digest()
    sds.counter_inc(digest, REFS, count)
    sds.put(digest, {RECORD: blob})       # idempotent: the content of a hash never changes
    return digest


def release(sds, digest: bytes | None) -> None:
    """Count one reference less; at 0 the content goes unless someone acquired it meanwhile."""
    if digest and sds.counter_dec(digest, REFS) <= 0:
        check_and_put(sds, digest, _ZERO, b"", checked=REFS)


def load(sds, digests) -> dict[bytes, bytes]:
    """hash -> descriptor blob, for the hashes that have one."""
    wanted = [d for d in dict.fromkeys(digests) if d]
    out = {}
    for start in range(0, len(wanted), 500):
        for key, data in sds.rows(wanted[start:start + 500], columns=[RECORD]):
            if data.get(RECORD):
                out[key] = data[RECORD]
    return out
