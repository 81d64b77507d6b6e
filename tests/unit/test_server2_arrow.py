"""server2's Arrow fetch path (no servers): the engine's re-cutting of Arrow batches into
fetches (results.ArrowResult) and their encoding as TColumns (arrow_columns), read back with
Thrift's decoder and checked against the row path (values.column_values + rowsets.list_columns)
value by value."""

from __future__ import annotations

import datetime
import decimal
import zoneinfo

import pyarrow as pa
import pytest

from hopshive.server2.arrow_columns import arrow_columns, nulls_bitmap
from hopshive.server2.results import ArrowResult
from hopshive.server2.rowsets import list_columns
from hopshive.server2.values import column_values
from tests.support.tcli import decoded_columns

STOCKHOLM = zoneinfo.ZoneInfo("Europe/Stockholm")
UTC = datetime.timezone.utc


def _instants() -> list:
    return [datetime.datetime(2024, 1, 2, 3, 4, 5, 120000, UTC), datetime.datetime(1970, 1, 1, tzinfo=UTC),
            datetime.datetime(2024, 7, 1, 22, 30, 0, 1, UTC), datetime.datetime(1969, 12, 31, 23, 59, 59, 999999, UTC)]


# (Spark type, TTypeId name, Arrow type as the JVM sends it, values as Arrow holds them,
#  values as the row path gets them from pyspark's Row objects).
CASES = [
    ("boolean", "BOOLEAN_TYPE", pa.bool_(), [True, False, True], None),
    ("tinyint", "TINYINT_TYPE", pa.int8(), [-128, 0, 127], None),
    ("smallint", "SMALLINT_TYPE", pa.int16(), [-32768, 1, 32767], None),
    ("int", "INT_TYPE", pa.int32(), [-2**31, 7, 2**31 - 1], None),
    ("bigint", "BIGINT_TYPE", pa.int64(), [-2**63, 0, 2**63 - 1], None),
    ("float", "FLOAT_TYPE", pa.float32(), [1.1, -0.0, 3.4e38], [1.100000023841858, -0.0, 3.3999999521443642e38]),
    ("double", "DOUBLE_TYPE", pa.float64(), [0.1, float("inf"), -1e300], None),
    ("string", "STRING_TYPE", pa.string(), ["a", "", "åäö ☃"], None),
    ("binary", "BINARY_TYPE", pa.binary(), [b"\x00\xff", b"", b"AB"], None),
    ("decimal(10,2)", "DECIMAL_TYPE", pa.decimal128(10, 2),
     [decimal.Decimal("1.50"), decimal.Decimal("-0.01"), decimal.Decimal("12345678.90")], None),
    ("decimal(20,10)", "DECIMAL_TYPE", pa.decimal128(20, 10),
     [decimal.Decimal("0E-10"), decimal.Decimal("1E-10"), decimal.Decimal("-1000.0000001000")], None),
    ("date", "DATE_TYPE", pa.date32(),
     [datetime.date(2024, 1, 2), datetime.date(1, 1, 1), datetime.date(9999, 12, 31)], None),
    ("timestamp", "TIMESTAMP_TYPE", pa.timestamp("us", tz="Europe/Stockholm"), _instants(),
     [i.astimezone(STOCKHOLM).replace(tzinfo=None) for i in _instants()]),
    ("timestamp_ntz", "TIMESTAMP_TYPE", pa.timestamp("us"), [i.replace(tzinfo=None) for i in _instants()], None),
]


def _schema(case) -> list:
    return [("c", case[0], case[1])]


def _row_path(case, values: list) -> list:
    """What the row path puts on the wire for these (row-path) values."""
    return list_columns(_schema(case), [column_values(case[1], values)])


def _fetches(schema: pa.Schema, type_ids: list[str], batches: list, count: int) -> list:
    """Every fetch of ``count`` rows until a short one, as (decoded TColumns, rows)."""
    result = ArrowResult(schema, type_ids, iter(batches))
    fetches = []
    while True:
        columns, rows = result.take(count)
        fetches.append((decoded_columns(columns, len(type_ids)), rows))
        if rows < count:
            return fetches


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_every_type_as_the_row_path_sends_it(case):
    spark_type, type_id, arrow_type, values, row_values = case
    row_values = row_values or values
    # Nulls first, last, between, and more than 8 values so the bitmap spans bytes.
    arrow_values = [None] + values + [None, None] + values + [None]
    expected_values = [None] + row_values + [None, None] + row_values + [None]
    schema = pa.schema([("c", arrow_type)])
    batch = pa.record_batch([pa.array(arrow_values, arrow_type)], schema=schema)
    [(columns, rows)] = _fetches(schema, [type_id], [batch], 100)
    assert rows == len(arrow_values)
    assert columns == _row_path(case, expected_values)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_fetches_cut_across_batch_boundaries_and_empty_batches(case):
    spark_type, type_id, arrow_type, values, row_values = case
    row_values = row_values or values
    schema = pa.schema([("c", arrow_type)])
    sizes = [5, 0, 11, 1, 0, 7]         # 24 rows in batches of odd sizes, two of them empty
    arrow_values, expected_values = [], []
    for index in range(sum(sizes)):
        null = index % 3 == 1
        arrow_values.append(None if null else values[index % len(values)])
        expected_values.append(None if null else row_values[index % len(values)])
    batches, start = [], 0
    for size in sizes:
        batches.append(pa.record_batch([pa.array(arrow_values[start:start + size], arrow_type)], schema=schema))
        start += size
    fetches = _fetches(schema, [type_id], batches, 9)
    assert [rows for _, rows in fetches] == [9, 9, 6]
    for number, (columns, rows) in enumerate(fetches):
        assert columns == _row_path(case, expected_values[number * 9:number * 9 + rows])


