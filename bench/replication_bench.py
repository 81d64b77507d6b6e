#!/usr/bin/env python3
"""What replication costs a large write, and what checked reads cost: two private namenodes
on this host (a private MariaDB, a block directory each), a file of --size-mb written and
read back through WebHDFS with replication 1 and 2, beside the same bytes written (with
fsync) and read through the local file system in the same run.

    .venv-test/bin/python bench/replication_bench.py --size-mb 256 --repeat 3

Prints one table: the best of --repeat runs per row, MB/s and the ratio to the local file.
Replication 2 on one host writes the bytes to the same disk twice (the second copy through
a loopback HTTP PUT): that, not the network, is its cost here.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hopshive.core.db import Database  # noqa: E402
from hopshive.core.migrations import upgrade  # noqa: E402
from hopshive.core.schematool import COMPONENTS  # noqa: E402
from tests.support.mariadb import MariaDBServer  # noqa: E402
from tests.support.namenode import NamenodeServer  # noqa: E402

CHUNK = 1 << 20


def chunks(data: bytes):
    view = memoryview(data)
    for at in range(0, len(view), CHUNK):
        yield view[at:at + CHUNK]


def webhdfs_write(server: NamenodeServer, path: str, data: bytes, replication: int) -> float:
    started = time.perf_counter()
    reply = requests.put(f"{server.url}/webhdfs/v1{path}", params={
        "op": "CREATE", "user.name": "hdfs", "overwrite": "true", "replication": replication, "data": "true"},
        data=chunks(data), timeout=600)
    reply.raise_for_status()
    return time.perf_counter() - started


def webhdfs_read(server: NamenodeServer, path: str, size: int) -> float:
    started = time.perf_counter()
    with requests.get(f"{server.url}/webhdfs/v1{path}", params={"op": "OPEN", "user.name": "hdfs"},
                      stream=True, timeout=600) as reply:
        reply.raise_for_status()
        got = sum(len(c) for c in reply.iter_content(CHUNK))
    assert got == size, (got, size)
    return time.perf_counter() - started


def local_write(path: Path, data: bytes) -> float:
    started = time.perf_counter()
    with open(path, "wb") as handle:
        for chunk in chunks(data):
            handle.write(chunk)
        handle.flush()
        os.fsync(handle.fileno())
    return time.perf_counter() - started


def local_read(path: Path, size: int) -> float:
    started = time.perf_counter()
    got = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            got += len(chunk)
    assert got == size
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    size = args.size_mb << 20
    data = os.urandom(size)
    with tempfile.TemporaryDirectory(prefix="replication-bench-") as tmp:
        base = Path(tmp)
        mariadb = MariaDBServer(base / "mariadb").start()
        servers = []
        try:
            database = Database(mariadb.config)
            for component in COMPONENTS.values():
                upgrade(database, component)
            database.close()
            servers = [NamenodeServer(base / f"nn{i}", mariadb.config, workers=1).start() for i in (1, 2)]
            results: dict[str, list[float]] = {}
            for _ in range(args.repeat):
                results.setdefault("local file: write + fsync", []).append(local_write(base / "local", data))
                results.setdefault("local file: read", []).append(local_read(base / "local", size))
                for replication in (1, 2):
                    path = f"/bench/r{replication}"
                    results.setdefault(f"webhdfs write, replication {replication}", []).append(
                        webhdfs_write(servers[0], path, data, replication))
                    results.setdefault(f"webhdfs read, replication {replication}", []).append(
                        webhdfs_read(servers[0], path, size))
                results.setdefault("webhdfs read through the other namenode", []).append(
                    webhdfs_read(servers[1], "/bench/r1", size))
        finally:
            for server in servers:
                server.stop()
            mariadb.stop()
    reference = {"write": min(results["local file: write + fsync"]), "read": min(results["local file: read"])}
    print(f"{args.size_mb} MiB, best of {args.repeat}")
    print(f"{'':44} {'seconds':>8} {'MB/s':>8} {'x local':>8}")
    for label, times in results.items():
        best = min(times)
        kind = "write" if "write" in label else "read"
        print(f"{label:44} {best:8.2f} {args.size_mb / best:8.0f} {best / reference[kind]:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
