#!/usr/bin/env python3
"""What proving identity costs: GETFILESTATUS with a delegation token (a namenode in token
mode) against the same call named by user.name (a namenode in simple mode), and the metastore's
get_table over SASL DIGEST-MD5 with a delegation token against the same call after set_ugi (a
metastore in simple mode), on one private stack, rounds alternating so that what ran before
weighs on both alike.  Goal (#24): ≤ 1.10×.

    .venv-test/bin/python bench/token_bench.py --duration 8 --rounds 3 --clients 1,4

Starts its own MariaDB (tests/support), two namenodes and two metastores of this checkout on
it, 1 worker each (so the two modes share the host alike); never touches a deployed service.
WebHDFS: ops/s and the namenode's CPU per call for each mode, and the ratio simple/token of
the medians.  Metastore: get_table on long-lived connections (the workload of
metastore_bench.py: hmsclient over the accelerated binary protocol, one client process per
connection) -- p50, p99, calls/s, metastore CPU per call -- and "connect + get_table + close"
(what a SASL handshake adds per connection), medians of the rounds.  ``--qop auth`` (the
default) is what clients over TLS ask for; ``--qop auth-conf`` what Spark's Hive client asks
for without TLS (every message encrypted with 3DES and signed).
"""

from __future__ import annotations

import argparse
import shutil
import signal
import statistics
import sys
import tempfile
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from namespace_bench import Conn, Meter, print_table, throughput, verdict  # noqa: E402

GOAL = 1.10
USER = "bench"


def webhdfs_half(args, mariadb, database, token: str, admin: str, root: Path) -> list[list[str]]:
    from tests.support.namenode import NamenodeServer

    servers = {}
    try:
        for mode in ("simple", "token"):
            # No replication monitor: its rounds run on whichever namenode holds the lease
            # (the token one in the first runs, +17 % of its samples) and weighed on one mode.
            servers[mode] = NamenodeServer(root / mode, mariadb.config, workers=1, security=mode,
                                           replication_interval=86_400.0).start()
        base = f"/tmp/bench-{uuid.uuid4().hex[:10]}"
        setup = Conn(servers["token"].url, "hdfs", admin)
        setup.check("PUT", base, "MKDIRS", permission="777")
        Conn(servers["token"].url, USER, token).create(f"{base}/stat/a/b/c/file", b"x" * 1024)
        rows = []
        for clients in _ints(args.clients):
            rates, cpu = {"simple": [], "token": []}, {"simple": [], "token": []}
            for round_ in range(args.rounds):
                for mode in _order(round_):
                    meter = Meter(f"namenode={servers[mode].process.pid},mariadb={mariadb.process.pid}")
                    result = throughput("GETFILESTATUS", servers[mode].url, USER, base, clients, args.duration,
                                        meter, token=token if mode == "token" else None)
                    rates[mode].append(result["rate"])
                    cpu[mode].append(result["cpu"]["namenode"] / max(result["ops"], 1) * 1e6)
                    print(f"  GETFILESTATUS, {clients} clients, {mode}: {result['rate']:.0f}/s", flush=True)
            simple, tokened = statistics.median(rates["simple"]), statistics.median(rates["token"])
            ratio = simple / tokened
            rows.append([str(clients), f"{simple:.0f}", f"{tokened:.0f}", f"{statistics.median(cpu['simple']):.0f}",
                         f"{statistics.median(cpu['token']):.0f}", f"{ratio:.3f}", f"≤ {GOAL}", verdict(ratio <= GOAL)])
        # A new connection: the namenode has long closed the idle one.
        Conn(servers["token"].url, "hdfs", admin).check("DELETE", base, "DELETE", recursive="true")
        return rows
    finally:
        for server in servers.values():
            server.stop()


