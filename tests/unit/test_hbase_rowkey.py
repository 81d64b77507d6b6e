"""The partition row key's three requirements (see ``stores.hbase.rowkey``), by property."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from hopshive.metastore.filter.keytypes import key_type
from hopshive.metastore.stores.hbase import rowkey
from hopshive.metastore.stores.hbase.rowkey import key_field

TYPES = ["tinyint", "smallint", "int", "bigint", "decimal(20,5)", "date", "timestamp", "string"]


def _value(hive_type: str):
    kind = key_type(hive_type)
    if kind.bounds:
        return st.integers(*kind.bounds).map(str)
    if hive_type.startswith("decimal"):
        return st.decimals(min_value=-10**15, max_value=10**15, places=5, allow_nan=False).map(str)
    if hive_type == "date":
        return st.dates(date(1, 1, 1), date(9999, 12, 31)).map(date.isoformat)
    if hive_type == "timestamp":
        return st.datetimes().map(_spark_timestamp)
    return st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)


def _spark_timestamp(moment: datetime) -> str:
    """A timestamp partition value as Spark writes it: fraction without trailing zeros."""
    text = f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d} {moment.hour:02d}:{moment.minute:02d}:" \
           f"{moment.second:02d}"
    return text + ("." + f"{moment.microsecond:06d}".rstrip("0") if moment.microsecond else "")


def _typed(hive_type: str, raw: str):
    """The value as it orders: numbers and dates typed, timestamps by time (not by text)."""
    kind = key_type(hive_type)
    if kind.domain == "number":
        return Decimal(raw)
    if kind.domain == "date":
        return date.fromisoformat(raw)
    if hive_type == "timestamp":
        return datetime.fromisoformat(raw)
    return raw


@st.composite
def _tables(draw):
    types = draw(st.lists(st.sampled_from(TYPES), min_size=1, max_size=4))
    rows = draw(st.lists(st.tuples(*[_value(t) for t in types]), min_size=2, max_size=6))
    db = draw(st.sampled_from(["default", "d", "db\x00x"]))
    return types, db, rows


def _key(db, types, values):
    return rowkey.row_key(db, "t", [key_type(t) for t in types], values)


@settings(max_examples=300, deadline=None)
@given(_tables())
def test_byte_order_is_typed_order(table):
    """Requirement 2: keys sort as the typed value tuples (negatives, empty strings, prefixes)."""
    types, db, rows = table
    typed = lambda row: tuple(_typed(t, v) for t, v in zip(types, row))  # noqa: E731
    by_bytes = sorted(rows, key=lambda row: _key(db, types, row))
    by_value = sorted(rows, key=typed)
    assert [typed(r) for r in by_bytes] == [typed(r) for r in by_value]


@settings(max_examples=300, deadline=None)
@given(_tables(), st.data())
def test_fields_compare_as_values_without_decoding(table, data):
    """Requirement 1: a condition on one field is a byte comparison with the literal's field,
    and requirement 3: the field is found from the trailer alone (the server's reader)."""
    types, db, rows = table
    index = data.draw(st.integers(0, len(types) - 1))
    kind = key_type(types[index])
    literal = data.draw(_value(types[index]))
    encoded_literal = rowkey.encode_field(kind, literal)
    for row in rows:
        key = _key(db, types, row)
        field = key_field(key, index)
        assert field == rowkey.encode_field(kind, row[index])
        a, b = _typed(types[index], row[index]), _typed(types[index], literal)
        assert (field < encoded_literal) == (a < b) and (field == encoded_literal) == (a == b)
        assert _typed(types[index], rowkey.decode_field(kind.domain, field)) == a


@settings(max_examples=100, deadline=None)
@given(_tables())
def test_keys_are_utf8_that_orders_as_the_bytes(table):
    """HBase's regexstring comparator reads a row as UTF-8: every key must decode without
    loss, and the decoded texts must order as the keys do (code-point order)."""
    types, db, rows = table
    keys = sorted({_key(db, types, row) for row in rows})
    texts = [key.decode("utf-8") for key in keys]        # strict: raises on any invalid byte
    assert texts == sorted(texts) and len(set(texts)) == len(keys)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=6), min_size=1, max_size=4), st.lists(st.text(max_size=6), min_size=1, max_size=4))
def test_locating_a_field_ignores_what_precedes_it(left, right):
    """Requirement 3: the last field's bytes come from the trailer, whatever the others hold."""
    types = ["string"] * len(left)
    key_a = _key("d", types, left)
    key_b = _key("d", types + ["string"], left + right[:1])
    assert key_field(key_b, len(left)) == rowkey.encode_string(right[0]).join([b"\x01", b""])
    assert [key_field(key_a, i) for i in range(len(left))] == [b"\x01" + rowkey.encode_string(v) for v in left]


def test_untyped_values_sort_first_and_never_equal_typed_ones():
    kind = key_type("int")
    default = rowkey.encode_field(kind, "__HIVE_DEFAULT_PARTITION__")
    assert default < rowkey.encode_field(kind, "-999999") and default[:1] == rowkey.UNTYPED
    assert rowkey.encode_field(kind, "05") == rowkey.encode_field(kind, "5")
    assert rowkey.decode_field("number", rowkey.encode_field(kind, "-12")) == "-12"


def test_prefix_successor():
    assert rowkey.prefix_successor(b"ab") == b"ac"
    assert rowkey.prefix_successor(b"a\xff\xff") == b"b"
    assert rowkey.prefix_successor(b"\xff") == b""
