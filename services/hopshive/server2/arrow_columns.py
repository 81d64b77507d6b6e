"""Arrow record batches (the engine's fast path, results.py) -> TCLIService columns.

Vectorised: per column one Arrow compute step to the wire type, one ``to_pylist`` and one
nulls bitmap taken from Arrow's validity (both are LSB-first bit arrays), so no Python code
runs per value except for decimals.  The values are exactly those of the row path
(values.py): numbers as they are, dates ``YYYY-MM-DD``, timestamps in the session time zone
as ``YYYY-MM-DD HH:MM:SS[.fraction without trailing zeros]``, decimals in plain notation,
binary as bytes.  Types not listed in ARROW_TYPES (arrays, maps, structs, intervals, void,
anything newer) stay on the row path.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from impala_thrift_gen.TCLIService import ttypes as t

from .rowsets import column

# Spark type names (simpleString up to any "(") the engine fetches as Arrow.
ARROW_TYPES = frozenset({"boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "string",
                         "binary", "decimal", "date", "timestamp", "timestamp_ntz"})
_FRACTION_ZEROS = r"(\.\d*[1-9])0+$|\.0+$"      # Hive prints .12, not .120000, and no .000000


def read_table(ipc: bytes) -> pa.Table:
    """One fetch as the engine sends it (an Arrow IPC stream)."""
    return pa.ipc.open_stream(pa.py_buffer(ipc)).read_all()


def nulls_bitmap(array: pa.Array) -> bytes:
    """TCLIService's nulls: bit i (LSB first) set when value i is NULL, ceil(n/8) bytes."""
    size = (len(array) + 7) // 8
    if array.null_count == 0:
        return bytes(size)
    bits = bytearray(pc.is_null(array).buffers()[1].to_pybytes()[:size])
    if len(array) % 8:                  # bits past the end are unspecified in Arrow
        bits[-1] &= (1 << (len(array) % 8)) - 1
    return bytes(bits)


def _wire_values(type_id: str, array: pa.Array) -> list:
    """The column's values as its TColumn carries them, NULLs as None."""
    if type_id == "DECIMAL_TYPE":
        return [None if v is None else format(v, "f") for v in array.to_pylist()]
    if type_id == "DATE_TYPE":
        array = pc.cast(array, pa.string())
    elif type_id == "TIMESTAMP_TYPE":       # strftime of a zoned timestamp prints local time
        array = pc.replace_substring_regex(pc.strftime(array, format="%Y-%m-%d %H:%M:%S"),
                                           pattern=_FRACTION_ZEROS, replacement=r"\1")
    return array.to_pylist()


def arrow_columns(schema: list, ipc: bytes) -> list[t.TColumn]:
    """``[(name, hive type, TTypeId name)]`` and one fetch's Arrow IPC stream -> TColumns."""
    table = read_table(ipc)
    if table.num_columns != len(schema):
        raise ValueError(f"an Arrow batch of {table.num_columns} columns for a schema of {len(schema)}")
    built = []
    for (_, _, type_id), chunked in zip(schema, table.columns):
        array = chunked.combine_chunks()
        built.append(column(type_id, _wire_values(type_id, array), nulls_bitmap(array)))
    return built
