"""JDBC metadata (GetSchemas, GetTables, GetColumns, GetFunctions), read in a user's engine
from the session's catalog, with the result set columns HiveServer2 defines for them (Hive's
``Get*Operation.RESULT_SET_SCHEMA``: java.sql.DatabaseMetaData's columns) and the values
the Spark Thrift Server gives.

BI tools list every schema on connect.  The metastore refuses to list a database its
directory does not let the user read ("Permission denied: user=..."); such a database is
left out of every listing here, as is a table the metastore leaves out of
get_table_objects_by_name, so another project never fails the listing.  Any other error
fails it.  The catalog is Spark's SessionCatalog (what the Spark Thrift Server reads): a
few metastore calls per database (its tables' names, then all of them at once), none per
table.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable

DENIED = "Permission denied: user="      # the metastore's refusal (storage-based authorization)
ANY = re.compile(".*", re.S)


def _strings(*names: str) -> list:
    return [(n, "string", "STRING_TYPE") for n in names]


def _ints(*names: str) -> list:
    return [(n, "int", "INT_TYPE") for n in names]


SCHEMAS = _strings("TABLE_SCHEM", "TABLE_CATALOG")
TABLES = _strings("TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "TABLE_TYPE", "REMARKS", "TYPE_CAT", "TYPE_SCHEM",
                  "TYPE_NAME", "SELF_REFERENCING_COL_NAME", "REF_GENERATION")
COLUMNS = (_strings("TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "COLUMN_NAME") + _ints("DATA_TYPE")
           + _strings("TYPE_NAME") + _ints("COLUMN_SIZE") + [("BUFFER_LENGTH", "tinyint", "TINYINT_TYPE")]
           + _ints("DECIMAL_DIGITS", "NUM_PREC_RADIX", "NULLABLE") + _strings("REMARKS", "COLUMN_DEF")
           + _ints("SQL_DATA_TYPE", "SQL_DATETIME_SUB", "CHAR_OCTET_LENGTH", "ORDINAL_POSITION")
           + _strings("IS_NULLABLE", "SCOPE_CATALOG", "SCOPE_SCHEMA", "SCOPE_TABLE")
           + [("SOURCE_DATA_TYPE", "smallint", "SMALLINT_TYPE")] + _strings("IS_AUTO_INCREMENT"))
FUNCTIONS = (_strings("FUNCTION_CAT", "FUNCTION_SCHEM", "FUNCTION_NAME", "REMARKS") + _ints("FUNCTION_TYPE")
             + _strings("SPECIFIC_NAME"))
FUNCTION_RESULT_UNKNOWN = 0         # java.sql.DatabaseMetaData.functionResultUnknown

# Spark simpleString head -> java.sql.Types code (the Spark Thrift Server's toJavaSQLType).
SQL_TYPES = {"void": 0, "boolean": 16, "tinyint": -6, "smallint": 5, "int": 4, "bigint": -5, "float": 6,
             "double": 8, "decimal": 3, "string": 12, "varchar": 12, "char": 1, "binary": -2, "date": 91,
             "timestamp": 93, "timestamp_ntz": 93, "array": 2003, "map": 2000, "struct": 2002}
OTHER = 1111                        # intervals and anything newer
SIZED = {"void", "boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "decimal", "date",
         "timestamp", "timestamp_ntz", "interval"}
ZERO_DIGITS = {"boolean", "int"}     # the STS's list (JDBC would give 0 for every integral type)
NUMERIC = {"tinyint", "smallint", "int", "bigint", "float", "double", "decimal"}


def jdbc_pattern(pattern: str | None) -> re.Pattern:
    """A search pattern as HiveServer2 reads it (CLIServiceUtils.patternToRegex): ``%`` any
    run, ``_`` one character, ``\\`` escapes them, anything else is a regex as is (so the
    ``.*`` impyla sends matches everything); case-insensitive.  None or empty matches all."""
    if not pattern:
        return ANY
    parts, escaped = [], False
    for char in pattern:
        if escaped:
            parts.append(re.escape(char))
            escaped = False
        elif char == "\\":
            escaped = True
        else:
            parts.append({"%": ".*", "_": "."}.get(char, char))
    try:
        return re.compile("".join(parts), re.I | re.S)
    except re.error as exc:
        raise ValueError(f"bad search pattern {pattern!r}: {exc}") from None


def _head(simple: str) -> str:
    return re.split(r"[<(]", simple, maxsplit=1)[0].strip()


def _column_size(data_type) -> int | None:
    """COLUMN_SIZE as the Spark Thrift Server gives it: the type's default size for numbers,
    dates and intervals, n for char(n), the sum of its fields' for a struct."""
    head = _head(data_type.simpleString())
    if head in SIZED or head.startswith("interval"):
        return int(data_type.defaultSize())
    if head == "char":
        return int(data_type.length())
    if head == "struct":
        sizes = [_column_size(f.dataType()) for f in data_type.fields()]
        return None if None in sizes else sum(sizes)
    return None


def _decimal_digits(head: str, data_type) -> int | None:
    if head in ZERO_DIGITS:
        return 0
    if head in ("timestamp", "timestamp_ntz"):
        return 6
    if head == "decimal":
        return int(data_type.scale())
    return {"float": 7, "double": 15}.get(head)


