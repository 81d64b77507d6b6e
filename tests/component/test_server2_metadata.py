"""JDBC metadata through server2 (GetSchemas, GetTables, GetColumns, GetFunctions,
GetTypeInfo), as BI tools call it on connect: with PyHive's cursor and with Hive JDBC's
beeline (`!tables`, `!columns`, `!procedures`, `!dbinfo`), by a user of one project while
another project exists.  The expected rows are the Spark Thrift Server's answers for the same
table (measured with pyspark 4.3's HiveThriftServer2)."""

from __future__ import annotations

import re

import pytest
from pyhive import hive

from tests.support.platform_fixtures import platform_stack  # noqa: F401 (fixture)
from tests.support.server2 import Server2Process, add_owners, beeline, metadata

pytestmark = [pytest.mark.server2, pytest.mark.spark]
PASSWORD = "server2-metadata-password"
ANN, BOB = "ann@example.org", "bob@example.org"
T1 = ("CREATE TABLE t1 (id INT COMMENT 'the id', name STRING, b BOOLEAN, ti TINYINT, si SMALLINT, bi BIGINT, "
      "f FLOAT, d DOUBLE, dec DECIMAL(10,2), bigdec DECIMAL(30,5), dt DATE, ts TIMESTAMP, bin BINARY, "
      "arr ARRAY<INT>, m MAP<STRING,INT>, st STRUCT<a:INT,b:STRING>, c CHAR(5), vc VARCHAR(10)) "
      "USING parquet COMMENT 'first table'")
# GetColumns of T1 from the Spark Thrift Server: (COLUMN_NAME, DATA_TYPE, TYPE_NAME, COLUMN_SIZE,
# DECIMAL_DIGITS, NUM_PREC_RADIX, REMARKS); every other column as in column_row() below.
STS_T1 = [("id", 4, "INT", 4, 0, 10, "the id"), ("name", 12, "STRING", None, None, None, ""),
          ("b", 16, "BOOLEAN", 1, 0, None, ""), ("ti", -6, "TINYINT", 1, None, 10, ""),
          ("si", 5, "SMALLINT", 2, None, 10, ""), ("bi", -5, "BIGINT", 8, None, 10, ""),
          ("f", 6, "FLOAT", 4, 7, 10, ""), ("d", 8, "DOUBLE", 8, 15, 10, ""),
          ("dec", 3, "DECIMAL(10,2)", 8, 2, 10, ""), ("bigdec", 3, "DECIMAL(30,5)", 16, 5, 10, ""),
          ("dt", 91, "DATE", 4, None, None, ""), ("ts", 93, "TIMESTAMP", 8, 6, None, ""),
          ("bin", -2, "BINARY", None, None, None, ""), ("arr", 2003, "ARRAY<INT>", None, None, None, ""),
          ("m", 2000, "MAP<STRING, INT>", None, None, None, ""),
          ("st", 2002, "STRUCT<a: INT, b: STRING>", None, None, None, ""),
          ("c", 1, "CHAR(5)", 5, None, None, ""), ("vc", 12, "VARCHAR(10)", None, None, None, "")]
TABLES_COLUMNS = [(name, "STRING_TYPE") for name in ("TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "TABLE_TYPE", "REMARKS",
                                                      "TYPE_CAT", "TYPE_SCHEM", "TYPE_NAME",
                                                      "SELF_REFERENCING_COL_NAME", "REF_GENERATION")]
