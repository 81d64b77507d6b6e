"""A threaded Thrift server: one thread per connection (clients keep connections open and
idle between calls, as Hive's TThreadPoolServer assumes), at most ``max_concurrent`` calls
running at once, the accelerated binary protocol, and a graceful stop.

The transport is detected per connection: SASL (first byte START: Hive's and Spark's client
with ``hive.metastore.sasl.enabled``; the handshake runs the mechanisms the server was given,
then the stream is framed), unframed binary (what Hive, Spark and pyiceberg send without
SASL) or framed binary.  When SASL is required, an unframed or framed connection gets its
first call answered with a TApplicationException that says so, and is closed.  Bytes that
are none of these, a failed handshake, or a message the protocol cannot decode close that
connection only.  On ``stop`` the listener closes, idle connections are closed
and calls in progress finish (up to the grace period).

With ``tls``, a connection whose first byte opens a TLS handshake (0x16) is TLS, and any of
the above inside it.  Hive 2.3's client (Spark's built-in one) cannot do both: its
HiveMetaStoreClient.open() wraps the socket in SASL *or* in SSL, never SSL under SASL.  So
``plain_sasl`` lets SASL connections in without TLS when they protect themselves: DIGEST-MD5
with a delegation token at qop=auth-conf (``hadoop.rpc.protection=privacy``: every message
encrypted and signed with keys from the token's password, which never crosses the wire).
Every other connection without TLS, a SASL one at qop=auth or auth-int included, gets its
first call answered with a refusal that says what is required.
"""

from __future__ import annotations

import logging
import select
import socket
import ssl
import threading
import time
from typing import Callable

from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.transport.TTransport import TBufferedTransport, TFramedTransport, TTransportBase, TTransportException

from ...core.service import accepted
from ...core.tls import Replayed
from ...security.sasl import MAX_FRAME, START, Mechanism, SaslError, SecuredStream, negotiate

log = logging.getLogger(__name__)

STRING_LIMIT = 256 * 1024 * 1024
CONTAINER_LIMIT = 10_000_000
POLL = 0.5
HANDSHAKE_TIMEOUT = 30.0
TLS_HANDSHAKE = b"\x16"    # the first byte of a TLS record carrying a ClientHello
TLS_REFUSAL = ("This metastore requires TLS (hive.metastore.use.SSL), or SASL with a delegation token and "
               "privacy (hadoop.rpc.protection=privacy)")


class SocketTransport(TTransportBase):
    """The raw socket under a buffered or framed transport."""

    def __init__(self, sock: socket.socket):
        self.sock = sock

    def isOpen(self) -> bool:
        return True

    def read(self, size: int) -> bytes:
        try:
            data = self.sock.recv(size)
        except socket.timeout as exc:
            raise TTransportException(TTransportException.TIMED_OUT, "read timed out") from exc
        except OSError as exc:
            raise TTransportException(TTransportException.END_OF_FILE, str(exc)) from exc
        if not data:
            raise TTransportException(TTransportException.END_OF_FILE, "connection closed by the client")
        return data

    def write(self, buf: bytes) -> None:
        self.sock.sendall(buf)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.sock.close()


def _buffered(transport) -> bool:
    buf = transport.cstringio_buf
    return buf.tell() < len(buf.getbuffer())


def _drain(conn: socket.socket) -> None:
    """Close our side, then read what the client had already sent (a SASL client sends its
    first response with START): closing with unread input resets the connection, and the
    client would lose the reason it was sent."""
    try:
        conn.shutdown(socket.SHUT_WR)
        conn.settimeout(1.0)
        for _ in range(16):
            if not conn.recv(65536):
                break
    except OSError:
        pass


