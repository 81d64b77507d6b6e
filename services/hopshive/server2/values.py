"""Spark types and values as HiveServer2 shows them: Hive type names, and complex values
formatted the way Hive (and the Spark Thrift Server) print them (``[1,2]``, ``{"k":1}``)."""

from __future__ import annotations

import datetime
import decimal
import json
from typing import Any

# Spark simpleString prefix -> (Hive type name, TTypeId name).
TYPES = {
    "boolean": ("boolean", "BOOLEAN_TYPE"), "tinyint": ("tinyint", "TINYINT_TYPE"),
    "smallint": ("smallint", "SMALLINT_TYPE"), "int": ("int", "INT_TYPE"), "bigint": ("bigint", "BIGINT_TYPE"),
    "float": ("float", "FLOAT_TYPE"), "double": ("double", "DOUBLE_TYPE"), "string": ("string", "STRING_TYPE"),
    "binary": ("binary", "BINARY_TYPE"), "date": ("date", "DATE_TYPE"), "timestamp": ("timestamp", "TIMESTAMP_TYPE"),
    "timestamp_ntz": ("timestamp", "TIMESTAMP_TYPE"), "decimal": ("decimal", "DECIMAL_TYPE"),
    "array": ("array", "ARRAY_TYPE"), "map": ("map", "MAP_TYPE"), "struct": ("struct", "STRUCT_TYPE"),
    "void": ("void", "NULL_TYPE"), "char": ("char", "CHAR_TYPE"), "varchar": ("varchar", "VARCHAR_TYPE"),
    "interval": ("string", "STRING_TYPE"),
}
COMPLEX = {"array", "map", "struct"}


def type_name(simple: str) -> tuple[str, str]:
    """A Spark simpleString (``decimal(10,2)``, ``array<int>``) -> (Hive name, TTypeId name)."""
    head = simple.split("<", 1)[0].split("(", 1)[0].strip()
    hive, type_id = TYPES.get(head, ("string", "STRING_TYPE"))
    if head in COMPLEX or head in ("decimal", "char", "varchar"):
        hive = simple
    return hive, type_id


def _nested(value: Any) -> str:
    """A value inside a complex value: strings quoted, as Hive's toHiveString does."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return hive_string(value, nested=True)


def hive_string(value: Any, nested: bool = False) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{" + ",".join(f"{_nested(k)}:{_nested(v)}" for k, v in value.items()) + "}"
    if hasattr(value, "asDict"):            # a Row (struct)
        return "{" + ",".join(f"{json.dumps(k)}:{_nested(v)}" for k, v in value.asDict().items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_nested(v) for v in value) + "]"
    if isinstance(value, datetime.datetime):
        text = value.strftime("%Y-%m-%d %H:%M:%S")
        return text + (f".{value.microsecond:06d}".rstrip("0") if value.microsecond else "")
    if isinstance(value, (bytes, bytearray)):
        return value.decode("utf-8", "replace")
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return repr(value)
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    return str(value)


NATIVE = {"BOOLEAN_TYPE", "TINYINT_TYPE", "SMALLINT_TYPE", "INT_TYPE", "BIGINT_TYPE", "FLOAT_TYPE", "DOUBLE_TYPE"}


def column_values(type_id: str, values: list) -> list:
    """One column of a batch as its TColumn carries it (native numbers pass unchanged)."""
    if type_id in NATIVE:
        return values
    if type_id == "STRING_TYPE" and all(v is None or type(v) is str for v in values):
        return values
    return [column_value(type_id, v) for v in values]


def column_value(type_id: str, value: Any) -> Any:
    """A value as the TColumn of ``type_id`` carries it."""
    if value is None:
        return None
    if type_id in NATIVE:
        return value
    if type_id == "BINARY_TYPE":
        return bytes(value)
    return hive_string(value)
