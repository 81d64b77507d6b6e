"""Arrow record batches (the engine's fast path, results.py) -> TColumns, encoded as Thrift
writes them (wire.py), in the engine where the batches are.

Vectorised: per column a few Arrow compute steps and buffer copies, so no Python object is
made per value (decimals aside).  Fixed-width values are byte-swapped to big-endian as whole
buffers; strings and binaries become Thrift's ``[length:4][bytes]`` sequence by interleaving,
with one Arrow ``take``, an array of the length prefixes with the values.  The values are
exactly those of the row path (values.py): numbers as they are, dates ``YYYY-MM-DD``,
timestamps in the session time zone as ``YYYY-MM-DD HH:MM:SS[.fraction without trailing
zeros]``, decimals in plain notation, binary as bytes.  Types not listed in ARROW_TYPES
(arrays, maps, structs, intervals, void, anything newer) stay on the row path.
"""

from __future__ import annotations

import functools
import struct
import sys
from array import array

import pyarrow as pa
import pyarrow.compute as pc
from thrift.Thrift import TType

from .wire import STOP, field, list_header

# Spark type names (simpleString up to any "(") the engine fetches as Arrow.
ARROW_TYPES = frozenset({"boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "string",
                         "binary", "decimal", "date", "timestamp", "timestamp_ntz"})
_FRACTION_ZEROS = r"(\.\d*[1-9])0+$|\.0+$"      # Hive prints .12, not .120000, and no .000000

# TTypeId name -> (TColumn field id, list element type, Arrow type of the values, array typecode);
# no typecode: a variable-width column.
_LAYOUT = {
    "BOOLEAN_TYPE": (1, TType.BOOL, pa.int8(), "b"), "TINYINT_TYPE": (2, TType.BYTE, pa.int8(), "b"),
    "SMALLINT_TYPE": (3, TType.I16, pa.int16(), "h"), "INT_TYPE": (4, TType.I32, pa.int32(), "i"),
    "BIGINT_TYPE": (5, TType.I64, pa.int64(), "q"), "FLOAT_TYPE": (6, TType.DOUBLE, pa.float64(), "d"),
    "DOUBLE_TYPE": (6, TType.DOUBLE, pa.float64(), "d"), "BINARY_TYPE": (8, TType.STRING, pa.binary(), None),
}
_STRING_LAYOUT = (7, TType.STRING, pa.binary(), None)


def nulls_bitmap(values: pa.Array) -> bytes:
    """TCLIService's nulls: bit i (LSB first) set when value i is NULL, ceil(n/8) bytes."""
    size = (len(values) + 7) // 8
    if values.null_count == 0:
        return bytes(size)
    bits = bytearray(pc.is_null(values).buffers()[1].to_pybytes()[:size])
    if len(values) % 8:                 # bits past the end are unspecified in Arrow
        bits[-1] &= (1 << (len(values) % 8)) - 1
    return bytes(bits)


def _wire_values(type_id: str, values: pa.Array) -> pa.Array:
    """The column's values as its TColumn carries them (strings for dates, timestamps, decimals)."""
    if type_id == "DECIMAL_TYPE":
        return pa.array([None if v is None else format(v, "f") for v in values.to_pylist()], pa.string())
    if type_id == "DATE_TYPE":
        return pc.cast(values, pa.string())
    if type_id == "TIMESTAMP_TYPE":     # strftime of a zoned timestamp prints local time
        return pc.replace_substring_regex(pc.strftime(values, format="%Y-%m-%d %H:%M:%S"),
                                          pattern=_FRACTION_ZEROS, replacement=r"\1")
    return values


def _buffer_items(values: pa.Array, buffer: int, typecode: str) -> array:
    """The ``len(values)`` items of one of ``values``' buffers, as a Python array."""
    items = array(typecode)
    start = values.offset * items.itemsize
    items.frombytes(memoryview(values.buffers()[buffer])[start:start + len(values) * items.itemsize])
    return items


def _big_endian(items: array) -> bytes:
    if items.itemsize > 1 and sys.byteorder == "little":
        items.byteswap()
    return items.tobytes()


def _fixed_width(values: pa.Array, arrow_type: pa.DataType, typecode: str) -> bytes:
    """NULLs as 0 (the row path's filler), each value big-endian."""
    return _big_endian(_buffer_items(pc.cast(values, arrow_type).fill_null(0), 1, typecode))


@functools.lru_cache(maxsize=16)
def _interleaving(count: int) -> pa.Array:
    """0, count, 1, count + 1, ...: takes prefix i then value i from ``prefixes + values``."""
    order = array("q", bytes(16 * count))
    order[0::2], order[1::2] = array("q", range(count)), array("q", range(count, 2 * count))
    return pa.array(order, pa.int64())


def _variable_width(values: pa.Array) -> bytes:
    """Each value as ``[length:4][bytes]``; NULLs as empty values (the row path's filler)."""
    values = pc.cast(values, pa.binary()).fill_null(b"")
    count = len(values)
    lengths = _big_endian(_buffer_items(pc.binary_length(values), 1, "i"))
    prefixes = pa.FixedSizeBinaryArray.from_buffers(pa.binary(4), count, [None, pa.py_buffer(lengths)])
    both = pa.concat_arrays([pc.cast(prefixes, pa.binary()), values]).take(_interleaving(count))
    end = struct.unpack_from("=i", both.buffers()[1], 4 * 2 * count)[0]     # the last offset
    return memoryview(both.buffers()[2])[:end].tobytes()


def _column(type_id: str, values: pa.Array) -> bytes:
    """One TColumn (a union: one TxxxColumn struct of ``values`` and ``nulls``)."""
    field_id, element, arrow_type, typecode = _LAYOUT.get(type_id, _STRING_LAYOUT)
    wire = _wire_values(type_id, values)
    if not len(wire):
        encoded = b""
    elif typecode:
        encoded = _fixed_width(wire, arrow_type, typecode)
    else:
        encoded = _variable_width(wire)
    nulls = nulls_bitmap(wire)
    return (field(TType.STRUCT, field_id) + field(TType.LIST, 1) + list_header(element, len(wire)) + encoded
            + field(TType.STRING, 2) + struct.pack(">i", len(nulls)) + nulls + STOP + STOP)


def arrow_columns(type_ids: list[str], table: pa.Table) -> bytes:
    """A fetch's rows (``table``, its columns of the TTypeId names ``type_ids``) as the
    elements of TRowSet.columns."""
    if table.num_columns != len(type_ids):
        raise ValueError(f"an Arrow batch of {table.num_columns} columns for a schema of {len(type_ids)}")
    return b"".join(_column(type_id, chunked.combine_chunks()) for type_id, chunked in zip(type_ids, table.columns))
