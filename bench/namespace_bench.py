#!/usr/bin/env python3
"""Namespace service benchmark: Spark Parquet I/O over webhdfs:// against file://, and
metadata throughput (GETFILESTATUS, MKDIRS, small-file CREATE) with 1 and N clients.

    .venv-test/bin/python bench/namespace_bench.py --private --size-mb 200 --duration 10
    .venv-test/bin/python bench/namespace_bench.py --private --secure --skip-spark --duration 10
    HOPSHIVE_TOKEN=$(hopshive-dfs token) .venv-test/bin/python bench/namespace_bench.py \
        --url https://127.0.0.1:9870 --ca-file /etc/hopshive/tls/ca.pem --skip-spark --pids namenode=PID,...

--private starts a stack of its own from this checkout (a MariaDB from tests/support, the
namenode with small files on, and a second one with small files off on the same database
for the block-file CREATE row) and never touches a deployed service; with --secure its
namenodes run as deployed (security.mode token, TLS with a private CA) and the clients send
a delegation token minted for the user.  --url measures a running namenode: a secured one
with a delegation token (--token, $HOPSHIVE_TOKEN, or the namenode's WebHDFS token in
$HADOOP_TOKEN_FILE_LOCATION) sent as delegation= instead of user.name=, over https verified
against --ca-file.  Python clients run in separate processes over keep-alive connections
(http.client); they share the CPUs with the server and the database, so GETFILESTATUS is also
measured with `wrk` (apt-get install wrk) for a figure with little client overhead.  Each row
shows the CPU per operation of the server, the database and the clients, and the rate those
would allow on this host's CPUs if nothing else ran ("CPU bound"), to explain a rate held
down by other work; the verdict is the measured rate's alone.  CREATE is measured with each
client in a directory of its own and with all of them in one.  Everything is done below a
unique /tmp/bench-<id> directory, removed at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import http.client
import json
import multiprocessing as mp
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import quote, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

GOALS = {"ratio": 1.3, "GETFILESTATUS": 3000, "CREATE": 500}
TICK = os.sysconf("SC_CLK_TCK")


# --------------------------------------------------------------- CPU meter
class Meter:
    """CPU seconds used by server processes (each with its children) and by the whole host
    between start() and stop().  CPU per operation is robust to a busy host; throughput is not."""

    def __init__(self, spec: str):
        self.groups: dict[str, int] = {}
        for item in filter(None, (x.strip() for x in spec.split(","))):
            label, _, pid = item.rpartition("=")
            self.groups[label or self._comm(int(pid))] = int(pid)

    @staticmethod
    def _comm(pid: int) -> str:
        try:
            with open(f"/proc/{pid}/comm") as handle:
                return handle.read().strip()
        except OSError:
            return str(pid)

    @staticmethod
    def _family(pid: int) -> list[int]:
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as handle:
                return [pid] + [int(c) for c in handle.read().split()]
        except OSError:
            return [pid]

    @staticmethod
    def _ticks(pid: int) -> int:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            return int(fields[11]) + int(fields[12])
        except OSError:
            return 0

    @staticmethod
    def _host() -> tuple[int, int]:
        with open("/proc/stat") as handle:
            values = [int(v) for v in handle.readline().split()[1:]]
        return sum(values), values[3] + values[4]  # total, idle + iowait

    @staticmethod
    def cpu_wait_us() -> int:
        """Microseconds some runnable task waited for a CPU since boot (Linux PSI; 0 without)."""
        try:
            with open("/proc/pressure/cpu") as handle:
                return int(handle.readline().rsplit("total=", 1)[1])
        except (OSError, IndexError, ValueError):
            return 0

    def start(self) -> None:
        self._before = {label: {p: self._ticks(p) for p in self._family(pid)} for label, pid in self.groups.items()}
        self._host_before = self._host()
        self._wait_before, self._wall_before = self.cpu_wait_us(), time.monotonic()

    def stop(self) -> dict:
        cpu = {label: sum(self._ticks(p) - t for p, t in before.items()) / TICK
               for label, before in self._before.items()}
        total, idle = (a - b for a, b in zip(self._host(), self._host_before))
        wall_us = (time.monotonic() - self._wall_before) * 1e6
        return {"cpu": cpu, "host_busy": 1 - idle / total if total else float("nan"),
                "cpu_wait": (self.cpu_wait_us() - self._wait_before) / wall_us}


# ------------------------------------------------------------------ WebHDFS
class Conn:
    """One keep-alive HTTP(S) connection speaking just enough WebHDFS: as ``user`` (simple
    mode), or proven by a delegation ``token``; https verified against ``ca_file`` (empty:
    the system's trust store)."""

    def __init__(self, url: str, user: str, token: str | None = None, ca_file: str | None = None):
        parts = urlsplit(url)
        secure = parts.scheme == "https"
        self.host, self.port, self.user = parts.hostname, parts.port or (443 if secure else 80), user
        self.auth = {"delegation": token} if token else {"user.name": user}
        if secure:
            from hopshive.core.tls import client_context
            self.http = http.client.HTTPSConnection(self.host, self.port, timeout=60,
                                                    context=client_context(ca_file or ""))
        else:
            self.http = http.client.HTTPConnection(self.host, self.port, timeout=60)

    def call(self, method: str, path: str, op: str, body: bytes | None = None, **params) -> tuple[int, dict, bytes]:
        query = "&".join(f"{k}={quote(str(v))}" for k, v in {"op": op, **self.auth, **params}.items())
        return self.raw(method, f"/webhdfs/v1{quote(path)}?{query}", body)

    def raw(self, method: str, target: str, body: bytes | None = None) -> tuple[int, dict, bytes]:
        headers = {"Content-Type": "application/octet-stream"} if body is not None else {}
        self.http.request(method, target, body=body, headers=headers)
        response = self.http.getresponse()
        data = response.read()
        return response.status, dict(response.getheaders()), data

    def create(self, path: str, data: bytes) -> None:
        status, headers, _ = self.call("PUT", path, "CREATE", overwrite="true")
        assert status == 307, (status, path)
        location = urlsplit(headers["Location"])
        if (location.hostname, location.port or (443 if location.scheme == "https" else 80)) != (self.host, self.port):
            raise RuntimeError(f"data node {location.netloc} differs from {self.host}:{self.port}")
        status, _, body = self.raw("PUT", f"{location.path}?{location.query}", data)
        assert status == 201, (status, body[:200])

    def check(self, method: str, path: str, op: str, **params) -> dict:
        status, _, body = self.call(method, path, op, **params)
        if status != 200:
            raise RuntimeError(f"{op} {path}: HTTP {status}: {body[:300]!r}")
        return json.loads(body) if body else {}


def _worker(kind: str, url: str, user: str, base: str, index: int, start_at: float, duration: float,
            size: int, queue, token: str | None = None, ca_file: str | None = None) -> None:
    conn = Conn(url, user, token, ca_file)
    payload = os.urandom(size)
    if kind == "CREATE_SHARED":     # every client in one directory, names of its own
        own, prefix = f"{base}/shared-{size}", f"c{index}-{uuid.uuid4().hex[:6]}-"
    else:
        own, prefix = f"{base}/{kind.lower()}-{size}-{index}-{uuid.uuid4().hex[:6]}", ""
    if kind != "GETFILESTATUS":
        conn.check("PUT", own, "MKDIRS")
    target = f"{base}/stat/a/b/c/file"
    latencies, count = [], 0
    time.sleep(max(0.0, start_at - time.time()))
    end = time.perf_counter() + duration
    cpu = time.process_time()
    while True:
        t0 = time.perf_counter()
        if t0 >= end:
            break
        if kind == "GETFILESTATUS":
            status, _, _ = conn.call("GET", target, "GETFILESTATUS")
            assert status == 200, status
        elif kind == "MKDIRS":
            status, _, _ = conn.call("PUT", f"{own}/d{count}", "MKDIRS")
            assert status == 200, status
        else:
            conn.create(f"{own}/{prefix}f{count}", payload)
        latencies.append(time.perf_counter() - t0)
        count += 1
    queue.put((count, latencies, time.process_time() - cpu))


def throughput(kind: str, url: str, user: str, base: str, clients: int, duration: float, meter: Meter,
               size: int = 1024, token: str | None = None, ca_file: str | None = None) -> dict:
    context = mp.get_context("spawn")
    queue = context.Queue()
    start_at = time.time() + 3.0  # let every process start and connect
    procs = [context.Process(target=_worker,
                             args=(kind, url, user, base, i, start_at, duration, size, queue, token, ca_file))
             for i in range(clients)]
    for proc in procs:
        proc.start()
    time.sleep(max(0.0, start_at - time.time()))
    meter.start()
    time.sleep(duration)
    cpu = meter.stop()
    results = [queue.get(timeout=duration + 120) for _ in procs]
    for proc in procs:
        proc.join()
    latencies = sorted(x for _, lat, _ in results for x in lat)
    total = sum(count for count, _, _ in results)
    cpu["cpu"]["clients"] = sum(seconds for _, _, seconds in results)
    return {"ops": total, "rate": total / duration, **cpu,
            "p50": latencies[len(latencies) // 2] * 1000 if latencies else float("nan"),
            "p99": latencies[int(len(latencies) * 0.99)] * 1000 if latencies else float("nan")}


def wrk(url: str, user: str, path: str, connections: int, duration: float, meter: Meter,
        token: str | None = None) -> dict | None:
    """GETFILESTATUS from wrk (which does not verify an https server's certificate: it only
    loads it)."""
    if not shutil.which("wrk"):
        return None
    auth = f"delegation={quote(token)}" if token else f"user.name={user}"
    target = f"{url}/webhdfs/v1{quote(path)}?op=GETFILESTATUS&{auth}"
    threads = min(connections, 2)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    meter.start()
    out = subprocess.run(["wrk", f"-t{threads}", f"-c{connections}", f"-d{int(duration)}s", "--latency", target],
                         capture_output=True, text=True, timeout=duration + 60).stdout
    cpu = meter.stop()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu["cpu"]["clients"] = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    count = re.search(r"(\d+) requests in", out)
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    p50 = re.search(r"50%\s+([\d.]+)(us|ms|s)", out)
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}
    return {"rate": float(rate.group(1)) if rate else float("nan"), "ops": int(count.group(1)) if count else 0, **cpu,
            "p50": float(p50.group(1)) * scale[p50.group(2)] if p50 else float("nan"),
            "p99": float(p99.group(1)) * scale[p99.group(2)] if p99 else float("nan"),
            "errors": int(non2xx.group(1)) if non2xx else 0}


# -------------------------------------------------------------------- Spark
def spark_io(url: str, user: str, base: str, size_mb: int, repeat: int) -> dict:
    os.environ["HADOOP_USER_NAME"] = user
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").appName("namespace-bench")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.catalogImplementation", "in-memory").config("spark.driver.memory", "2g")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    local_root = tempfile.mkdtemp(prefix="namespace-bench-")
    authority = urlsplit(url).netloc
    targets = {"file": f"file://{local_root}", "webhdfs": f"webhdfs://{authority}{base}/spark"}

    def frame(rows: int):
        # random-looking (barely compressible) columns, deterministic for a given id
        return spark.range(0, rows, numPartitions=4).selectExpr(
            "id", "xxhash64(id) AS h1", "xxhash64(id, 1) AS h2", "CAST(hash(id) AS DOUBLE) / 7 AS x",
            "sha2(CAST(id AS STRING), 256) AS s")

    def local_size(path: str) -> int:
        return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs
                   if f.endswith(".parquet"))

    # calibrate rows per MB on a sample written locally (also warms the JVM up)
    sample_rows = 400_000
    frame(sample_rows).write.mode("overwrite").parquet(f"{targets['file']}/calibrate")
    per_row = local_size(f"{local_root}/calibrate") / sample_rows
    rows = int(size_mb * 1e6 / per_row)
    conn = Conn(url, user)
    times: dict[str, dict[str, list[float]]] = {k: {"write": [], "read": []} for k in targets}
    for attempt in range(repeat):
        order = list(targets.items()) if attempt % 2 == 0 else list(targets.items())[::-1]
        for scheme, root in order:
            path = f"{root}/data"
            t0 = time.perf_counter()
            frame(rows).write.mode("overwrite").parquet(path)
            times[scheme]["write"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            spark.read.parquet(path).write.format("noop").mode("overwrite").save()
            times[scheme]["read"].append(time.perf_counter() - t0)
    actual = {"file": local_size(f"{local_root}/data"),
              "webhdfs": conn.check("GET", f"{base}/spark/data", "GETCONTENTSUMMARY")["ContentSummary"]["length"]}
    files = len([f for f in os.listdir(f"{local_root}/data") if f.endswith(".parquet")])
    spark.stop()
    shutil.rmtree(local_root, ignore_errors=True)
    return {"rows": rows, "bytes": actual, "files": files,
            "times": {k: {op: min(v) for op, v in ops.items()} for k, ops in times.items()},
            "all": times}


# -------------------------------------------------------------------- table
def print_table(title: str, header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    line = "+-" + "-+-".join("-" * w for w in widths) + "-+"
    print(f"\n{title}\n{line}")
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |")
    print(line)
    for row in rows:
        print("| " + " | ".join(str(c).rjust(w) if i else str(c).ljust(w)
                                  for i, (c, w) in enumerate(zip(row, widths))) + " |")
    print(line)


def _runs(times: dict) -> str:
    return ", ".join(f"{scheme} {op} " + "/".join(f"{t:.1f}" for t in runs)
                     for scheme, ops in times.items() for op, runs in ops.items())


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def cpu_cells(r: dict) -> list[str]:
    """CPU per operation of each process group, the rate they allow on this host's CPUs if
    nothing else ran, and how busy the host was (and how much work waited for a CPU)."""
    if not r.get("ops") or not r["cpu"]:
        return ["-", "-", f"{r['host_busy'] * 100:.0f}% / {r['cpu_wait'] * 100:.0f}%"]
    per_op = {label: seconds / r["ops"] for label, seconds in r["cpu"].items()}
    bound = (os.cpu_count() or 1) / sum(per_op.values())
    return [" / ".join(f"{label} {seconds * 1e6:,.0f}" for label, seconds in per_op.items()), f"{bound:,.0f}",
            f"{r['host_busy'] * 100:.0f}% / {r['cpu_wait'] * 100:.0f}%"]


def row(label: str, clients: int, r: dict, goal: int | None) -> list:
    return [label, clients, f"{r['rate']:,.0f}", f"{r['p50']:.2f}", f"{r['p99']:.2f}", *cpu_cells(r),
            f">= {goal:,}" if goal else "-",
            "-" if not goal else "ok" if r["rate"] >= goal else "MISSED"]


def metadata(args, targets: list[tuple[str, str]], base: str, meter: Meter) -> None:
    """GETFILESTATUS and MKDIRS on the first target, CREATE of 1 KiB on each."""
    counts = [int(c) for c in args.clients.split(",")]
    header = ["operation", "clients", "ops/s", "p50 ms", "p99 ms", "CPU us/op", "CPU bound ops/s",
              "host busy / CPU wait", "goal", ""]
    rows = []
    url = targets[0][1]
    runs = [("GETFILESTATUS", "GETFILESTATUS", url), ("MKDIRS", "MKDIRS", url)]
    runs += [(f"CREATE 1 KiB, {label}", "CREATE", target) for label, target in targets]
    runs.insert(3, ("CREATE 1 KiB, small files, one directory", "CREATE_SHARED", targets[0][1]))
    for label, kind, target in runs:
        # The CREATE goal is for small files; with them off it is shown for comparison only.
        goal = GOALS.get(kind.removesuffix("_SHARED")) if label != "CREATE 1 KiB, small files off" else None
        for clients in counts:
            r = throughput(kind, target, args.user, base, clients, args.duration, meter, token=args.token,
                           ca_file=args.ca_file)
            rows.append(row(f"{label} (python)", clients, r, goal))
            print(f"  {label} x{clients}: {r['rate']:,.0f}/s", flush=True)
        if kind != "GETFILESTATUS":
            continue
        for clients in counts:
            w = wrk(url, args.user, f"{base}/stat/a/b/c/file", clients, args.duration, meter, args.token)
            if w is None:
                rows.append(["GETFILESTATUS (wrk)", clients, "wrk not installed"] + [""] * 7)
                continue
            errors = f", {w['errors']} non-2xx" if w["errors"] else ""
            rows.append(row(f"GETFILESTATUS (wrk{errors})", clients, w, goal))
            print(f"  GETFILESTATUS wrk c{clients}: {w['rate']:,.0f}/s", flush=True)
    print_table(f"Metadata throughput ({args.duration:g} s each; CPU us/op: user+system CPU per operation of the "
                "server processes (--pids or the private stack), the database and the benchmark's clients; "
                f"CPU bound: {os.cpu_count()} CPUs / their sum; host busy: share of all CPUs in use, by anyone; "
                "CPU wait: share of time some task waited for a CPU)", header, rows)


def spark_table(args, url: str, base: str) -> None:
    s = spark_io(url, args.user, base, args.size_mb, args.repeat)
    t = s["times"]
    rows = []
    for op in ("write", "read"):
        ratio = t["webhdfs"][op] / t["file"][op]
        rows.append([f"Parquet {op}", f"{t['file'][op]:.1f}", f"{t['webhdfs'][op]:.1f}", f"{ratio:.2f}x",
                     f"<= {GOALS['ratio']}x", verdict(ratio <= GOALS["ratio"])])
    print_table(f"Spark local[2]: {s['rows']:,} rows in {s['files']} files; parquet on disk: file:// "
                f"{s['bytes']['file'] / 1e6:.0f} MB, webhdfs {s['bytes']['webhdfs'] / 1e6:.0f} MB; best of "
                f"{args.repeat} (runs: {_runs(s['all'])})",
                ["operation", "file:// s", "webhdfs s", "ratio", "goal", ""], rows)


@contextlib.contextmanager
def private_stack(workers: int, secure: bool, user: str):
    """A MariaDB of its own and two namenodes of this checkout on it: small files on (the
    default limit) and off; with ``secure``, in token mode and over TLS (a private CA), as
    deployed.  Yields ([(label, url)], pids to meter, a token for ``user`` or None, the CA
    file or None)."""
    from hopshive.core.db import Database
    from hopshive.security.secrets import SecretManager
    from tests.support.mariadb import MariaDBServer
    from tests.support.namenode import NamenodeServer
    from tests.support.schemas import reset_schemas
    from tests.support.tls import make_ca

    root = Path(tempfile.mkdtemp(prefix="namespace-bench-stack-"))
    mariadb = MariaDBServer(root / "mariadb").start()
    servers = []
    try:
        database = Database(mariadb.config)
        reset_schemas(database)
        token = SecretManager(database).issue(user, user).url_string() if secure else None
        database.close()
        ca = make_ca(root / "ca") if secure else None
        security = "token" if secure else "simple"
        servers.append(NamenodeServer(root / "small", mariadb.config, workers=workers, security=security,
                                      ca=ca).start())
        servers.append(NamenodeServer(root / "blocks", mariadb.config, workers=workers, security=security, ca=ca,
                                      small_file_limit=0).start())
        yield ([("small files", servers[0].url), ("small files off", servers[1].url)],
               f"namenode={servers[0].process.pid},namenode2={servers[1].process.pid},mariadb={mariadb.process.pid}",
               token, str(ca.ca_file) if ca else None)
    finally:
        for server in servers:
            server.stop()
        mariadb.stop()
        shutil.rmtree(root, ignore_errors=True)


def given_token(args) -> str | None:
    """The delegation token --url is measured with: --token, $HOPSHIVE_TOKEN, or the WebHDFS
    token for the namenode in $HADOOP_TOKEN_FILE_LOCATION; None: user.name (simple mode)."""
    if args.token or os.environ.get("HOPSHIVE_TOKEN"):
        return args.token or os.environ["HOPSHIVE_TOKEN"]
    if os.environ.get("HADOOP_TOKEN_FILE_LOCATION"):
        from hopshive.security.token_files import webhdfs_token_of
        parts = urlsplit(args.url)
        found = webhdfs_token_of(Path(os.environ["HADOOP_TOKEN_FILE_LOCATION"]).read_bytes(),
                                 f"{parts.hostname}:{parts.port or 9870}")
        return found.url_string() if found else None
    return None


def run(args, targets: list[tuple[str, str]], pids: str) -> None:
    url = targets[0][1]
    base = f"/tmp/bench-{uuid.uuid4().hex[:10]}"
    meter = Meter(pids)
    conn = Conn(url, args.user, args.token, args.ca_file)
    conn.check("PUT", base, "MKDIRS")
    conn.create(f"{base}/stat/a/b/c/file", b"x" * 1024)
    print(f"namespace bench: {', '.join(f'{label} {u}' for label, u in targets)} as {args.user}, root {base}, "
          f"{'with a delegation token' if args.token else 'by user.name'}, "
          f"{os.cpu_count()} CPUs, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    try:
        if not args.skip_metadata:
            metadata(args, targets, base, meter)
        if not args.skip_spark:
            spark_table(args, url, base)
    finally:
        try:
            Conn(url, args.user, args.token, args.ca_file).check("DELETE", base, "DELETE", recursive="true")
        except Exception as exc:
            print(f"clean-up of {base} failed: {exc}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default=os.environ.get("HOPSHIVE_WEBHDFS_URL", "http://127.0.0.1:9870"))
    parser.add_argument("--private", action="store_true",
                        help="start a MariaDB and namenodes of this checkout instead of using --url")
    parser.add_argument("--secure", action="store_true",
                        help="with --private: namenodes in token mode over TLS (as deployed), clients with a token")
    parser.add_argument("--token", help="with --url: the delegation token (urlString) to send as delegation= "
                                        "(default: $HOPSHIVE_TOKEN, else the namenode's WebHDFS token in "
                                        "$HADOOP_TOKEN_FILE_LOCATION, else none: user.name=)")
    parser.add_argument("--ca-file", help="with an https --url: the CA its certificate is verified with (default: "
                                          "$HOPSHIVE_CA_FILE, else the deployment's CA file when this host has "
                                          "one, else the system's trust store)")
    parser.add_argument("--workers", type=int, default=2, help="namenode workers with --private")
    parser.add_argument("--user", default=os.environ.get("HOPSHIVE_E2E_USER"),
                        help="default: hdfs (the superuser) with --private, else the OS user")
    parser.add_argument("--size-mb", type=int, default=200, help="Parquet data size for the Spark part")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per throughput measurement")
    parser.add_argument("--clients", default="1,8", help="client process counts, comma separated")
    parser.add_argument("--repeat", type=int, default=3, help="Spark runs per target, order alternating "
                                                              "(the best is shown)")
    parser.add_argument("--pids", default="", help="with --url: processes whose CPU to account per operation, "
                                                   "[label=]pid, comma separated, children included; e.g. "
                                                   "namenode=<master pid>,mariadb=<mariadbd pid>")
    parser.add_argument("--skip-spark", action="store_true")
    parser.add_argument("--skip-metadata", action="store_true")
    args = parser.parse_args()
    if args.secure and not args.private:
        parser.error("--secure is for --private; give a secured --url its --token and --ca-file")
    if (args.secure or args.token or args.url.startswith("https:")) and not args.skip_spark:
        parser.error("the Spark part does not run against a secured namenode yet (it would need a token file and "
                     "a Java truststore): add --skip-spark")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))    # stop the private stack on the way out
    if args.private:
        args.user = args.user or "hdfs"
        with private_stack(args.workers, args.secure, args.user) as (targets, pids, args.token, args.ca_file):
            run(args, targets, pids)
    else:
        run_against_url(args, parser)
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


def run_against_url(args, parser: argparse.ArgumentParser) -> None:
    from hopshive.core.tls import default_ca_file
    from hopshive.security.tokens import MalformedToken, Token

    args.token = given_token(args)
    args.ca_file = args.ca_file or default_ca_file(os.environ)
    if args.token:
        try:
            args.user = Token.from_url_string(args.token).decoded().owner     # whom the token speaks for
        except MalformedToken as exc:
            parser.error(f"the delegation token is not one: {exc}")
    args.user = args.user or getpass.getuser()
    run(args, [("as configured", args.url.rstrip("/"))], args.pids)


if __name__ == "__main__":
    raise SystemExit(main())
