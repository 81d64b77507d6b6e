"""Result schemas and columnar rowsets (HiveServer2 protocol V6+)."""

from __future__ import annotations

from impala_thrift_gen.TCLIService import ttypes as t

_COLUMN = {
    "BOOLEAN_TYPE": ("boolVal", t.TBoolColumn, False), "TINYINT_TYPE": ("byteVal", t.TByteColumn, 0),
    "SMALLINT_TYPE": ("i16Val", t.TI16Column, 0), "INT_TYPE": ("i32Val", t.TI32Column, 0),
    "BIGINT_TYPE": ("i64Val", t.TI64Column, 0), "FLOAT_TYPE": ("doubleVal", t.TDoubleColumn, 0.0),
    "DOUBLE_TYPE": ("doubleVal", t.TDoubleColumn, 0.0), "BINARY_TYPE": ("binaryVal", t.TBinaryColumn, b""),
}
_STRING = ("stringVal", t.TStringColumn, "")


def _qualifiers(hive: str) -> t.TTypeQualifiers | None:
    if hive.startswith("decimal(") and hive.endswith(")"):
        precision, scale = hive[8:-1].split(",")
        return t.TTypeQualifiers({"precision": t.TTypeQualifierValue(i32Value=int(precision)),
                                  "scale": t.TTypeQualifierValue(i32Value=int(scale))})
    if hive.startswith(("char(", "varchar(")):
        return t.TTypeQualifiers({"characterMaximumLength": t.TTypeQualifierValue(
            i32Value=int(hive.split("(", 1)[1].rstrip(")")))})
    return None


def schema_of(columns: list) -> t.TTableSchema:
    """``[(name, hive type, TTypeId name)]`` -> TTableSchema."""
    return t.TTableSchema([
        t.TColumnDesc(columnName=name, position=position, comment="", typeDesc=t.TTypeDesc([t.TTypeEntry(
            primitiveEntry=t.TPrimitiveTypeEntry(getattr(t.TTypeId, type_id), _qualifiers(hive)))]))
        for position, (name, hive, type_id) in enumerate(columns, start=1)])


def _nulls(values: list) -> bytes:
    bits = bytearray((len(values) + 7) // 8)
    for index, value in enumerate(values):
        if value is None:
            bits[index >> 3] |= 1 << (index & 7)
    return bytes(bits)


def column(type_id: str, values: list, nulls: bytes) -> t.TColumn:
    """Wire-ready values (None where ``nulls`` has a bit set) -> the TColumn of ``type_id``."""
    field, kind, filler = _COLUMN.get(type_id, _STRING)
    if any(nulls):
        values = [filler if v is None else v for v in values]
    return t.TColumn(**{field: kind(values=values, nulls=nulls)})


def list_columns(schema: list, columns: list[list]) -> list[t.TColumn]:
    """Columns of wire-ready values (None for NULL) -> TColumns."""
    return [column(type_id, values, _nulls(values)) for (_, _, type_id), values in zip(schema, columns)]


def type_info_rows() -> tuple[list, list]:
    """GetTypeInfo: the types Spark SQL offers, JDBC's columns."""
    names = [("BOOLEAN", 16), ("TINYINT", -6), ("SMALLINT", 5), ("INT", 4), ("BIGINT", -5), ("FLOAT", 6),
             ("DOUBLE", 8), ("STRING", 12), ("BINARY", -2), ("DECIMAL", 3), ("DATE", 91), ("TIMESTAMP", 93),
             ("ARRAY", 2003), ("MAP", 2000), ("STRUCT", 2002)]
    schema = [("TYPE_NAME", "string", "STRING_TYPE"), ("DATA_TYPE", "int", "INT_TYPE"),
              ("PRECISION", "int", "INT_TYPE"), ("NULLABLE", "smallint", "SMALLINT_TYPE"),
              ("CASE_SENSITIVE", "boolean", "BOOLEAN_TYPE"), ("SEARCHABLE", "smallint", "SMALLINT_TYPE")]
    rows = [(name, code, None, 1, name == "STRING", 3) for name, code in names]
    return schema, rows
