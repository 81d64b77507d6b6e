"""Small SQL helpers shared by the MySQL store modules."""

from __future__ import annotations

import time
from typing import Iterable, Iterator, Sequence

BATCH = 1000
SCHEMA = "metastore"


def marks(count: int) -> str:
    return ",".join(["%s"] * count)


def chunks(items: Sequence, size: int = BATCH) -> Iterator[Sequence]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def now() -> int:
    return int(time.time())


def bit(value) -> bool:
    """A BIT(1) column as read by the driver (b'\\x01') or an int."""
    if isinstance(value, (bytes, bytearray)):
        return value != b"\x00" and value != b""
    return bool(value)


def query_in(tx, sql: str, ids: Iterable, extra: tuple = ()) -> list[tuple]:
    """Run ``sql`` (holding one ``IN ({})``) over ``ids`` in batches."""
    ids = list(dict.fromkeys(ids))
    rows: list[tuple] = []
    for chunk in chunks(ids):
        rows += tx.query(sql.format(marks(len(chunk))), (*extra, *chunk))
    return rows


def execute_in(tx, sql: str, ids: Iterable, extra: tuple = ()) -> int:
    ids = list(dict.fromkeys(ids))
    count = 0
    for chunk in chunks(ids):
        count += tx.execute(sql.format(marks(len(chunk))), (*extra, *chunk))
    return count
