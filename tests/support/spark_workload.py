"""The Spark DDL/DML workload of notes/facts.md, run in its own JVM: ``--catalog hive``
against a metastore URI with the warehouse on webhdfs, or ``--catalog derby``: Spark's
built-in Hive catalog (an embedded Derby metastore in the Spark JVM) on local disk, the
reference (the in-memory catalog cannot hold Hive serde tables).  Prints one JSON object: statement ->
sorted result rows (or the error class), so two runs can be compared."""

from __future__ import annotations

import argparse
import json
import sys

SETUP = [
    # databases, unpartitioned and partitioned datasource tables, static and dynamic inserts
    "CREATE DATABASE IF NOT EXISTS w1 COMMENT 'workload'",
    "CREATE TABLE w1.t (a INT, b STRING) USING parquet",
    "INSERT INTO w1.t VALUES (1, 'x'), (2, 'y'), (3, 'z')",
    "INSERT INTO w1.t SELECT a + 10, b FROM w1.t",
    "CREATE TABLE w1.p (a INT, ds STRING, h INT) USING parquet PARTITIONED BY (ds, h)",
    "INSERT INTO w1.p PARTITION (ds='2024-01-01', h=1) VALUES (1)",
    "INSERT INTO w1.p VALUES (2, '2024-01-02', 3), (3, '2024-01-02', 7), (4, '2024-02-01', 5)",
    # Hive serde tables: static insert, overwrite of a partition, dynamic insert
    "CREATE TABLE w1.h (a INT, b STRING) PARTITIONED BY (ds STRING) STORED AS TEXTFILE",
    "INSERT INTO w1.h PARTITION (ds='a') VALUES (1, 'one')",
    "INSERT OVERWRITE TABLE w1.h PARTITION (ds='a') VALUES (2, 'two')",
    "SET hive.exec.dynamic.partition.mode=nonstrict",
    "INSERT INTO w1.h PARTITION (ds) SELECT a, b, 'b' FROM w1.t WHERE a < 3",
    "CREATE TABLE w1.hs (a INT, b STRING) STORED AS TEXTFILE",
    "INSERT INTO w1.hs VALUES (5, 'five')",
    "INSERT OVERWRITE TABLE w1.hs SELECT 6, 'six'",
    # CTAS (datasource and Hive serde), views, external table over existing data
    "CREATE TABLE w1.c USING parquet AS SELECT a, b FROM w1.t WHERE a > 2",
    "CREATE TABLE w1.c2 STORED AS PARQUET AS SELECT a * 2 AS a2 FROM w1.t",
    "CREATE VIEW w1.v AS SELECT a, b FROM w1.t WHERE a >= 2",
    "CREATE TABLE w1.ext (id BIGINT) USING parquet LOCATION '{ext}'",
    # functions
    "CREATE FUNCTION w1.myabs AS 'org.apache.hadoop.hive.ql.udf.generic.GenericUDFAbs'",
    # ALTER TABLE variants
    "ALTER TABLE w1.t ADD COLUMNS (c DOUBLE)",
    "ALTER TABLE w1.t SET TBLPROPERTIES ('k1'='v1')",
    "ALTER TABLE w1.p ADD PARTITION (ds='2024-03-01', h=9)",
    "ALTER TABLE w1.p DROP PARTITION (ds='2024-01-01', h=1)",
    "ALTER TABLE w1.h PARTITION (ds='b') RENAME TO PARTITION (ds='bb')",
    "ALTER TABLE w1.c RENAME TO w1.c_renamed",
    "CREATE DATABASE w2",
    "CREATE TABLE w2.gone (a INT) USING parquet",
    "INSERT INTO w2.gone VALUES (1)",
    "CREATE TABLE w2.keep (a INT) PARTITIONED BY (ds STRING) STORED AS PARQUET",
    "INSERT INTO w2.keep PARTITION (ds='x') VALUES (1)",
    "DROP TABLE w2.gone",
    # partition-filter table: every filter string of facts.md is produced by a query below
    "CREATE TABLE w1.f (v INT, ds STRING, h INT, n BIGINT, s INT) USING parquet PARTITIONED BY (ds, h, n, s)",
    "INSERT INTO w1.f VALUES (1, '2024-01-01', 1, 5, 1), (2, '2024-01-02', 3, 6, 2), (3, '2024-01-15', 7, 10000000000, 1),"
    " (4, 'it''s', 2, 7, 0), (5, 'a', 8, 5, 3), (6, 'b', 4, 10000000000, 1), (7, '2023-12-01', 9, 8, 1)",
    "CREATE TABLE w1.dt (v INT, d DATE) USING parquet PARTITIONED BY (d)",
    "INSERT INTO w1.dt VALUES (1, DATE'2024-01-10'), (2, DATE'2024-01-20'), (3, DATE'2024-02-01')",
]

