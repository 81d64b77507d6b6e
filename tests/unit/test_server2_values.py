"""server2's value formatting and columnar rowsets (no servers)."""

from __future__ import annotations

import datetime
import decimal

from hopshive.server2.rowsets import list_columns, schema_of
from hopshive.server2.values import column_value, hive_string, type_name
from hopshive.server2.wire import encode_columns
from tests.support.tcli import decoded_columns


def test_complex_values_print_as_hive_does():
    assert hive_string([1, None, "a"]) == '[1,null,"a"]'
    assert hive_string({"k": [1.5]}) == '{"k":[1.5]}'
    assert hive_string(datetime.datetime(2024, 1, 2, 3, 4, 5, 120000)) == "2024-01-02 03:04:05.12"
    assert hive_string(decimal.Decimal("1.50")) == "1.50"
    assert column_value("STRING_TYPE", True) == "true"


def test_type_names():
    assert type_name("decimal(10,2)") == ("decimal(10,2)", "DECIMAL_TYPE")
    assert type_name("array<int>") == ("array<int>", "ARRAY_TYPE")
    assert type_name("bigint") == ("bigint", "BIGINT_TYPE")
    decimal_entry = schema_of([("d", "decimal(10,2)", "DECIMAL_TYPE")]).columns[0].typeDesc.types[0].primitiveEntry
    assert decimal_entry.typeQualifiers.qualifiers["scale"].i32Value == 2


def test_nulls_are_a_bitmap_and_values_are_filled():
    columns = [[1, None, 3, None, None, None, None, None, 9], ["x", None, "z", "", "", "", "", "", ""]]
    encoded = encode_columns(list_columns([("a", "int", "INT_TYPE"), ("s", "string", "STRING_TYPE")], columns))
    ints, strings = decoded_columns(encoded, 2)
    assert ints.i32Val.values == [1, 0, 3, 0, 0, 0, 0, 0, 9]
    assert ints.i32Val.nulls == bytes([0b11111010, 0])
    assert strings.stringVal.values == ["x", "", "z", "", "", "", "", "", ""]
    assert strings.stringVal.nulls == bytes([0b10, 0])


def test_batches_of_a_column():
    from hopshive.server2.values import column_values
    assert column_values("BIGINT_TYPE", [1, None]) == [1, None]
    assert column_values("STRING_TYPE", ["a", None]) == ["a", None]
    assert column_values("STRING_TYPE", [[1], None]) == ["[1]", None]
