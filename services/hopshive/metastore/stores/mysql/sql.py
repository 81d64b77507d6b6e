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


def in_list(values: Sequence) -> tuple[str, tuple]:
    """The inside of an ``IN (...)`` and its parameters.  Integer ids are written as numbers:
    they need no escaping, and the driver's per-value escaping was a quarter of the server's
    CPU when listing 10k partitions.  Anything else (names, hashes) stays a placeholder."""
    if all(type(v) is int for v in values):
        return ",".join(map(str, values)), ()
    return marks(len(values)), tuple(values)


def query_in(tx, sql: str, ids: Iterable, extra: tuple = ()) -> list[tuple]:
    """Run ``sql`` (holding one ``IN ({})``) over ``ids`` in batches."""
    rows: list[tuple] = []
    for chunk in chunks(list(dict.fromkeys(ids))):
        fragment, params = in_list(chunk)
        rows += tx.query(sql.format(fragment), (*extra, *params))
    return rows


def execute_in(tx, sql: str, ids: Iterable, extra: tuple = ()) -> int:
    count = 0
    for chunk in chunks(list(dict.fromkeys(ids))):
        fragment, params = in_list(chunk)
        count += tx.execute(sql.format(fragment), (*extra, *params))
    return count


def insert_returning(tx, table: str, columns: Sequence[str], rows: Sequence[Sequence], id_column: str) -> list[int]:
    """Multi-row INSERT into ``metastore.<table>``; the generated ``id_column`` of each row, in
    row order (MariaDB's INSERT ... RETURNING: one statement per BATCH rows instead of one per
    row, and no assumption that auto-increment ids come out consecutive, which Galera's
    interleaved mode does not promise)."""
    row_marks = f"({marks(len(columns))})"
    ids: list[int] = []
    for chunk in chunks(rows):
        ids += [row[0] for row in tx.query(
            f"INSERT INTO {SCHEMA}.{table} ({', '.join(columns)}) VALUES {', '.join([row_marks] * len(chunk))}"
            f" RETURNING {id_column}", [value for row in chunk for value in row])]
    return ids
