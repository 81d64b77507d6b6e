"""What storage-based authorization costs: the same calls, made by a non-superuser (whose
calls are checked), against two metastore processes started from one configuration, one
with ``storage_authorization`` on and one with it off, in alternating rounds.

    python bench/sba_cost.py                      # config of the deployed 9083 instance
    python bench/sba_cost.py --rounds 5 --user bench_user

Prints p50 per call for both and the ratio on/off.  See bench/README.md.
"""

from __future__ import annotations

import argparse
import copy
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

import hms_workload as wl  # noqa: E402
from reference_hms import port_open  # noqa: E402

PARTITIONS = 10_000


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """``python -m hopshive.metastore.server`` with the given configuration."""

    def __init__(self, config: dict, sba: bool, workdir: Path):
        self.port = free_port()
        config = copy.deepcopy(config)
        config["metastore"].update(port=self.port, storage_authorization=sba)
        self.config_path = workdir / f"metastore-sba-{'on' if sba else 'off'}.yml"
        self.config_path.write_text(yaml.safe_dump(config))
        self.log = open(workdir / f"metastore-sba-{'on' if sba else 'off'}.log", "ab")
        self.process = subprocess.Popen([sys.executable, "-m", "hopshive.metastore.server", "--config",
                                         str(self.config_path)], stdout=self.log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        deadline = time.monotonic() + 60
        while not port_open("127.0.0.1", self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the metastore did not start; see {self.log.name}")
            time.sleep(0.2)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        os.killpg(self.process.pid, signal.SIGTERM)
        self.process.wait(30)
        self.log.close()


def timed(samples: list, fn) -> None:
    start = time.perf_counter()
    fn()
    samples.append(time.perf_counter() - start)


def measure(address: str, user: str, db: str, location: str, table: str, calls: int, round_no: int) -> dict:
    """One round on one server: get_table and a point filter ``calls`` times each, and one
    add_partitions_req of 1,000 new partitions."""
    out = {"get_table": [], "get_partitions_by_filter point": [], "add_partitions_req ×1000": []}
    target = wl.Target(db, table, PARTITIONS, f"{location}/{table}", tag=f"r{round_no}{address[-5:]}")
    rng = random.Random(round_no)
    with wl.MetastoreClient(address, user=user) as hms:
        for i in range(calls):
            timed(out["get_table"], lambda: hms.get_table(db, table))
        for i in range(calls):
            flt = wl._point(target, rng, 0, i)
            timed(out["get_partitions_by_filter point"], lambda: wl._by_filter(hms, target, flt))
        parts = wl._new_batch(target, rng, 1 + round_no % 50, round_no)
        timed(out["add_partitions_req ×1000"], lambda: wl.add_batch(hms, db, table, parts))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", default="/etc/hopshive/metastore-9083.yml", help="metastore configuration to start from")
    p.add_argument("--user", default="sba_bench", help="the non-superuser the calls are made as")
    p.add_argument("--database", default="sba_bench")
    p.add_argument("--rounds", type=int, default=6, help="alternating rounds per server (default 6)")
    p.add_argument("--calls", type=int, default=300, help="reads per call and round (default 300)")
    args = p.parse_args(argv)
    config = yaml.safe_load(Path(args.config).read_text())
    with tempfile.TemporaryDirectory(prefix="sba-bench-") as tmp:
        servers = {"on": Server(config, True, Path(tmp)), "off": Server(config, False, Path(tmp))}
        try:
            with wl.MetastoreClient(servers["on"].address, user=args.user) as hms:
                location = wl.ensure_database(hms, args.database, config["metastore"]["warehouse"])
                wl.create_table(hms, args.database, "t", location, owner=args.user)
                for start in range(0, PARTITIONS, wl.BATCH):
                    values = [wl.partition_values(i) for i in range(start, start + wl.BATCH)]
                    wl.add_batch(hms, args.database, "t", wl.make_partitions(args.database, "t", f"{location}/t",
                                                                             values), need_result=False)
            samples: dict[str, dict[str, list]] = {"on": {}, "off": {}}
            for round_no in range(args.rounds):
                for mode in (("on", "off") if round_no % 2 else ("off", "on")):
                    got = measure(servers[mode].address, args.user, args.database, location, "t", args.calls,
                                  2 * round_no + (mode == "on"))
                    for call, values in got.items():
                        samples[mode].setdefault(call, []).extend(values)
            print(f"\nSBA cost, {PARTITIONS} partitions, user {args.user} (checked), {args.rounds} rounds\n")
            print("| call | SBA off p50 ms | SBA on p50 ms | on/off |")
            print("|---|---:|---:|---:|")
            for call in samples["on"]:
                off, on = statistics.median(samples["off"][call]), statistics.median(samples["on"][call])
                print(f"| {call} | {off * 1000:.2f} | {on * 1000:.2f} | {on / off:.2f} |")
            with wl.MetastoreClient(servers["on"].address, user=args.user) as hms:
                hms.drop_database(args.database, True, True)
        finally:
            for server in servers.values():
                server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