def column_row(database: str, table: str, position: int, field) -> tuple:
    """One GetColumns row of a Spark StructField (a JVM object)."""
    data_type = field.dataType()
    head = _head(data_type.simpleString())
    comment = field.getComment()
    return (None, database, table, field.name(), SQL_TYPES.get(head, OTHER), data_type.sql(),
            _column_size(data_type), None, _decimal_digits(head, data_type), 10 if head in NUMERIC else None,
            1 if field.nullable() else 0, comment.get() if comment.isDefined() else "", None, None, None, None,
            position, "YES" if field.nullable() else "NO", None, None, None, None, "NO")


class Listings:
    """The listings of one engine session (a SparkSession)."""

    def __init__(self, session):
        self.catalog = session._jsparkSession.sessionState().catalog()
        self.scala = session._jvm.scala.jdk.javaapi.CollectionConverters
        self.global_temp = session.conf.get("spark.sql.globalTempDatabase", "global_temp")

    def _list(self, seq) -> list:
        return list(self.scala.asJava(seq))

    def _readable(self, call: Callable, *args):
        """``call(*args)``, or None when the metastore refuses the user."""
        try:
            return call(*args)
        except Exception as exc:        # noqa: BLE001 -- a Py4JJavaError; only a refusal is expected
            if DENIED in str(exc):
                return None
            raise

    def databases(self, pattern: str | None) -> list[str]:
        wanted = jdbc_pattern(pattern)
        return [db for db in sorted(self._list(self.catalog.listDatabases())) if wanted.fullmatch(db)]

    def tables(self, schema: str | None, table: str | None) -> Iterable[tuple[str | None, object]]:
        """(database, CatalogTable) of every table the user may read, by database and name,
        then the session's temporary views (the global ones when ``schema`` matches their
        database; a local one has no database)."""
        wanted = jdbc_pattern(table)
        for db in self.databases(schema):
            names = self._readable(self.catalog.listTables, db, "*", False)
            if names is None:
                continue
            matching = [i for i in self._list(names) if wanted.fullmatch(i.table())]
            if not matching:
                continue
            found = self._readable(self.catalog.getTablesByName, self.scala.asScala(matching).toSeq())
            for entry in sorted(self._list(found) if found is not None else [], key=lambda t: t.identifier().table()):
                yield db, entry
        if jdbc_pattern(schema).fullmatch(self.global_temp):
            views = self.catalog.listTables(self.global_temp, "*", True)
        else:
            views = self.catalog.listLocalTempViews("*")
        for identifier in self._list(views):
            if wanted.fullmatch(identifier.table()):
                database = identifier.database()
                yield (database.get() if database.isDefined() else None,
                       self.catalog.getTempViewOrPermanentTableMetadata(identifier))

    def schemas(self, args: dict) -> list:
        rows = [(db, "") for db in self.databases(args.get("schema"))
                if self._readable(self.catalog.getDatabaseMetadata, db) is not None]
        if jdbc_pattern(args.get("schema")).fullmatch(self.global_temp):
            rows.append((self.global_temp, ""))
        return rows

    def table_rows(self, args: dict) -> list:
        types = {t.upper() for t in args.get("types") or ()}
        rows = []
        for db, entry in self.tables(args.get("schema"), args.get("table")):
            kind = "VIEW" if db in (None, self.global_temp) or entry.tableType().name() == "VIEW" else "TABLE"
            if not types or kind in types:
                comment = entry.comment()
                rows.append(("", db, entry.identifier().table(), kind, comment.get() if comment.isDefined() else "",
                             None, None, None, None, None))
        return rows

    def column_rows(self, args: dict) -> list:
        wanted = jdbc_pattern(args.get("column"))
        rows = []
        for db, entry in self.tables(args.get("schema"), args.get("table")):
            fields = entry.schema().fields()
            for position, field in enumerate(fields, start=1):
                if wanted.fullmatch(field.name()):
                    rows.append(column_row(db, entry.identifier().table(), position, field))
        return rows

    def function_rows(self, args: dict) -> list:
        """Every function callable in each readable database (the built-in ones and its own),
        as the Spark Thrift Server lists them."""
        wanted = jdbc_pattern(args.get("function"))
        rows = []
        for db in self.databases(args.get("schema")):
            listed = self._readable(self.catalog.listFunctions, db, "*")
            for pair in self._list(listed) if listed is not None else []:
                identifier = pair._1()
                if wanted.fullmatch(identifier.funcName()):
                    info = self.catalog.lookupFunctionInfo(identifier)
                    rows.append(("", db, identifier.funcName(),
                                 f"Usage: {info.getUsage()}\nExtended Usage:{info.getExtended()}",
                                 FUNCTION_RESULT_UNKNOWN, info.getClassName()))
        return sorted(rows, key=lambda row: (row[1], row[2]))


LISTINGS = {"schemas": (SCHEMAS, Listings.schemas), "tables": (TABLES, Listings.table_rows),
            "columns": (COLUMNS, Listings.column_rows), "functions": (FUNCTIONS, Listings.function_rows)}


def listing(session, kind: str, args: dict) -> tuple[list, list]:
    """(result schema, rows) of the listing ``kind`` for ``session``."""
    if kind not in LISTINGS:
        raise ValueError(f"unknown listing {kind}")
    schema, rows = LISTINGS[kind]
    return schema, rows(Listings(session), args)
