"""Health probe: ``python -m hopshive.metastore.probe [--host H] [--port N]`` connects,
calls get_database('default') and exits 0 when it answers (1 otherwise, with the reason on
stderr).  Ansible's metastore role and the harness use it after a (re)start.

A metastore in security mode ``token`` answers a connection without SASL with its refusal
(hopshive.metastore.authentication.REFUSAL): that answer counts as healthy, although it
proves less (the Thrift server is up; its database was not asked).  With ``--token-file``
(a Hadoop token file holding a Hive token, as ``hopshive-dfs token --file`` writes) the
probe authenticates with it and the call is really answered.  With ``--tls`` or
``--ca-file`` it speaks TLS and verifies the metastore's certificate, as clients do."""

from __future__ import annotations

import argparse
import sys

from pymetastore.hive_metastore import ThriftHiveMetastore
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.Thrift import TApplicationException
from thrift.transport import TSocket, TSSLSocket, TTransport

from ..core.tls import client_context
from ..security.sasl_client import digest_md5_transport
from ..security.tokens import HIVE_KIND, read_credentials_file
from .authentication import REFUSAL


def probe(host: str, port: int, timeout: float = 5.0, token_file: str | None = None,
          tls: bool = False, ca_file: str = "") -> int:
    """``tls`` (implied by ``ca_file``): connect with TLS, verifying with ``ca_file`` (empty:
    the system's trust store)."""
    sock = TSSLSocket.TSSLSocket(host, port, ssl_context=client_context(ca_file)) if tls or ca_file \
        else TSocket.TSocket(host, port)
    sock.setTimeout(int(timeout * 1000))
    transport = TTransport.TBufferedTransport(sock)
    if token_file:
        with open(token_file, "rb") as handle:
            hive = [t for t in read_credentials_file(handle.read()).values() if t.kind == HIVE_KIND]
        if not hive:
            print(f"{token_file} holds no Hive token", file=sys.stderr)
            return 1
        transport = digest_md5_transport(sock, hive[0].identifier, hive[0].password)
    try:
        transport.open()
        client = ThriftHiveMetastore.Client(TBinaryProtocol(transport))
        client.get_database("default")
        return 0
    except Exception as exc:  # noqa: BLE001 -- any failure is "unhealthy"
        if isinstance(exc, TApplicationException) and exc.message == REFUSAL:
            return 0
        print(f"metastore {host}:{port} is not healthy: {exc!r}", file=sys.stderr)
        return 1
    finally:
        if transport.isOpen():      # TSSLSocket.close() fails on a socket that never opened
            transport.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hopshive.metastore.probe", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9083)
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("--token-file", help="authenticate with the Hive token of this Hadoop token file")
    parser.add_argument("--tls", action="store_true", help="connect with TLS (verified with the system's trust store)")
    parser.add_argument("--ca-file", default="", help="connect with TLS, verifying with this CA (PEM)")
    args = parser.parse_args(argv)
    return probe(args.host, args.port, args.timeout, args.token_file, args.tls, args.ca_file)


if __name__ == "__main__":
    sys.exit(main())