class ThriftServer:
    """``new_session(address, mechanism)`` makes a connection's session; ``mechanism`` is the
    completed SASL mechanism (who the client proved to be), None without SASL.  With
    ``sasl_required`` set, ``sasl_refusal`` is the message a connection without SASL gets."""

    def __init__(self, sock: socket.socket, processor, new_session: Callable[[tuple, Mechanism | None], object],
                 max_concurrent: int = 16, max_connections: int = 1000, read_timeout: float = 600.0,
                 sasl: dict[str, Callable[[], Mechanism]] | None = None, sasl_refusal: str | None = None,
                 tls: ssl.SSLContext | None = None, plain_sasl: bool = True):
        self.sock = sock
        self.tls, self.plain_sasl = tls, plain_sasl
        self.processor = processor
        self.new_session = new_session
        self.sasl = sasl or {}
        self.sasl_refusal = sasl_refusal
        self.calls = threading.BoundedSemaphore(max_concurrent)
        self.max_connections = max_connections
        self.read_timeout = read_timeout
        self.stopping = threading.Event()
        self._threads: set[threading.Thread] = set()
        self._lock = threading.Lock()

    @property
    def port(self) -> int:
        return self.sock.getsockname()[1]

    def serve(self) -> None:
        """Accept connections until ``stop``."""
        for conn, address in accepted(self.sock, self.stopping, POLL):
            with self._lock:
                if len(self._threads) >= self.max_connections:
                    log.warning("too many connections; refusing one", extra={"peer": address[0]})
                    conn.close()
                    continue
                thread = threading.Thread(target=self._connection, args=(conn, address), daemon=True,
                                          name=f"hms-{address[0]}:{address[1]}")
                self._threads.add(thread)
            thread.start()

    def stop(self, grace: float = 30.0) -> None:
        self.stopping.set()
        try:
            self.sock.close()
        except OSError:
            pass
        deadline = time.monotonic() + grace
        for thread in list(self._threads):
            thread.join(max(0.0, deadline - time.monotonic()))

    # ---------------------------------------------------------------- connections
    def _wait_readable(self, conn: socket.socket) -> bool:
        if getattr(conn, "pending", None) and conn.pending():     # already decrypted by TLS
            return True
        while not self.stopping.is_set():
            readable, _, _ = select.select([conn], [], [], POLL)
            if readable:
                return True
        return False

    def _tls(self, conn: socket.socket) -> Replayed:
        """The TLS handshake, then the first bytes read ahead so that ``_kind`` can peek."""
        conn.settimeout(min(HANDSHAKE_TIMEOUT, self.read_timeout))
        secure = self.tls.wrap_socket(conn, server_side=True)
        head = b""
        while len(head) < 6 and head[:1] != b"\x80":
            chunk = secure.recv(6 - len(head))
            if not chunk:
                break
            head += chunk
        secure.settimeout(self.read_timeout)
        return Replayed(secure, head)

    @staticmethod
    def _kind(conn: socket.socket) -> str | None:
        """"buffered" (unframed), "framed", "sasl" from the first bytes; None for garbage."""
        deadline = time.monotonic() + 5.0
        head = b""
        while len(head) < 6 and time.monotonic() < deadline:
            head = conn.recv(6, socket.MSG_PEEK)
            if not head:
                return None
            if head[:1] == b"\x80":
                return "buffered"
            if len(head) < 6:
                time.sleep(0.01)
        if len(head) < 6:
            return None
        if head[4:6] == b"\x80\x01" and int.from_bytes(head[:4], "big") <= STRING_LIMIT:
            return "framed"
        if head[0] == START and int.from_bytes(head[1:5], "big") <= MAX_FRAME:
            return "sasl"
        return None

    @staticmethod
    def _refuse(protocol: TBinaryProtocolAccelerated, peer: str, refusal: str) -> None:
        """Answer the first call with why it is refused (``refusal``); nothing is served."""
        name, _, seqid = protocol.readMessageBegin()
        protocol.skip(TType.STRUCT)
        protocol.readMessageEnd()
        log.warning("refused a connection", extra={"peer": peer, "method": name[:100], "reason": refusal})
        protocol.writeMessageBegin(name, TMessageType.EXCEPTION, seqid)
        TApplicationException(TApplicationException.UNKNOWN, refusal).write(protocol)
        protocol.writeMessageEnd()
        protocol.trans.flush()

    def _connection(self, conn: socket.socket, address: tuple) -> None:
        peer = f"{address[0]}:{address[1]}"
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.settimeout(self.read_timeout)
            if not self._wait_readable(conn):
                return
            secure = self.tls is not None and conn.recv(1, socket.MSG_PEEK) == TLS_HANDSHAKE
            if secure:
                conn = self._tls(conn)
            kind = self._kind(conn)
            if kind is None:
                log.warning("closing a connection that does not speak Thrift binary", extra={"peer": peer})
                return
            mechanism = None
            if kind == "sasl":
                conn.settimeout(min(HANDSHAKE_TIMEOUT, self.read_timeout))
                mechanism = negotiate(conn, self.sasl)
                conn.settimeout(self.read_timeout)
                if mechanism.layer is not None:
                    conn = SecuredStream(conn, mechanism.layer, STRING_LIMIT)
            transport = TBufferedTransport(SocketTransport(conn), 65536) if kind == "buffered" \
                else TFramedTransport(SocketTransport(conn))
            protocol = TBinaryProtocolAccelerated(transport, string_length_limit=STRING_LIMIT,
                                                  container_length_limit=CONTAINER_LIMIT, fallback=True)
            confidential = mechanism is not None and mechanism.layer is not None and mechanism.layer.confidential
            if self.tls is not None and not secure and not (confidential and self.plain_sasl):
                self._refuse(protocol, peer, TLS_REFUSAL)
                return
            if mechanism is None and self.sasl_refusal is not None:
                self._refuse(protocol, peer, self.sasl_refusal)
                return
            session = self.new_session(address, mechanism)
            while not self.stopping.is_set():
                if not _buffered(transport) and not self._wait_readable(conn):
                    break
                with self.calls:
                    self.processor.process(protocol, protocol, session)
        except ssl.SSLError as exc:
            log.info("closing a connection that failed the TLS handshake", extra={"peer": peer, "reason": str(exc)})
        except SaslError as exc:
            log.warning("closing a connection that failed SASL authentication", extra={"peer": peer,
                                                                                       "reason": str(exc)})
            _drain(conn)
        except TTransportException as exc:
            if exc.type != TTransportException.END_OF_FILE:
                log.info("connection closed", extra={"peer": peer, "reason": str(exc)})
        except (OSError, EOFError) as exc:
            log.info("connection lost", extra={"peer": peer, "reason": str(exc)})
        except Exception as exc:  # noqa: BLE001 -- undecodable input: drop this connection only
            log.warning("closing a connection after an unreadable message", extra={"peer": peer, "reason": repr(exc)})
        finally:
            try:
                conn.close()
            except OSError:
                pass
            with self._lock:
                self._threads.discard(threading.current_thread())