COLUMNS_COLUMNS = [
    ("TABLE_CAT", "STRING_TYPE"), ("TABLE_SCHEM", "STRING_TYPE"), ("TABLE_NAME", "STRING_TYPE"),
    ("COLUMN_NAME", "STRING_TYPE"), ("DATA_TYPE", "INT_TYPE"), ("TYPE_NAME", "STRING_TYPE"),
    ("COLUMN_SIZE", "INT_TYPE"), ("BUFFER_LENGTH", "TINYINT_TYPE"), ("DECIMAL_DIGITS", "INT_TYPE"),
    ("NUM_PREC_RADIX", "INT_TYPE"), ("NULLABLE", "INT_TYPE"), ("REMARKS", "STRING_TYPE"), ("COLUMN_DEF", "STRING_TYPE"),
    ("SQL_DATA_TYPE", "INT_TYPE"), ("SQL_DATETIME_SUB", "INT_TYPE"), ("CHAR_OCTET_LENGTH", "INT_TYPE"),
    ("ORDINAL_POSITION", "INT_TYPE"), ("IS_NULLABLE", "STRING_TYPE"), ("SCOPE_CATALOG", "STRING_TYPE"),
    ("SCOPE_SCHEMA", "STRING_TYPE"), ("SCOPE_TABLE", "STRING_TYPE"), ("SOURCE_DATA_TYPE", "SMALLINT_TYPE"),
    ("IS_AUTO_INCREMENT", "STRING_TYPE")]


def column_row(table: str, position: int, name, code, type_name, size, digits, radix, remarks) -> tuple:
    return (None, "alpha", table, name, code, type_name, size, None, digits, radix, 1, remarks, None, None, None,
            None, position, "YES", None, None, None, None, "NO")


@pytest.fixture(scope="module")
def server2(platform_stack):
    """ann owns alpha (a table of every type and a view), bob owns beta (a table)."""
    platform = platform_stack["platform"]
    add_owners(platform, PASSWORD, {ANN: "alpha", BOB: "beta"})
    server = Server2Process(platform_stack["base"] / "server2", platform.url, platform_stack["metastore"].port,
                            platform_stack["namenode"].address).start()
    with connect(server, BOB, "beta") as bob:
        bob.cursor().execute("CREATE TABLE secret (x INT) USING parquet")
    with connect(server, ANN, "alpha") as ann:
        for sql in (T1, "CREATE VIEW v1 AS SELECT id FROM t1"):
            ann.cursor().execute(sql)
    yield server
    code = server.stop(60)
    assert code == 0, server.log_tail()


def connect(server, email: str = ANN, database: str = "alpha"):
    return hive.connect(host="127.0.0.1", port=server.port, username=email, password=PASSWORD, auth="CUSTOM",
                        database=database)


def test_a_user_lists_what_it_may_read_and_no_error(server2):
    with connect(server2) as conn:
        conn.cursor().execute("CREATE TEMPORARY VIEW tv AS SELECT 1 AS one")
        columns, schemas = metadata(conn, "GetSchemas")
        assert columns == [("TABLE_SCHEM", "STRING_TYPE"), ("TABLE_CATALOG", "STRING_TYPE")]
        assert [name for name, _ in schemas] == ["alpha", "default", "global_temp"], "beta is left out"
        columns, tables = metadata(conn, "GetTables")
        assert columns == TABLES_COLUMNS
        nulls = (None,) * 5
        assert tables == [("", "alpha", "t1", "TABLE", "first table", *nulls), ("", "alpha", "v1", "VIEW", "", *nulls),
                          ("", None, "tv", "VIEW", "", *nulls)]
        # A local temporary view has no schema: it is listed whatever the pattern (as by the STS).
        assert [row[1:3] for row in metadata(conn, "GetTables", schemaName="beta")[1]] == [(None, "tv")]
        assert [row[2] for row in metadata(conn, "GetTables", schemaName="al%", tableName="t_",
                                           tableTypes=["TABLE"])[1]] == ["t1"]
        assert [row[1:4] for row in metadata(conn, "GetColumns", schemaName="beta")[1]] == [(None, "tv", "one")]
    with connect(server2, BOB, "beta") as conn:
        assert [row[1:3] for row in metadata(conn, "GetTables")[1]] == [("beta", "secret")]


def test_columns_as_the_spark_thrift_server_gives_them(server2):
    with connect(server2) as conn:
        columns, rows = metadata(conn, "GetColumns", schemaName="alpha", tableName="t1")
        assert columns == COLUMNS_COLUMNS
        assert rows == [column_row("t1", position, *sts) for position, sts in enumerate(STS_T1, start=1)]
        assert metadata(conn, "GetColumns", tableName="v%", columnName="I_")[1] == [
            column_row("v1", 1, *STS_T1[0])]


