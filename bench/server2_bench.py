"""server2 next to the Spark Thrift Server (started from the pyspark jars), same run, same
metastore and namenode, same Spark settings (local[1], 512 MB driver):

- connect + `select 1` + close (a fresh session each time; ours logs in to the platform API
  with SASL PLAIN, the reference takes any user name over NOSASL);
- `select 1` on an open session;
- a small query (1,000 rows, 2 columns) fetched whole;
- a large fetch (--rows rows, 2 columns, 10,000 rows per FetchResults);
- the same large fetch through Hive JDBC (beeline from the pyspark jars, csv2 output), whose
  client decodes in the JVM: beeline's time for it minus its time for `select 1` (its JVM
  start-up and login cancel out);
- the same large fetch through TCLIService from the JVM (bench/jvm/TCLIFetch.java, NOSASL,
  10,000 rows per FetchResults), a client whose own cost is small: the servers' time, and of
  it the time until the operation is FINISHED (the statement has run; the rest is serving);
  3 rounds of 3 runs, the servers alternating, so that what ran before weighs on both alike;
- throughput of --sessions concurrent sessions (one user: one engine of ours, as the
  reference's one), each running a small Spark job (`count(*)` of 100,000 rows) in a loop
  for --seconds.

Prints a markdown table (p50 in ms; ours / reference).  Starts a private MariaDB, namenode,
metastore, platform API and server2 from tests/support, like the component tests.

    .venv-test/bin/python bench/server2_bench.py [--repeat 30] [--rows 1000000]
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pyhive import hive  # noqa: E402
from reference_hms import pyspark_jars  # noqa: E402

from hopshive.core.db import Database  # noqa: E402
from tests.support.mariadb import MariaDBServer, _free_port  # noqa: E402
from tests.support.metastore import MetastoreProcess, settings  # noqa: E402
from tests.support.namenode import NamenodeServer  # noqa: E402
from tests.support.polling import wait_until  # noqa: E402
from tests.support.schemas import reset_schemas  # noqa: E402
from tests.support.server2 import PlatformProcess, Server2Process, beeline  # noqa: E402

EMAIL, PASSWORD = "bench@example.org", "bench-password-1"


class SparkThriftServer:
    """HiveThriftServer2 from the pyspark wheel, NOSASL, on a free port."""

    def __init__(self, base: Path, metastore_port: int, namenode: str):
        import pyspark
        self.port = _free_port()
        self.log = open(base / "sts.log", "wb")
        home = Path(pyspark.__file__).parent
        self.process = subprocess.Popen(
            [str(home / "bin" / "spark-submit"), "--class", "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2",
             "--master", "local[1]", "--driver-memory", "512m", "--conf", "spark.ui.enabled=false",
             "--conf", f"spark.hadoop.hive.metastore.uris=thrift://127.0.0.1:{metastore_port}",
             "--conf", f"spark.sql.warehouse.dir=webhdfs://{namenode}/user/hive/warehouse",
             "--conf", f"spark.hadoop.fs.defaultFS=webhdfs://{namenode}", "--conf", "spark.sql.shuffle.partitions=4",
             "--hiveconf", f"hive.server2.thrift.port={self.port}", "--hiveconf", "hive.server2.thrift.bind.host=127.0.0.1",
             "--hiveconf", "hive.server2.authentication=NOSASL", "spark-internal"],
            stdout=self.log, stderr=subprocess.STDOUT, env=dict(os.environ, HADOOP_USER_NAME="hdfs",
                                                                 SPARK_HOME=str(home)), start_new_session=True)

    def connect(self):
        return hive.connect(host="127.0.0.1", port=self.port, username="hdfs", auth="NOSASL")

    def ready(self) -> bool:
        try:
            self.connect().close()
            return True
        except Exception:       # noqa: BLE001 -- not up yet
            if self.process.poll() is not None:
                raise RuntimeError("the Spark Thrift Server exited")
            return False

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()


def p50(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def measure(connect, repeat: int, rows: int) -> dict:
    results = {}
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        conn = connect()
        cursor = conn.cursor()
        cursor.execute("SELECT 1")
        assert cursor.fetchall() == [(1,)]
        conn.close()
        samples.append(time.perf_counter() - start)
    results["connect + select 1 + close"] = p50(samples)
    conn = connect()
    cursor = conn.cursor()
    for name, sql, expected, times in (
            ("select 1 (open session)", "SELECT 1", 1, repeat),
            ("1,000 rows x 2 columns", "SELECT id, id * 2 FROM range(1000)", 1000, repeat),
            (f"{rows:,} rows x 2 columns (bigint, string)", large_query(rows), rows, 3)):
        samples = []
        for _ in range(times):
            start = time.perf_counter()
            cursor.execute(sql)
            got = 0
            while True:
                batch = cursor.fetchmany(10000)
                if not batch:
                    break
                got += len(batch)
            assert got == expected, (name, got)
            samples.append(time.perf_counter() - start)
        results[name] = p50(samples)
    conn.close()
    return results


def jdbc_fetch(port: int, database: str, user: str, password: str, url_tail: str, rows: int, repeat: int) -> float:
    """ms beeline takes for ``rows`` rows beyond what it takes for `select 1` (p50s)."""
    def run(sql: str) -> float:
        start = time.perf_counter()
        done = beeline("127.0.0.1", port, database, user, password, sql, url_tail,
                       options=("--incremental=true",), heap="1g", timeout=900)
        assert done.returncode == 0, done.stderr[-2000:]
        return time.perf_counter() - start
    return p50([run(f"{large_query(rows)};") for _ in range(repeat)]) - p50([run("SELECT 1;") for _ in range(repeat)])


def large_query(rows: int) -> str:
    """The large fetch of every client: ``rows`` rows of a bigint and a string."""
    return f"SELECT id, CAST(id AS STRING) AS s FROM range({rows})"


@functools.cache
def tclifetch_classpath() -> str:
    """bench/jvm/TCLIFetch.java compiled (once per run) against the pyspark jars."""
    jars = f"{pyspark_jars()}/*"
    classes = Path(tempfile.mkdtemp(prefix="tclifetch-"))
    subprocess.run(["javac", "-cp", jars, "-d", str(classes), str(Path(__file__).parent / "jvm" / "TCLIFetch.java")],
                   check=True)
    return f"{jars}:{classes}"


def jvm_fetch(port: int, database: str, user: str, password: str, rows: int, repeat: int) -> list[tuple[float, float]]:
    """ms from ExecuteStatement to the last of ``rows`` rows, and to FINISHED (the statement
    has run: the rest is serving the rows), of each of ``repeat`` runs of TCLIFetch's client
    in the JVM (one session)."""
    done = subprocess.run(
        ["java", "-Xmx512m", "-cp", tclifetch_classpath(), "TCLIFetch", "127.0.0.1", str(port), user, password,
         database, large_query(rows), "10000", str(repeat)],
        capture_output=True, text=True, check=True, timeout=900)
    runs = [line.split() for line in done.stdout.splitlines() if line.startswith("ms ")]
    assert len(runs) == repeat and all(int(run[3]) == rows for run in runs), done.stdout
    return [(float(run[1]), float(run[5])) for run in runs]


def interleaved_jvm_fetches(ours: dict, reference: dict, rows: int, rounds: int = 3, repeat: int = 3) -> dict:
    """p50s of both servers' JVM fetches, in ``rounds`` alternating rounds of ``repeat`` runs:
    what one server ran before (its heap, its caches) weighs on both alike."""
    runs = {"ours": [], "reference": []}
    for _ in range(rounds):
        for name, server in (("ours", ours), ("reference", reference)):
            runs[name] += jvm_fetch(rows=rows, repeat=repeat, **server)
    return {name: (statistics.median(total for total, _ in samples),
                   statistics.median(finished for _, finished in samples))
            for name, samples in runs.items()}


def throughput(connect, sessions: int, seconds: float) -> float:
    """Statements per second of ``sessions`` sessions, each in a thread of its own."""
    done, errors, start = [], [], threading.Event()

    def work() -> None:
        try:
            conn = connect()
            cursor = conn.cursor()
            start.wait()
            end, count = time.monotonic() + seconds, 0
            while time.monotonic() < end:
                cursor.execute("SELECT count(*) FROM range(100000)")
                assert cursor.fetchall() == [(100000,)]
                count += 1
            done.append(count)
            conn.close()
        except Exception as exc:        # noqa: BLE001 -- reported below
            errors.append(exc)
    threads = [threading.Thread(target=work) for _ in range(sessions)]
    for thread in threads:
        thread.start()
    time.sleep(1.0)                     # every session open before the clock starts
    start.set()
    for thread in threads:
        thread.join()
    if errors:
        raise RuntimeError(f"sessions failed: {errors[:3]}")
    return sum(done) / seconds


def both_servers(base: Path, stack: list) -> tuple[Server2Process, SparkThriftServer]:
    """A private MariaDB, namenode, metastore, platform API (user EMAIL owning project
    "bench"), server2 and the Spark Thrift Server on the same metastore and namenode, each
    appended to ``stack`` as it starts (stop them in reverse order)."""
    mariadb = MariaDBServer(base / "db").start()
    stack.append(mariadb)
    reset_schemas(Database(mariadb.config))
    namenode = NamenodeServer(base / "nn", mariadb.config, workers=1).start()
    stack.append(namenode)
    metastore = MetastoreProcess(base / "ms", settings(mariadb.config, namenode.address)).start()
    stack.append(metastore)
    platform = PlatformProcess(base / "pf", mariadb.config, namenode.url, metastore.port,
                               max_failures=1000, max_address_failures=100000).start()
    stack.append(platform)
    platform.cli("user", "add", "--email", EMAIL, "--password-stdin", stdin=PASSWORD + "\n")
    platform.cli("project", "create", "bench", "--owner", EMAIL)
    print("starting server2 and the Spark Thrift Server", file=sys.stderr)
    server2 = Server2Process(base / "s2", platform.url, metastore.port, namenode.address,
                             engine_idle_timeout=3600.0).start()
    stack.append(server2)
    sts = SparkThriftServer(base, metastore.port, namenode.address)
    stack.append(sts)
    wait_until(sts.ready, 300, lambda _: "the Spark Thrift Server never answered")
    return server2, sts


def stop_all(stack: list) -> None:
    for service in reversed(stack):
        try:
            service.stop()
        except Exception as exc:    # noqa: BLE001 -- keep stopping the others
            print(f"stopping {type(service).__name__}: {exc}", file=sys.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="server2-bench-"))
    stack = []
    try:
        server2, sts = both_servers(base, stack)

        def ours():
            return hive.connect(host="127.0.0.1", port=server2.port, username=EMAIL, password=PASSWORD,
                                auth="CUSTOM", database="bench")
        ours().close()              # start the engine (measured apart: engine start-up)
        print("measuring", file=sys.stderr)
        reference = measure(sts.connect, args.repeat, args.rows)
        mine = measure(ours, args.repeat, args.rows)
        mine[f"{args.rows:,} rows through Hive JDBC (beeline)"] = jdbc_fetch(
            server2.port, "bench", EMAIL, PASSWORD, "", args.rows, 3)
        reference[f"{args.rows:,} rows through Hive JDBC (beeline)"] = jdbc_fetch(
            sts.port, "default", "hdfs", "", ";auth=noSasl", args.rows, 3)
        jvm_row = f"{args.rows:,} rows through TCLIService from the JVM"
        jvm = interleaved_jvm_fetches(
            dict(port=server2.port, database="bench", user=EMAIL, password=PASSWORD),
            dict(port=sts.port, database="default", user="hdfs", password=""), args.rows)
        mine[jvm_row], mine[f"{jvm_row}: until FINISHED"] = jvm["ours"]
        reference[jvm_row], reference[f"{jvm_row}: until FINISHED"] = jvm["reference"]
        reference_rate = throughput(sts.connect, args.sessions, args.seconds)
        our_rate = throughput(ours, args.sessions, args.seconds)
        print("| p50, ms | server2 (ours) | Spark Thrift Server | ours / reference |")
        print("|---|---:|---:|---:|")
        for name, value in mine.items():
            print(f"| {name} | {value:.1f} | {reference[name]:.1f} | {value / reference[name]:.2f} |")
        print(f"| {args.sessions} concurrent sessions, statements/s (higher is better) | {our_rate:.1f} | "
              f"{reference_rate:.1f} | {our_rate / reference_rate:.2f} |")
        return 0
    finally:
        stop_all(stack)


if __name__ == "__main__":
    sys.exit(main())
