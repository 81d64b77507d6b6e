"""Connections: NOSASL (raw binary protocol, what beeline's ``auth=noSasl`` and PyHive's
NOSASL send) or SASL PLAIN (frames ``[status][4-byte length][payload]``, then a framed
Thrift stream), told apart by the first byte; anything else is closed.  With TLS on, every
connection is TLS first (what Hive JDBC's ``ssl=true`` sends), then either of the two.

The SASL PLAIN password is checked during the handshake: a failure answers BAD with the
reason and closes the connection, so no session is ever opened.
"""

from __future__ import annotations

import logging
import socket
import ssl
import threading
from typing import Callable

from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.Thrift import TException
from thrift.transport import TSocket, TTransport

from ..core.tls import Replayed
from ..security.sasl import START, SaslRejected, Stream, negotiate
from .exceptions import Server2Error

log = logging.getLogger("hopshive.server2")


class ConnectionContext(threading.local):
    """What the handshake learned about the connection the current thread serves."""

    peer: str = ""          # host:port
    address: str = ""       # host
    identity: object = None
    sessions: list = []


class PlainMechanism:
    """SASL PLAIN (``[authzid]\\0user\\0password``), checked by ``authenticate(user,
    password, client)``; a Server2Error from it refuses the client."""

    layer = None        # PLAIN has no security layer: server2 gets its protection from TLS

    def __init__(self, authenticate: Callable[[str, str, str], object], client: str):
        self.authenticate = authenticate
        self.client = client
        self.complete = False
        self.identity: object = None

    def evaluate(self, response: bytes) -> bytes:
        parts = response.split(b"\0")
        if len(parts) != 3:
            raise SaslRejected("malformed PLAIN message")
        user, password = parts[1].decode("utf-8", "replace"), parts[2].decode("utf-8", "replace")
        try:
            self.identity = self.authenticate(user, password, self.client)
        except Server2Error as exc:
            raise SaslRejected(str(exc)) from exc
        self.complete = True
        return b""


def sasl_plain(sock: Stream, authenticate: Callable[[str, str, str], object], client: str) -> object:
    """Run the PLAIN handshake; returns what ``authenticate(user, password, client)`` returned."""
    mechanism = negotiate(sock, {"PLAIN": lambda: PlainMechanism(authenticate, client)})
    assert isinstance(mechanism, PlainMechanism)
    return mechanism.identity


class ThriftServer:
    """One thread per connection, at most ``max_connections`` at once.  Stopping is two
    steps, so that a restart can drain: ``draining`` ends ``serve`` (no new connections),
    ``stopping`` ends the connections."""

    def __init__(self, sock: socket.socket, processor, context: ConnectionContext,
                 authenticate: Callable[[str, str, str], object], disconnected: Callable[[], None],
                 max_connections: int, read_timeout: float, tls: ssl.SSLContext | None = None):
        self.disconnected = disconnected
        self.tls = tls
        self.sock = sock
        self.processor = processor
        self.context = context
        self.authenticate = authenticate
        self.slots = threading.BoundedSemaphore(max_connections)
        self.read_timeout = read_timeout
        self.draining = threading.Event()
        self.stopping = threading.Event()

    def serve(self) -> None:
        self.sock.settimeout(0.5)
        while not (self.draining.is_set() or self.stopping.is_set()):
            try:
                conn, peer = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                if self.draining.is_set() or self.stopping.is_set():
                    return
                raise
            if not self.slots.acquire(blocking=False):
                log.warning("too many connections; refused", extra={"peer": peer[0]})
                conn.close()
                continue
            threading.Thread(target=self._serve_connection, args=(conn, peer), daemon=True).start()

    def _serve_connection(self, conn: socket.socket, peer) -> None:
        try:
            conn.settimeout(self.read_timeout)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.context.peer = f"{peer[0]}:{peer[1]}"
            self.context.address = peer[0]
            self.context.identity = None
            self.context.sessions = []
            if self.tls is not None:
                conn = self.tls.wrap_socket(conn, server_side=True)
            first = conn.recv(1)
            stream = Replayed(conn, first)
            tsocket = TSocket.TSocket()
            tsocket.handle = stream
            if first == b"\x80":                      # a strict binary-protocol message: NOSASL
                transport = TTransport.TBufferedTransport(tsocket)
            elif first == bytes([START]):
                self.context.identity = sasl_plain(stream, self.authenticate, peer[0])
                transport = TTransport.TFramedTransport(tsocket)
            else:
                log.info("closing a connection that speaks neither SASL nor Thrift", extra={"peer": peer[0]})
                return
            protocol = TBinaryProtocolAccelerated(transport)
            while not self.stopping.is_set():
                self.processor.process(protocol, protocol)
        except (EOFError, TTransport.TTransportException, ConnectionError, socket.timeout) as exc:
            log.debug("connection closed", extra={"peer": peer[0], "reason": str(exc)})
        except ssl.SSLError as exc:
            log.info("closing a connection that failed the TLS handshake", extra={"peer": peer[0], "error": str(exc)})
        except TException as exc:
            log.info("closing a connection after a protocol error", extra={"peer": peer[0], "error": str(exc)})
        except Exception:
            log.exception("connection failed", extra={"peer": peer[0]})
        finally:
            conn.close()
            try:
                self.disconnected()
            finally:
                self.slots.release()
