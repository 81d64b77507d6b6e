#!/usr/bin/env python3
"""What proving identity costs: GETFILESTATUS with a delegation token (a namenode in token
mode) against the same call named by user.name (a namenode in simple mode), on one private
stack, rounds alternating so that what ran before weighs on both alike.  Goal (#24): ≤ 1.10×.

    .venv-test/bin/python bench/token_bench.py --duration 8 --rounds 3 --clients 1,4

Starts its own MariaDB (tests/support) and two namenodes of this checkout on it, 1 worker
each (so the two share the host alike); never touches a deployed service.  Prints ops/s and
the namenode's CPU per call for each mode, and the ratio simple/token of the medians.
"""

from __future__ import annotations

import argparse
import shutil
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=8.0, help="seconds per measurement")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds per client count")
    parser.add_argument("--clients", default="1,4", help="client process counts, comma separated")
    args = parser.parse_args()

    from hopshive.core.db import Database
    from hopshive.security.secrets import SecretManager
    from tests.support.mariadb import MariaDBServer
    from tests.support.namenode import NamenodeServer
    from tests.support.schemas import reset_schemas

    root = Path(tempfile.mkdtemp(prefix="token-bench-"))
    mariadb = MariaDBServer(root / "mariadb").start()
    servers = {}
    try:
        database = Database(mariadb.config)
        reset_schemas(database)
        token = SecretManager(database).issue(USER, USER).url_string()
        admin = SecretManager(database).issue("hdfs", "hdfs").url_string()
        for mode in ("simple", "token"):
            servers[mode] = NamenodeServer(root / mode, mariadb.config, workers=1, security=mode).start()
        base = f"/tmp/bench-{uuid.uuid4().hex[:10]}"
        setup = Conn(servers["token"].url, "hdfs", admin)
        setup.check("PUT", base, "MKDIRS", permission="777")
        Conn(servers["token"].url, USER, token).create(f"{base}/stat/a/b/c/file", b"x" * 1024)
        rows = []
        for clients in (int(c) for c in args.clients.split(",")):
            rates, cpu = {"simple": [], "token": []}, {"simple": [], "token": []}
            for round_ in range(args.rounds):
                for mode in (("simple", "token") if round_ % 2 == 0 else ("token", "simple")):
                    meter = Meter(f"namenode={servers[mode].process.pid},mariadb={mariadb.process.pid}")
                    result = throughput("GETFILESTATUS", servers[mode].url, USER, base, clients, args.duration,
                                        meter, token=token if mode == "token" else None)
                    rates[mode].append(result["rate"])
                    cpu[mode].append(result["cpu"]["namenode"] / max(result["ops"], 1) * 1e6)
                    print(f"  {clients} clients, {mode}: {result['rate']:.0f}/s", flush=True)
            simple, tokened = statistics.median(rates["simple"]), statistics.median(rates["token"])
            ratio = simple / tokened
            rows.append([str(clients), f"{simple:.0f}", f"{tokened:.0f}", f"{statistics.median(cpu['simple']):.0f}",
                         f"{statistics.median(cpu['token']):.0f}", f"{ratio:.3f}", f"≤ {GOAL}", verdict(ratio <= GOAL)])
        print_table("GETFILESTATUS, token mode against simple mode (medians of the rounds)",
                    ["clients", "simple /s", "token /s", "simple µs CPU/call", "token µs CPU/call",
                     "time ratio", "goal", ""], rows)
        setup.check("DELETE", base, "DELETE", recursive="true")
        database.close()
    finally:
        for server in servers.values():
            server.stop()
        mariadb.stop()
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
