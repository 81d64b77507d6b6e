"""A statement's rows inside the engine, cut into FetchResults-sized batches and encoded
there as TRowSet columns (wire.py), so server2 only adds the bytes around them.

Two shapes, one contract (``take(count)`` -> ``(columns, rows)``, at most ``count`` rows,
``columns`` the encoded elements of TRowSet.columns; ``prepare(count)`` makes the next one
ahead):

- ``ArrowResult``: the JVM encodes each partition as Arrow record batches (``toArrowBatchRdd``,
  ``spark.sql.execution.arrow.maxRecordsPerBatch`` rows each) and serves them partition by
  partition (one partition in memory; ``arrow_result``).  A fetch is re-cut at any batch
  boundary and encoded column by column from the Arrow buffers (arrow_columns.py): no
  Python object per value is made.
- ``RowResult``: Row objects (``toLocalIterator`` or a local ``collect``), turned into
  TColumns and encoded by Thrift.  Used for local relations (``select 1``: no Spark job),
  catalog listings and the types Arrow does not carry the Hive way (arrow_columns.ARROW_TYPES).
"""

from __future__ import annotations

import itertools
from typing import Iterator

import pyarrow as pa

from .arrow_columns import ARROW_TYPES, arrow_columns
from .rowsets import list_columns
from .values import column_values
from .wire import encode_columns


def arrow_fits(frame) -> bool:
    """Whether every column of ``frame`` is a type the Arrow path formats as the row path does."""
    return all(f.dataType.simpleString().split("(", 1)[0] in ARROW_TYPES for f in frame.schema.fields)


class _Fetches:
    """``take(count)``, and ``prepare(count)``: the next fetch made ahead, while the last one
    travels to the client (the engine calls it after each reply).  A prepared fetch of
    another size is cut again; an error preparing it is raised by the ``take`` that wants it.
    Subclasses cut rows off (``_cut``), encode them (``_encode``) and put them back."""

    prepared: tuple | None = None       # (count, parts, (columns, rows) or the error)

    def take(self, count: int) -> tuple[bytes, int]:
        if self.prepared is not None:
            prepared_count, parts, fetch = self.prepared
            self.prepared = None
            if isinstance(fetch, Exception):
                raise fetch
            if prepared_count == count:
                return fetch
            self._put_back(parts)
        parts, rows = self._cut(count)
        return self._encode(parts), rows

    def prepare(self, count: int) -> None:
        try:
            parts, rows = self._cut(count)
            self.prepared = (count, parts, (self._encode(parts), rows))
        except Exception as exc:        # noqa: BLE001 -- the next fetch reports it
            self.prepared = (count, [], exc)


class RowResult(_Fetches):
    def __init__(self, schema: list, rows: Iterator):
        """``schema``: ``[(name, hive type, TTypeId name)]``."""
        self.schema = schema
        self.rows = rows

    def _cut(self, count: int) -> tuple[list, int]:
        batch = list(itertools.islice(self.rows, count))
        return batch, len(batch)

    def _encode(self, batch: list) -> bytes:
        columns = [column_values(type_id, [r[i] for r in batch]) for i, (_, _, type_id) in enumerate(self.schema)]
        return encode_columns(list_columns(self.schema, columns))

    def _put_back(self, batch: list) -> None:
        self.rows = itertools.chain(batch, self.rows)


class ArrowResult(_Fetches):
    def __init__(self, schema: pa.Schema, type_ids: list[str], batches: Iterator[pa.RecordBatch]):
        """``batches``: Arrow record batches of ``schema`` (any sizes, empty ones too), whose
        columns are of the TTypeId names ``type_ids``."""
        self.schema = schema
        self.type_ids = type_ids
        self.batches = batches
        # What is left of the current batch.  Reading the first one runs the query before
        # the engine replies, so errors and cancels surface while the operation is RUNNING.
        self.pending = next(self.batches, None)

    def _cut(self, count: int) -> tuple[list[pa.RecordBatch], int]:
        parts, rows = [], 0
        while rows < count and self.pending is not None:
            part = self.pending.slice(0, count - rows)
            parts.append(part)
            rows += part.num_rows
            self.pending = self.pending.slice(part.num_rows) if part.num_rows < self.pending.num_rows \
                else next(self.batches, None)
        return parts, rows

    def _encode(self, parts: list[pa.RecordBatch]) -> bytes:
        return arrow_columns(self.type_ids, pa.Table.from_batches(parts, self.schema))

    def _put_back(self, parts: list[pa.RecordBatch]) -> None:
        if parts:
            rest = [self.pending] if self.pending is not None else []
            self.batches = itertools.chain(parts[1:], rest, self.batches)
            self.pending = parts[0]


def _served(sock_info):
    """The messages the JVM serves on a local socket (closed when they are read or dropped)."""
    from pyspark.serializers import NoOpSerializer
    from pyspark.util import _load_from_socket

    with _load_from_socket(sock_info, NoOpSerializer()) as messages:
        yield from messages


def arrow_result(session, frame, type_ids: list[str]) -> ArrowResult:
    """Run ``frame`` as Arrow batches made by the JVM, one partition at a time.

    A result of one partition (``select 1``, a global aggregate, any query on ``local[1]``
    that does not shuffle) is collected by one job and served, as Spark's own ``collect``
    does; several partitions come one at a time (``toLocalIterator``: a job per partition,
    the next one prefetched).  Both hold one partition in the engine; the first costs ~30 ms
    less per statement here (its per-partition protocol is what a small query pays for)."""
    from pyspark.rdd import _local_iterator_from_socket
    from pyspark.serializers import NoOpSerializer
    from pyspark.sql.pandas.types import to_arrow_schema

    large = session.conf.get("spark.sql.execution.arrow.useLargeVarTypes", "false") == "true"
    schema = to_arrow_schema(frame.schema, timezone=session.conf.get("spark.sql.session.timeZone"),
                             prefers_large_types=large)
    batches, python_rdd = frame._jdf.toArrowBatchRdd(), session.sparkContext._jvm.PythonRDD
    if batches.getNumPartitions() == 1:
        messages = _served(python_rdd.collectAndServe(batches))
    else:
        messages = _local_iterator_from_socket(python_rdd.toLocalIteratorAndServe(batches, True), NoOpSerializer())
    return ArrowResult(schema, type_ids, (pa.ipc.read_record_batch(pa.py_buffer(m), schema) for m in messages))
