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


def column_rowset(schema: list, columns: list[list], offset: int) -> t.TRowSet:
    """Columns of wire-ready values (None for NULL) -> a columnar TRowSet."""
    built = []
    for (_, _, type_id), values in zip(schema, columns):
        field, kind, filler = _COLUMN.get(type_id, _STRING)
        nulls = _nulls(values)
        if any(nulls):
            values = [filler if v is None else v for v in values]
        built.append(t.TColumn(**{field: kind(values=values, nulls=nulls)}))
    return t.TRowSet(startRowOffset=offset, rows=[], columns=built, columnCount=len(built))


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
