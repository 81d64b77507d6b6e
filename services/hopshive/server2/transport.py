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
import struct
import threading
from typing import Callable

from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.Thrift import TException
from thrift.transport import TSocket, TTransport

from .exceptions import Server2Error

log = logging.getLogger("hopshive.server2")
START, OK, BAD, ERROR, COMPLETE = 1, 2, 3, 4, 5
MAX_SASL_FRAME = 64 * 1024


class ConnectionContext(threading.local):
    """What the handshake learned about the connection the current thread serves."""

    peer: str = ""          # host:port
    address: str = ""       # host
    identity = None
    sessions: list = []


def tls_context(cert_file: str, key_file: str) -> ssl.SSLContext:
    """The server's TLS settings (TLS 1.2 or later); a missing or unreadable certificate or key
    raises here, at start, not at the first client."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert_file, key_file)
    return context


class _Replayed:
    """A connection whose first bytes were read to tell the protocols apart (a TLS socket
    cannot peek): they are read again first; everything else is the socket's."""

    def __init__(self, sock: socket.socket, head: bytes):
        self._sock, self._head = sock, head

    def recv(self, size: int, flags: int = 0) -> bytes:
        if self._head:
            data, self._head = self._head[:size], self._head[size:]
            return data
        return self._sock.recv(size)

    def __getattr__(self, name: str):
        return getattr(self._sock, name)


def _recv_exact(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise EOFError("connection closed during the SASL handshake")
        data += chunk
    return data


def _sasl_frame(sock: socket.socket) -> tuple[int, bytes]:
    status, length = struct.unpack(">BI", _recv_exact(sock, 5))
    if length > MAX_SASL_FRAME:
        raise EOFError(f"SASL frame of {length} bytes")
    return status, _recv_exact(sock, length)


def _send_sasl(sock: socket.socket, status: int, payload: bytes) -> None:
    sock.sendall(struct.pack(">BI", status, len(payload)) + payload)


def sasl_plain(sock: socket.socket, authenticate: Callable[[str, str, str], object], client: str) -> object:
    """Run the PLAIN handshake; returns what ``authenticate(user, password, client)`` returned."""
    status, mechanism = _sasl_frame(sock)
    if status != START or mechanism.strip() != b"PLAIN":
        _send_sasl(sock, BAD, b"only the PLAIN SASL mechanism is supported")
        raise EOFError(f"unsupported SASL start {status} {mechanism[:20]!r}")
    status, payload = _sasl_frame(sock)
    if status not in (OK, COMPLETE):
        raise EOFError(f"unexpected SASL status {status}")
    parts = payload.split(b"\0")
    if len(parts) != 3:
        _send_sasl(sock, BAD, b"malformed PLAIN message")
        raise EOFError("malformed PLAIN message")
    user, password = parts[1].decode("utf-8", "replace"), parts[2].decode("utf-8", "replace")
    try:
        result = authenticate(user, password, client)
    except Server2Error as exc:
        _send_sasl(sock, BAD, str(exc).encode())
        raise EOFError(f"authentication failed: {exc}") from exc
    _send_sasl(sock, COMPLETE, b"")
    return result


class ThriftServer:
    """One thread per connection, at most ``max_connections`` at once."""

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
        self.stopping = threading.Event()

    def serve(self) -> None:
        self.sock.settimeout(0.5)
        while not self.stopping.is_set():
            try:
                conn, peer = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                if self.stopping.is_set():
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
            stream = _Replayed(conn, first)
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
