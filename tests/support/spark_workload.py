"""The Spark DDL/DML workload of notes/facts.md, run in a JVM of its own, shared by the
component tests (tests/component/test_metastore_spark.py) and the e2e harness
(harness/test_metastore_spark.py).

The child (this file run as a script, ``--serve``) builds one SparkSession and then runs
the statement lists it is sent, one JSON request per stdin line, answering each with
result rows per statement (or the error class), so two sessions can be compared:

  ``--catalog hive``      Hive catalog on the metastore(s) of ``--uris``, warehouse wherever
                          ``--warehouse`` says (webhdfs://...);
  ``--catalog derby``     Spark's built-in Hive catalog (an embedded Derby metastore in the
                          JVM) on local disk: the reference (the in-memory catalog cannot
                          hold Hive serde tables);
  ``--catalog defaults``  nothing but ``--warehouse``: the catalog, metastore URIs and file
                          system come from $SPARK_CONF_DIR (what a user of the host gets).

The parent side is :class:`SparkProcess`.  Database names w1 and w2 of the statements can
be prefixed (``prefix``), so a run on a shared metastore works in names of its own; results
stay keyed by the statement as written here.  Without ``--serve`` the whole workload runs
once and the process exits (the original one-shot form).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

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

# Datasource INSERT OVERWRITE: Spark's own commit protocol deletes the table's (or the
# partition's) directory and writes a new one, and the inode foreign key would take the
# metadata with it; HopsHive's KeepDirectoriesCommitProtocol (roles/spark) empties the
# directories instead.  Static and dynamic partition overwrite, whole table and one
# partition; then TRUNCATE TABLE, which Spark also implements as delete-and-recreate.
OVERWRITE = [
    "CREATE TABLE w1.o (a INT) USING parquet",
    "INSERT INTO w1.o VALUES (1)",
    "INSERT OVERWRITE TABLE w1.o SELECT 2",
    "SELECT * FROM w1.o",
    "CREATE TABLE w1.op (a INT, ds STRING) USING parquet PARTITIONED BY (ds)",
    "INSERT INTO w1.op VALUES (1, 'a'), (2, 'b')",
    "INSERT OVERWRITE TABLE w1.op PARTITION (ds='a') SELECT 3",
    "SELECT * FROM w1.op /* one partition overwritten */",
    "INSERT OVERWRITE TABLE w1.op SELECT 4, 'a'",
    "SHOW PARTITIONS w1.op /* the whole table overwritten */",
    "SELECT * FROM w1.op /* the whole table overwritten */",
    "SET spark.sql.sources.partitionOverwriteMode=dynamic",
    "INSERT INTO w1.op VALUES (5, 'c')",
    "INSERT OVERWRITE TABLE w1.op SELECT 6, 'a' UNION ALL SELECT 7, 'd'",
    "SET spark.sql.sources.partitionOverwriteMode=static",
    "SHOW PARTITIONS w1.op /* dynamic overwrite */",
    "SELECT * FROM w1.op /* dynamic overwrite */",
    # TRUNCATE TABLE deletes and re-creates the directories in Spark; HopsHiveExtensions
    # plans it as emptying them.  Partitions stay listed, empty; external tables refuse.
    "TRUNCATE TABLE w1.o",
    "SELECT * FROM w1.o /* truncated */",
    "TRUNCATE TABLE w1.op PARTITION (ds='a')",
    "SELECT * FROM w1.op /* one partition truncated */",
    "TRUNCATE TABLE w1.op PARTITION (ds='zz')",
    "TRUNCATE TABLE w1.op",
    "SHOW PARTITIONS w1.op /* truncated */",
    "SELECT * FROM w1.op /* truncated */",
    "INSERT INTO w1.op VALUES (8, 'a')",
    "SELECT * FROM w1.op /* written after the truncate */",
    "CREATE TABLE w1.ot (a INT) PARTITIONED BY (ds STRING) STORED AS PARQUET",
    "INSERT INTO w1.ot PARTITION (ds='a') VALUES (1)",
    "INSERT INTO w1.ot PARTITION (ds='b') VALUES (2)",
    "TRUNCATE TABLE w1.ot PARTITION (ds='b')",
    "SELECT * FROM w1.ot /* Hive serde partition truncated */",
    "SHOW PARTITIONS w1.ot",
    "TRUNCATE TABLE w1.ext",
    "SELECT count(*) FROM w1.ext /* after the refused truncate */",
    "TRUNCATE TABLE w1.v",
    "SHOW TABLES IN w1",
]

TEARDOWN = [
    "ALTER TABLE w1.p DROP PARTITION (ds='2024-03-01', h=9)",
    "DROP VIEW w1.v",
    "DROP FUNCTION w1.myabs",
    "DROP DATABASE w2 CASCADE",
    "DROP DATABASE w1 CASCADE",
    "SHOW DATABASES",
]


# The external table's data, written where {ext} points before the workload runs.
PREPARE = ["INSERT OVERWRITE DIRECTORY '{ext}' USING parquet SELECT id FROM range(5)"]

PHASES = {"prepare": PREPARE, "setup": SETUP, "queries": QUERIES, "overwrite": OVERWRITE, "teardown": TEARDOWN}

READY, PROGRESS, RESULT = "WORKLOAD-READY ", "WORKLOAD-PROGRESS ", "WORKLOAD-RESULT "
SCRIPT = Path(__file__).resolve()
_DATABASE = re.compile(r"\bw([12])\b")
# What the child reports about its session once it is up (spark conf, hadoop conf).
_REPORTED = {
    "catalog": ("spark", "spark.sql.catalogImplementation"),
    "warehouse": ("spark", "spark.sql.warehouse.dir"),
    "uris": ("hadoop", "hive.metastore.uris"),
    "default_fs": ("hadoop", "fs.defaultFS"),
    "failure_retries": ("hadoop", "hive.metastore.failure.retries"),
    "retry_delay": ("hadoop", "hive.metastore.client.connect.retry.delay"),
}


def assert_same_results(ours: dict, reference: dict, phase: str) -> None:
    """Every statement of ``phase`` answered the same on HopsHive as on the built-in catalog."""
    different = {stmt: {"hopshive": ours[phase].get(stmt), "builtin": answer}
                 for stmt, answer in reference[phase].items() if ours[phase].get(stmt) != answer}
    assert not different, json.dumps(different, indent=1)


def localize(statement: str, prefix: str) -> str:
    """The statement with databases w1/w2 renamed to <prefix>w1/<prefix>w2."""
    return _DATABASE.sub(lambda m: f"{prefix}w{m.group(1)}", statement) if prefix else statement


# ------------------------------------------------------------------------- child side
def session(args):
    from pyspark.sql import SparkSession
    builder = (SparkSession.builder.master("local[2]").appName(f"workload-{args.catalog}")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.warehouse.dir", args.warehouse))
    if args.catalog != "defaults":
        builder = (builder.config("spark.sql.catalogImplementation", "hive")
                   .config("spark.sql.sources.ignoreDataLocality", "true"))
    if args.catalog == "hive":
        # The metastores named by --uris say themselves how they authenticate (--conf); a
        # hive-site.xml a deployment left on the classpath (pyspark's conf/) does not decide.
        builder = (builder.config("spark.hadoop.hive.metastore.uris", args.uris)
                   .config("spark.hadoop.hive.metastore.sasl.enabled", "false"))
    elif args.catalog == "derby":
        builder = (builder.config("spark.hadoop.hive.metastore.uris", "")  # embedded, whatever the host says
                   .config("spark.hadoop.javax.jdo.option.ConnectionURL",
                           f"jdbc:derby:;databaseName={args.derby}/metastore_db;create=true")
                   .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={args.derby}"))
    for setting in args.conf:
        key, _, value = setting.partition("=")
        builder = builder.config(key, value)
    if args.catalog != "defaults":
        builder = builder.enableHiveSupport()
    return builder.getOrCreate()


def describe(spark) -> dict:
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    spark_conf = spark.sparkContext.getConf()
    values = {}
    for name, (where, key) in _REPORTED.items():
        if where == "spark":
            values[name] = spark_conf.get(key, None)
        else:
            values[name] = spark_conf.get("spark.hadoop." + key, None) or hadoop.get(key)
    values["spark_conf_dir"] = os.environ.get("SPARK_CONF_DIR")
    return values


def run(spark, statements, ext, prefix: str = "", progress=None) -> dict:
    results = {}
    for statement in statements:
        text = localize(statement, prefix).format(ext=ext)
        try:
            rows = [[str(value) for value in row] for row in spark.sql(text).collect()]
            if prefix and statement == "SHOW DATABASES":  # a shared metastore holds others' databases
                rows = [row for row in rows if row[0] == "default" or row[0].startswith(prefix)]
            results[statement] = sorted(rows)
        except Exception as exc:  # noqa: BLE001 -- the error class is part of the result
            java = getattr(exc, "java_exception", None)    # Py4JJavaError: its own first line says nothing
            message = java.toString() if java is not None else str(exc).splitlines()[0]
            results[statement] = {"error": type(exc).__name__, "message": message[:300]}
        if progress:
            progress(len(results))
    return results


def _emit(tag: str, payload) -> None:
    sys.stdout.write(tag + (payload if isinstance(payload, str) else json.dumps(payload)) + "\n")
    sys.stdout.flush()


def serve(spark) -> None:
    """Answer one request per stdin line until stdin closes.  A request is
    {"phases": {name: [statement, ...]}, "ext": str, "prefix": str}; the answer is
    {phase: {statement: rows or error}} and the seconds it took."""
    _emit(READY, describe(spark))
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        started, done = time.monotonic(), 0

        def progress(_):
            nonlocal done
            done += 1
            _emit(PROGRESS, str(done))
        results = {phase: run(spark, statements, request.get("ext", ""), request.get("prefix", ""), progress)
                   for phase, statements in request["phases"].items()}
        _emit(RESULT, {"results": results, "seconds": round(time.monotonic() - started, 1)})


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--catalog", choices=["hive", "derby", "defaults"], required=True)
    parser.add_argument("--derby", default="", help="directory for the embedded Derby metastore")
    parser.add_argument("--warehouse", required=True)
    parser.add_argument("--ext", default="", help="path for the external table's data (one-shot form)")
    parser.add_argument("--uris", default="")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="more session settings")
    parser.add_argument("--serve", action="store_true", help="answer requests on stdin (see SparkProcess)")
    args = parser.parse_args()
    spark = session(args)
    spark.sparkContext.setLogLevel("ERROR")
    try:
        if args.serve:
            serve(spark)
        else:
            _emit(RESULT, {phase: run(spark, statements, args.ext) for phase, statements in PHASES.items()})
    finally:
        spark.stop()
    return 0


# ------------------------------------------------------------------------ parent side
class SparkProcess:
    """A ``--serve`` child: one SparkSession in its own JVM, kept for many requests.

    ``conf_dir`` becomes the child's SPARK_CONF_DIR; by default an empty directory, so the
    host's client configuration (roles/spark) cannot leak into a session meant to be
    configured by its arguments alone."""

    def __init__(self, args: list[str], log: Path, conf_dir: str | None = None, env: dict | None = None):
        self.log = Path(log)
        self._empty_conf = None if conf_dir else tempfile.TemporaryDirectory(prefix="spark-conf-")
        environment = dict(os.environ, **(env or {}))
        environment["SPARK_CONF_DIR"] = conf_dir or self._empty_conf.name
        environment.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        self._stderr = open(self.log, "wb")
        self.process = subprocess.Popen([sys.executable, str(SCRIPT), "--serve", *args], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=self._stderr, text=True, bufsize=1,
                                        env=environment)
        self._messages: queue.Queue = queue.Queue()
        self.progress = 0
        self.info: dict | None = None
        threading.Thread(target=self._read, daemon=True, name=f"spark-{self.process.pid}").start()

    def _read(self) -> None:
        for line in self.process.stdout:
            for tag in (READY, PROGRESS, RESULT):
                if line.startswith(tag):
                    self._messages.put((tag, line[len(tag):].strip()))
        self._messages.put((None, None))  # the child's stdout closed

    def log_tail(self, chars: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else "(no log)"

    def _next(self, want: str, deadline: float):
        while True:
            try:
                tag, payload = self._messages.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {want.strip()} from the Spark child within the deadline "
                                     f"(progress {self.progress}); its log:\n{self.log_tail()}") from None
            if tag is None:
                self._messages.put((None, None))
                raise AssertionError(f"the Spark child exited ({self.process.poll()}) before {want.strip()}; "
                                     f"its log:\n{self.log_tail()}")
            if tag == PROGRESS:
                self.progress = int(payload)
            if tag == want:
                return payload if tag == PROGRESS else json.loads(payload)

    def ready(self, timeout: float = 300.0) -> dict:
        """Wait until the session is up; returns what it reported about its configuration."""
        if self.info is None:
            self.info = self._next(READY, time.monotonic() + timeout)
        return self.info

    def submit(self, phases: dict, ext: str = "", prefix: str = "") -> None:
        self.progress = 0
        self.process.stdin.write(json.dumps({"phases": phases, "ext": ext, "prefix": prefix}) + "\n")
        self.process.stdin.flush()

    def wait_progress(self, statements: int, timeout: float = 300.0) -> None:
        """Block until the request in flight has finished ``statements`` statements."""
        deadline = time.monotonic() + timeout
        while self.progress < statements:
            self._next(PROGRESS, deadline)

    def result(self, timeout: float = 900.0) -> dict:
        """The answer to the request in flight: {phase: {statement: rows or error}}."""
        return self._next(RESULT, time.monotonic() + timeout)["results"]

    def run(self, phases: dict, ext: str = "", prefix: str = "", timeout: float = 900.0) -> dict:
        self.ready(timeout)
        self.submit(phases, ext, prefix)
        return self.result(timeout)

    def close(self, timeout: float = 60.0) -> int:
        """Stop the session (stdin closes) and wait for the JVM; kill it if it hangs."""
        if self._stderr.closed:
            return self.process.returncode
        try:
            if self.process.stdin and not self.process.stdin.closed:
                self.process.stdin.close()
        except BrokenPipeError:
            pass
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait(timeout)
        self._stderr.close()
        if self._empty_conf:
            self._empty_conf.cleanup()
        return code


if __name__ == "__main__":
    sys.exit(main())
