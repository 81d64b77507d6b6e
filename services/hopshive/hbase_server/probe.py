"""Health probe: ``python -m hopshive.hbase_server.probe [--host H] [--port N]`` connects
with happybase, lists the tables and exits 0 when the server answers (1 otherwise, with the
reason on stderr).  The hbase role and ``hopshive-hbase --check`` use it."""

from __future__ import annotations

import argparse
import sys


def probe(host: str, port: int, timeout: float = 5.0) -> int:
    import happybase

    try:
        connection = happybase.Connection(host, port, timeout=int(timeout * 1000), autoconnect=True)
        try:
            connection.tables()
        finally:
            connection.close()
        return 0
    except Exception as exc:  # noqa: BLE001 -- any failure is "unhealthy"
        print(f"hbase thrift server {host}:{port} is not healthy: {exc!r}", file=sys.stderr)
        return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hopshive.hbase_server.probe",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9090)
    parser.add_argument("--timeout", type=float, default=5.0)
    args = parser.parse_args(argv)
    return probe(args.host, args.port, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