def test_an_empty_result_and_a_fetch_after_the_end():
    schema = pa.schema([("a", pa.int64()), ("s", pa.string())])
    empty = pa.record_batch([pa.array([], pa.int64()), pa.array([], pa.string())], schema=schema)
    sql_schema = [("a", "bigint", "BIGINT_TYPE"), ("s", "string", "STRING_TYPE")]
    for batches in ([], [empty, empty]):
        result = ArrowResult(schema, ["BIGINT_TYPE", "STRING_TYPE"], iter(batches))
        for _ in range(2):
            columns, rows = result.take(10)
            assert rows == 0
            assert decoded_columns(columns, 2) == list_columns(sql_schema, [[], []])


def test_several_columns_keep_their_order_and_exact_fetch_sizes():
    schema = pa.schema([("a", pa.int64()), ("s", pa.string())])
    batch = pa.record_batch([pa.array(range(20)), pa.array([str(i) for i in range(20)])], schema=schema)
    sql_schema = [("a", "bigint", "BIGINT_TYPE"), ("s", "string", "STRING_TYPE")]
    fetches = _fetches(schema, ["BIGINT_TYPE", "STRING_TYPE"], [batch], 10)
    assert [rows for _, rows in fetches] == [10, 10, 0]
    assert fetches[1][0] == list_columns(
        sql_schema, [list(range(10, 20)), [str(i) for i in range(10, 20)]])


def test_nulls_bitmap_of_a_sliced_array_is_lsb_first_and_clean_past_the_end():
    array = pa.array([None, 1, None, 3, 4, 5, 6, 7, 8, None, 10, None])
    assert nulls_bitmap(array) == bytes([0b00000101, 0b00001010])
    assert nulls_bitmap(array.slice(2, 9)) == bytes([0b10000001, 0b0])
    assert nulls_bitmap(pa.array([1, 2, 3])) == bytes(1)
    assert nulls_bitmap(pa.array([], pa.int64())) == b""


def test_a_batch_that_does_not_match_the_schema_is_refused():
    table = pa.table({"a": pa.array([1])})
    with pytest.raises(ValueError, match="1 columns for a schema of 2"):
        arrow_columns(["BIGINT_TYPE", "INT_TYPE"], table)


def test_sliced_and_multi_chunk_columns_encode_only_their_own_values():
    """A fetch re-cut from the middle of batches: Arrow arrays with offsets, several chunks."""
    ids = pa.array([None, *range(1, 30)], pa.int64())
    strings = pa.array([None if i % 4 == 0 else "v" * i for i in range(30)], pa.string())
    flags = pa.array([i % 3 == 0 if i % 5 else None for i in range(30)], pa.bool_())
    table = pa.Table.from_arrays([pa.chunked_array([ids.slice(3, 5), ids.slice(20, 4)]),
                                  pa.chunked_array([strings.slice(3, 5), strings.slice(20, 4)]),
                                  pa.chunked_array([flags.slice(3, 5), flags.slice(20, 4)])], names=["i", "s", "b"])
    type_ids = ["BIGINT_TYPE", "STRING_TYPE", "BOOLEAN_TYPE"]
    expected = [[*ids[3:8].to_pylist(), *ids[20:24].to_pylist()],
                [*strings[3:8].to_pylist(), *strings[20:24].to_pylist()],
                [*flags[3:8].to_pylist(), *flags[20:24].to_pylist()]]
    schema = [("i", "bigint", "BIGINT_TYPE"), ("s", "string", "STRING_TYPE"), ("b", "boolean", "BOOLEAN_TYPE")]
    assert decoded_columns(arrow_columns(type_ids, table), 3) == list_columns(schema, expected)


def _numbers(count: int, size: int) -> tuple[pa.Schema, list]:
    schema = pa.schema([("a", pa.int64())])
    return schema, [pa.record_batch([pa.array(range(start, min(start + size, count)), pa.int64())], schema=schema)
                    for start in range(0, count, size)]


def _taken(result: ArrowResult, count: int) -> list:
    columns, rows = result.take(count)
    values = decoded_columns(columns, 1)[0].i64Val.values
    assert len(values) == rows
    return values


def test_a_prepared_fetch_is_served_or_cut_again_to_the_size_asked_for():
    schema, batches = _numbers(25, 7)
    result = ArrowResult(schema, ["BIGINT_TYPE"], iter(batches))
    assert _taken(result, 4) == [0, 1, 2, 3]
    result.prepare(4)
    assert _taken(result, 4) == [4, 5, 6, 7]           # as prepared
    result.prepare(4)
    assert _taken(result, 9) == list(range(8, 17))     # larger: the prepared rows put back first
    result.prepare(9)
    assert _taken(result, 2) == [17, 18]               # smaller
    result.prepare(2)
    assert _taken(result, 10) == list(range(19, 25))
    result.prepare(10)
    assert _taken(result, 10) == []


def test_an_error_while_preparing_is_raised_by_the_next_fetch():
    schema, batches = _numbers(10, 5)

    def failing():                      # the batch after a fetch is read when the fetch is cut
        yield from batches
        raise RuntimeError("the second partition failed")

    result = ArrowResult(schema, ["BIGINT_TYPE"], failing())
    assert _taken(result, 5) == [0, 1, 2, 3, 4]
    result.prepare(5)
    with pytest.raises(RuntimeError, match="second partition"):
        result.take(5)