QUERIES = [
    "SHOW DATABASES",
    "SHOW TABLES IN w1",
    "SELECT a, b FROM w1.t",
    "SELECT * FROM w1.p",
    "SHOW PARTITIONS w1.p",
    "SELECT * FROM w1.h",
    "SHOW PARTITIONS w1.h",
    "SELECT * FROM w1.hs",
    "SELECT * FROM w1.c_renamed",
    "SELECT * FROM w1.c2",
    "SELECT * FROM w1.v",
    "SELECT count(*) FROM w1.ext",
    "SELECT w1.myabs(-3)",
    "SHOW USER FUNCTIONS IN w1",
    "SHOW TBLPROPERTIES w1.t ('k1')",
    "SELECT * FROM w1.t WHERE c IS NULL",
    "SHOW TABLES IN w2",
    "SELECT * FROM w2.keep",
    # facts.md filter strings
    "SELECT v FROM w1.f WHERE ds = '2024-01-02'",
    "SELECT v FROM w1.f WHERE ds > '2024-01-01' AND h < 5",
    "SELECT v FROM w1.f WHERE ds IN ('a', 'b')",
    "SELECT v FROM w1.f WHERE h IN (1, 3)",
    "SELECT v FROM w1.f WHERE n NOT IN (5, 6)",
    "SELECT v FROM w1.f WHERE ds LIKE '2024%'",
    "SELECT v FROM w1.f WHERE ds LIKE '%01'",
    "SELECT v FROM w1.f WHERE ds LIKE '%-01-%'",
    "SELECT v FROM w1.f WHERE h >= 2 AND h <= 8",
    "SELECT v FROM w1.f WHERE ds != 'a'",
    "SELECT v FROM w1.f WHERE ds = '2024-01-01' OR h = 7",
    "SELECT v FROM w1.f WHERE ds BETWEEN '2024-01-01' AND '2024-01-15'",
    "SELECT v FROM w1.f WHERE ds = 'it''s'",
    "SELECT v FROM w1.dt WHERE d > '2024-01-15'",
    "SELECT v FROM w1.f WHERE n = 10000000000 AND s < 2",
    "SELECT v FROM w1.f WHERE ds LIKE 'a_b%' OR ds IS NULL",
]

# Datasource INSERT OVERWRITE deletes the table's (or the partition's) directory and writes a
# new one: the foreign-key cascade removes the metadata with the directory (see the report in
# test_metastore_spark.py).  Kept apart so the main comparison stays meaningful.
OVERWRITE = [
    "CREATE TABLE w1.o (a INT) USING parquet",
    "INSERT INTO w1.o VALUES (1)",
    "INSERT OVERWRITE TABLE w1.o SELECT 2",
    "SELECT * FROM w1.o",
    "CREATE TABLE w1.op (a INT, ds STRING) USING parquet PARTITIONED BY (ds)",
    "INSERT INTO w1.op VALUES (1, 'a'), (2, 'b')",
    "INSERT OVERWRITE TABLE w1.op PARTITION (ds='a') SELECT 3",
    "SELECT * FROM w1.op",
]

TEARDOWN = [
    "ALTER TABLE w1.p DROP PARTITION (ds='2024-03-01', h=9)",
    "DROP VIEW w1.v",
    "DROP FUNCTION w1.myabs",
    "DROP DATABASE w2 CASCADE",
    "DROP DATABASE w1 CASCADE",
    "SHOW DATABASES",
]


def session(args):
    from pyspark.sql import SparkSession
    builder = (SparkSession.builder.master("local[2]").appName(f"workload-{args.catalog}")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.warehouse.dir", args.warehouse)
               .config("spark.sql.catalogImplementation", "hive")
               .config("spark.sql.sources.ignoreDataLocality", "true"))
    if args.catalog == "hive":
        builder = builder.config("spark.hadoop.hive.metastore.uris", args.uris)
    else:
        builder = (builder.config("spark.hadoop.javax.jdo.option.ConnectionURL",
                                  f"jdbc:derby:;databaseName={args.derby}/metastore_db;create=true")
                   .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={args.derby}"))
    return builder.enableHiveSupport().getOrCreate()


def run(spark, statements, ext) -> dict:
    results = {}
    for statement in statements:
        text = statement.format(ext=ext)
        try:
            rows = spark.sql(text).collect()
            results[statement] = sorted([[str(value) for value in row] for row in rows])
        except Exception as exc:  # noqa: BLE001 -- the error class is part of the result
            results[statement] = {"error": type(exc).__name__, "message": str(exc).splitlines()[0][:300]}
    return results


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--catalog", choices=["hive", "derby"], required=True)
    parser.add_argument("--derby", default="", help="directory for the embedded Derby metastore")
    parser.add_argument("--warehouse", required=True)
    parser.add_argument("--ext", required=True, help="path for the external table's data")
    parser.add_argument("--uris", default="")
    args = parser.parse_args()
    spark = session(args)
    spark.sparkContext.setLogLevel("ERROR")
    try:
        spark.range(5).write.mode("overwrite").parquet(args.ext)
        results = {"setup": run(spark, SETUP, args.ext), "queries": run(spark, QUERIES, args.ext),
                   "overwrite": run(spark, OVERWRITE, args.ext),
                   "teardown": run(spark, TEARDOWN, args.ext)}
    finally:
        spark.stop()
    print("WORKLOAD-RESULT " + json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
