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


# GetTypeInfo: (name, java.sql.Types code, precision, searchable, case sensitive, unsigned)
# as the Spark Thrift Server answers (Hive's Type table less what Spark lacks).
TYPE_INFO = [("VOID", 0, None, 3, False, True), ("BOOLEAN", 16, None, 3, False, True),
             ("STRING", 12, None, 3, True, True), ("BINARY", -2, None, 3, False, True),
             ("TINYINT", -6, 3, 3, False, False), ("SMALLINT", 5, 5, 3, False, False),
             ("INT", 4, 10, 3, False, False), ("BIGINT", -5, 19, 3, False, False), ("FLOAT", 6, 7, 3, False, False),
             ("DOUBLE", 8, 15, 3, False, False), ("DECIMAL", 3, 38, 3, False, False),
             ("DATE", 91, None, 3, False, True), ("TIMESTAMP", 93, None, 3, False, True),
             ("ARRAY", 2003, None, 0, False, True), ("MAP", 2000, None, 0, False, True),
             ("STRUCT", 2002, None, 0, False, True), ("CHAR", 1, None, 3, False, True),
             ("VARCHAR", 12, None, 3, False, True), ("INTERVAL_YEAR_MONTH", 1111, None, 3, False, True),
             ("INTERVAL_DAY_TIME", 1111, None, 3, False, True)]
TYPE_INFO_SCHEMA = [(name, hive, f"{hive.upper()}_TYPE") for name, hive in (
    ("TYPE_NAME", "string"), ("DATA_TYPE", "int"), ("PRECISION", "int"), ("LITERAL_PREFIX", "string"),
    ("LITERAL_SUFFIX", "string"), ("CREATE_PARAMS", "string"), ("NULLABLE", "smallint"),
    ("CASE_SENSITIVE", "boolean"), ("SEARCHABLE", "smallint"), ("UNSIGNED_ATTRIBUTE", "boolean"),
    ("FIXED_PREC_SCALE", "boolean"), ("AUTO_INCREMENT", "boolean"), ("LOCAL_TYPE_NAME", "string"),
    ("MINIMUM_SCALE", "smallint"), ("MAXIMUM_SCALE", "smallint"), ("SQL_DATA_TYPE", "int"),
    ("SQL_DATETIME_SUB", "int"), ("NUM_PREC_RADIX", "int"))]


def type_info_rows() -> tuple[list, list]:
    """GetTypeInfo: the types Spark SQL offers, in HiveServer2's 18 columns."""
    rows = [(name, code, precision, None, None, None, 1, case, searchable, unsigned, False, False, None, 0, 0,
             None, None, 10 if precision else None)
            for name, code, precision, searchable, case, unsigned in TYPE_INFO]
    return TYPE_INFO_SCHEMA, rows