def metastore_half(args, mariadb, secret, root: Path) -> list[list[str]]:
    """get_table against a metastore in token mode (SASL DIGEST-MD5 with ``secret``, a Token)
    and the same code in simple mode (set_ugi), both on this MariaDB and one namenode."""
    import functools

    import hms_workload as wl
    from metastore_bench import Plan, run_cell
    from server_cpu import ServerCPU
    from tests.support.metastore import MetastoreProcess, settings
    from tests.support.namenode import NamenodeServer

    namenode = NamenodeServer(root / "hms-namenode", mariadb.config, workers=1, security="simple").start()
    metastores = {}
    try:
        for mode in ("simple", "token"):
            metastores[mode] = MetastoreProcess(root / f"hms-{mode}", settings(mariadb.config, namenode.address,
                                                                               security=mode)).start()
        address = {mode: f"127.0.0.1:{server.port}" for mode, server in metastores.items()}
        connect = {"simple": functools.partial(wl.MetastoreClient, user=USER),
                   "token": functools.partial(wl.MetastoreClient, token=(secret.identifier, secret.password),
                                              qop=args.qop)}
        db = f"token_bench_{uuid.uuid4().hex[:8]}"
        with connect["token"](address["token"]) as hms:   # as the token's owner
            location = wl.ensure_database(hms, db, f"webhdfs://{namenode.address}/user/{USER}")
            wl.create_table(hms, db, "t", location, owner=USER)
        target = wl.Target(db, "t", 0)
        get_table = next(call for call in wl.READ_CALLS if call.name == "get_table")

        def reconnecting(mode: str) -> "wl.Call":
            def invoke(_hms, t: "wl.Target", _args) -> int:
                with connect[mode](address[mode]) as fresh:
                    fresh.get_table(t.db, t.table)
                return 1
            return wl.Call("connect + get_table + close", False, lambda n: 1, lambda *_: None, invoke)

        plan = Plan(duration_s=args.duration, iterations=None, min_iterations=20, warmup_s=1.0)
        rows = []
        for label, clients_list, call_of in (("get_table", _ints(args.clients), lambda mode: get_table),
                                             ("connect + get_table + close", [1], reconnecting)):
            for clients in clients_list:
                stats = {mode: {"p50": [], "p99": [], "rate": [], "cpu": []} for mode in ("simple", "token")}
                for round_ in range(args.rounds):
                    for mode in _order(round_):
                        cell = run_cell(address[mode], call_of(mode), target, clients, plan, None,
                                        ServerCPU(address[mode]), connect=connect[mode])
                        if cell.errors:
                            raise RuntimeError(f"{label}, {mode}, {clients} clients: {cell.errors}")
                        stats[mode]["p50"].append(cell.p(0.5) * 1000)
                        stats[mode]["p99"].append(cell.p(0.99) * 1000)
                        stats[mode]["rate"].append(cell.ops_per_s)
                        stats[mode]["cpu"].append((cell.cpu_ms_per_call or float("nan")) * 1000)
                        print(f"  {label}, {clients} clients, {mode}: {cell.ops_per_s:.0f}/s,"
                              f" p50 {cell.p(0.5) * 1000:.2f} ms", flush=True)
                med = {mode: {k: statistics.median(v) for k, v in st.items()} for mode, st in stats.items()}
                ratio = med["simple"]["rate"] / med["token"]["rate"]
                p50_ratio = med["token"]["p50"] / med["simple"]["p50"]
                rows.append([label, str(clients),
                             f"{med['simple']['p50']:.2f}", f"{med['token']['p50']:.2f}", f"{p50_ratio:.3f}",
                             f"{med['simple']['p99']:.2f}", f"{med['token']['p99']:.2f}",
                             f"{med['simple']['rate']:.0f}", f"{med['token']['rate']:.0f}",
                             f"{med['simple']['cpu']:.0f}", f"{med['token']['cpu']:.0f}",
                             f"{ratio:.3f}", f"≤ {GOAL}", verdict(ratio <= GOAL and p50_ratio <= GOAL)])
        with connect["token"](address["token"]) as hms:
            hms.drop_table(db, "t", True)
            hms.drop_database(db, True, True)
        return rows
    finally:
        for server in metastores.values():
            server.stop()
        namenode.stop()


def _ints(text: str) -> list[int]:
    return [int(c) for c in text.split(",") if c]


def _order(round_: int) -> tuple[str, str]:
    return ("simple", "token") if round_ % 2 == 0 else ("token", "simple")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=8.0, help="seconds per measurement")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds per client count")
    parser.add_argument("--clients", default="1,4", help="client process counts, comma separated")
    parser.add_argument("--only", choices=("webhdfs", "metastore"), help="measure one half only")
    parser.add_argument("--qop", choices=("auth", "auth-int", "auth-conf"), default="auth",
                        help="the metastore connections' SASL qop (auth: as over TLS; auth-conf: as Spark's)")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # stop the private stack on kill too

    from hopshive.core.db import Database
    from hopshive.security.secrets import SecretManager
    from tests.support.mariadb import MariaDBServer
    from tests.support.schemas import reset_schemas

    root = Path(tempfile.mkdtemp(prefix="token-bench-"))
    mariadb = MariaDBServer(root / "mariadb").start()
    try:
        database = Database(mariadb.config)
        reset_schemas(database)
        secret = SecretManager(database).issue(USER, USER)
        admin = SecretManager(database).issue("hdfs", "hdfs").url_string()
        print(f"load average at the start: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}", flush=True)
        webhdfs = hms = None
        if args.only in (None, "webhdfs"):
            webhdfs = webhdfs_half(args, mariadb, database, secret.url_string(), admin, root)
        if args.only in (None, "metastore"):
            hms = metastore_half(args, mariadb, secret, root)
        print(f"\nload average at the end: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
        if webhdfs:
            print_table("GETFILESTATUS, token mode against simple mode (medians of the rounds)",
                        ["clients", "simple /s", "token /s", "simple µs CPU/call", "token µs CPU/call",
                         "time ratio", "goal", ""], webhdfs)
        if hms:
            print_table(f"Metastore get_table, token mode (SASL DIGEST-MD5, qop {args.qop}) against simple mode (set_ugi), medians"
                        " of the rounds; ms, calls/s, metastore µs CPU/call; ratios token/simple",
                        ["call", "clients", "simple p50", "token p50", "p50 ratio", "simple p99", "token p99",
                         "simple /s", "token /s", "simple µs CPU", "token µs CPU", "time ratio", "goal", ""], hms)
        database.close()
    finally:
        mariadb.stop()
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
