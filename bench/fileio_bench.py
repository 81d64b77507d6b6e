"""pyiceberg's FileIO for the namespace (hopshive.clients.webhdfs_io) beside fsspec's webhdfs
client, the reference: a Parquet file written in 64 KiB writes, then read by pyarrow whole
and one column; seconds and HTTP requests of each (the namenode's redirects and the data
requests both count).  Prints a markdown table.

    .venv-test/bin/python bench/fileio_bench.py --namenode 127.0.0.1:9870 --tls \\
        --ca-file inventories/local/.tls/ca.pem --dir /tmp/fileio-bench   # token: $HOPSHIVE_TOKEN
"""

from __future__ import annotations

import argparse
import collections
import io
import os
import sys
import time

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import requests

from hopshive.clients.webhdfs_io import WebHdfsFileIO

requests_made: collections.Counter = collections.Counter()
_request = requests.Session.request


def _counted(self, method, url, *args, **kwargs):
    requests_made[method] += 1
    return _request(self, method, url, *args, **kwargs)


def parquet(rows: int) -> bytes:
    table = pa.table({"id": pa.array(range(rows), pa.int64()), "s": [f"value-{i % 1000}" for i in range(rows)],
                      "x": pa.array([i * 0.5 for i in range(rows)])})
    out = io.BytesIO()
    pq.write_table(table, out, row_group_size=rows // 8)
    return out.getvalue()


def timed(label: str, work) -> tuple[str, float, int]:
    requests_made.clear()
    start = time.perf_counter()
    work()
    return label, time.perf_counter() - start, sum(requests_made.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--namenode", default="127.0.0.1:9870", help="host:port")
    parser.add_argument("--tls", action="store_true", help="swebhdfs:// (https)")
    parser.add_argument("--ca-file", default="")
    parser.add_argument("--dir", default="/tmp/fileio-bench", help="a directory the token's user may write")
    parser.add_argument("--rows", type=int, default=2_000_000)
    args = parser.parse_args()
    token = os.environ.get("HOPSHIVE_TOKEN")
    if not token:
        parser.error("set HOPSHIVE_TOKEN to a delegation token's urlString (hopshive-dfs token)")
    if args.ca_file:
        os.environ["REQUESTS_CA_BUNDLE"] = args.ca_file      # fsspec's client reads only this
    requests.Session.request = _counted
    location = f"{'swebhdfs' if args.tls else 'webhdfs'}://{args.namenode}{args.dir}/t.parquet"
    ours = WebHdfsFileIO({"hopshive.token": token, "hopshive.ca-file": args.ca_file})
    host, port = args.namenode.rsplit(":", 1)
    reference = fsspec.filesystem("webhdfs", host=host, port=int(port), use_https=args.tls, token=token,
                                  skip_instance_cache=True)
    data = parquet(args.rows)

    def write() -> None:
        with ours.new_output(location).create(overwrite=True) as stream:
            for start in range(0, len(data), 64 * 1024):
                stream.write(data[start:start + 64 * 1024])

    def read_ours(columns):
        with ours.new_input(location).open() as stream:
            assert pq.read_table(pa.PythonFile(stream, mode="r"), columns=columns).num_rows == args.rows

    def read_reference(columns):
        with reference.open(f"{args.dir}/t.parquet", "rb") as stream:
            assert pq.read_table(stream, columns=columns).num_rows == args.rows

    results = [timed("write (ours)", write)]
    for name, columns in (("whole", None), ("one column", ["id"])):
        results.append(timed(f"read {name} (ours)", lambda: read_ours(columns)))
        results.append(timed(f"read {name} (fsspec webhdfs)", lambda: read_reference(columns)))
    ours.delete(location)
    print(f"{len(data) / 2**20:.1f} MiB of Parquet, {args.rows} rows\n\n| what | s | HTTP requests |\n|---|---|---|")
    for label, seconds, made in results:
        print(f"| {label} | {seconds:.2f} | {made} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