def test_functions_catalogs_and_types(server2):
    with connect(server2) as conn:
        columns, rows = metadata(conn, "GetFunctions", schemaName="alpha", functionName="upper")
        assert [name for name, _ in columns] == ["FUNCTION_CAT", "FUNCTION_SCHEM", "FUNCTION_NAME", "REMARKS",
                                                 "FUNCTION_TYPE", "SPECIFIC_NAME"]
        assert [(r[0], r[1], r[2], r[4], r[5]) for r in rows] == [
            ("", "alpha", "upper", 0, "org.apache.spark.sql.catalyst.expressions.Upper")]
        assert rows[0][3].startswith("Usage: upper(str) - Returns `str` with all characters changed to uppercase.")
        assert {r[1] for r in metadata(conn, "GetFunctions", functionName="upper")[1]} == {"alpha", "default"}
        assert metadata(conn, "GetCatalogs") == ([("TABLE_CAT", "STRING_TYPE")], [])
        columns, types = metadata(conn, "GetTypeInfo")
        assert len(columns) == 18 and columns[:3] == [("TYPE_NAME", "STRING_TYPE"), ("DATA_TYPE", "INT_TYPE"),
                                                      ("PRECISION", "INT_TYPE")]
        by_name = {row[0]: row for row in types}
        assert len(types) == 20
        assert by_name["TINYINT"] == ("TINYINT", -6, 3, None, None, None, 1, False, 3, False, False, False, None,
                                      0, 0, None, None, 10)
        assert by_name["STRING"] == ("STRING", 12, None, None, None, None, 1, True, 3, True, False, False, None,
                                     0, 0, None, None, None)


def test_impyla_cursor_metadata(server2):
    """impyla's metadata calls (its patterns are regexes, ``.*``), as Impala-minded tools make them."""
    from impala.dbapi import connect as impyla_connect
    conn = impyla_connect(host="127.0.0.1", port=server2.port, user=ANN, password=PASSWORD, auth_mechanism="PLAIN",
                          database="alpha")
    try:
        cursor = conn.cursor()
        cursor.get_databases()
        assert [row[0] for row in cursor.fetchall()] == ["alpha", "default", "global_temp"]
        cursor.get_tables()
        assert [row[1:4] for row in cursor.fetchall()] == [("alpha", "t1", "TABLE"), ("alpha", "v1", "VIEW")]
        assert cursor.get_table_schema("v1", "alpha") == [("id", "INT")]
        assert cursor.table_exists("t1", "alpha") and not cursor.table_exists("secret")
    finally:
        conn.close()


@pytest.mark.parametrize("url_tail", [";auth=noSasl", ""], ids=["nosasl", "sasl"])
def test_beeline_metadata_commands(server2, tmp_path, url_tail):
    script = tmp_path / "commands.txt"
    script.write_text("!tables\n!columns t1\n!procedures\n!dbinfo\n")
    done = beeline("127.0.0.1", server2.port, "alpha", ANN, PASSWORD, "", url_tail, options=("-f", str(script)))
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert ",alpha,t1,TABLE,first table,NULL,NULL,NULL,NULL,NULL" in lines
    assert ",alpha,v1,VIEW,,NULL,NULL,NULL,NULL,NULL" in lines
    assert "NULL,alpha,t1,id,4,INT,4,NULL,0,10,1,the id,NULL,NULL,NULL,NULL,1,YES,NULL,NULL,NULL,NULL,NO" in lines
    assert "PROCEDURE_CAT,PROCEDURE_SCHEM,PROCEDURE_NAME,RESERVERD,RESERVERD,RESERVERD,REMARKS,PROCEDURE_TYPE," \
           "SPECIFIC_NAME" in lines
    # !dbinfo prints the methods Hive JDBC does not support on stderr: their lines run together.
    assert re.search(r"getDatabaseProductName +Spark SQL\n", done.stdout), done.stdout
    assert re.search(r"getMaxColumnNameLength +128\n", done.stdout), done.stdout
    assert "beta" not in done.stdout and "Permission denied" not in done.stdout + done.stderr
