"""The server side of Thrift's SASL transport negotiation (TSaslServerTransport).

Negotiation frames are ``[1-byte status][4-byte big-endian length][payload]``: the client
opens with START and the mechanism's name, then sends OK (or COMPLETE) frames with its
responses; the server answers OK with a challenge while the mechanism needs more, COMPLETE
(with its last challenge, possibly empty) once the client is authenticated, BAD with a
reason when it refuses, ERROR on a broken negotiation.  Afterwards the connection carries
a framed Thrift stream (4-byte length before each message); when the mechanism negotiated a
security layer (DIGEST-MD5's auth-int or auth-conf), each frame holds a wrapped message
(``SecuredStream``).

The mechanisms are given by the service (``Mechanism``); this module only frames and
drives them.  Used by server2 (PLAIN) and the metastore (DIGEST-MD5).
"""

from __future__ import annotations

import struct
from typing import Callable, Protocol

START, OK, BAD, ERROR, COMPLETE = 1, 2, 3, 4, 5
MAX_FRAME = 64 * 1024


class SaslError(EOFError):
    """The negotiation failed; the connection must be closed (the client was told why when
    it could be)."""


class SaslRejected(Exception):
    """Raised by a mechanism to refuse the client; the message is sent to it in BAD."""


class SecurityLayer(Protocol):
    """What a mechanism negotiated to protect the messages after the handshake."""

    confidential: bool      # encrypted, not only signed

    def wrap(self, message: bytes) -> bytes: ...

    def unwrap(self, wrapped: bytes) -> bytes:
        """The message; raises SaslError when it fails its check."""
        ...


class Mechanism(Protocol):
    """One server-side SASL exchange."""

    complete: bool
    layer: SecurityLayer | None     # set on completion when the client chose one

    def evaluate(self, response: bytes) -> bytes:
        """The challenge for the client's ``response``; sets ``complete`` when the client is
        authenticated.  Raises SaslRejected to refuse it."""
        ...


class Stream(Protocol):
    def recv(self, size: int) -> bytes: ...

    def sendall(self, data: bytes) -> None: ...


def _recv_exact(sock: Stream, size: int) -> bytes:
    """``size`` bytes, gathered without re-copying what came before (a wrapped frame after the
    handshake may be many megabytes in many chunks)."""
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise SaslError("connection closed in the middle of a SASL frame")
        data += chunk
    return bytes(data)


def read_frame(sock: Stream) -> tuple[int, bytes]:
    status, length = struct.unpack(">BI", _recv_exact(sock, 5))
    if length > MAX_FRAME:
        raise SaslError(f"SASL frame of {length} bytes (at most {MAX_FRAME})")
    return status, _recv_exact(sock, length)


def send_frame(sock: Stream, status: int, payload: bytes) -> None:
    sock.sendall(struct.pack(">BI", status, len(payload)) + payload)


def _refuse(sock: Stream, status: int, reason: str) -> SaslError:
    try:
        send_frame(sock, status, reason.encode())
    except OSError:
        pass
    return SaslError(reason)


def negotiate(sock: Stream, mechanisms: dict[str, Callable[[], Mechanism]]) -> Mechanism:
    """Run the server side of the handshake on ``sock``; the completed mechanism (which
    knows whom it authenticated).  Raises SaslError after telling the client why."""
    status, payload = read_frame(sock)
    if status != START:
        raise _refuse(sock, ERROR, f"expected a SASL START frame, got status {status}")
    name = payload.strip().decode("ascii", "replace")
    factory = mechanisms.get(name)
    if factory is None:
        offered = ", ".join(sorted(mechanisms))
        raise _refuse(sock, BAD, f"unsupported SASL mechanism {name[:40]!r}; this server offers {offered}")
    mechanism = factory()
    while True:
        status, payload = read_frame(sock)
        if status in (BAD, ERROR):
            raise SaslError(f"the client gave up the SASL handshake: {payload[:200].decode('utf-8', 'replace')}")
        if status not in (OK, COMPLETE):
            raise _refuse(sock, ERROR, f"unexpected SASL status {status} during the handshake")
        try:
            challenge = mechanism.evaluate(payload)
        except SaslRejected as exc:
            raise _refuse(sock, BAD, str(exc)) from exc
        if mechanism.complete:
            send_frame(sock, COMPLETE, challenge)
            return mechanism
        if status == COMPLETE:
            raise _refuse(sock, ERROR, f"the client completed the {name} handshake before the server")
        send_frame(sock, OK, challenge)


class SecuredStream:
    """A socket whose frames (a 4-byte length, then the bytes) carry wrapped messages, seen
    through ``recv`` and ``sendall`` as the plain framed stream Thrift's TFramedTransport
    reads and writes: each frame received is unwrapped, each frame sent is wrapped.
    ``pending()`` counts what is unwrapped but not yet read, which select() cannot see."""

    def __init__(self, sock, layer: SecurityLayer, max_frame: int):
        self._sock, self._layer, self._max_frame = sock, layer, max_frame
        self._incoming = b""
        self._outgoing = b""

    def recv(self, size: int, flags: int = 0) -> bytes:
        if not self._incoming:
            try:
                (length,) = struct.unpack(">I", _recv_exact(self._sock, 4))
            except SaslError:
                return b""      # closed between frames: the end of the stream, as for a socket
            if length > self._max_frame:
                raise SaslError(f"a wrapped frame of {length} bytes (at most {self._max_frame})")
            message = self._layer.unwrap(_recv_exact(self._sock, length))
            self._incoming = struct.pack(">I", len(message)) + message
        data, self._incoming = self._incoming[:size], self._incoming[size:]
        return data

    def sendall(self, data: bytes) -> None:
        self._outgoing += data
        while len(self._outgoing) >= 4:
            (length,) = struct.unpack(">I", self._outgoing[:4])
            if len(self._outgoing) < 4 + length:
                break
            wrapped = self._layer.wrap(self._outgoing[4:4 + length])
            self._outgoing = self._outgoing[4 + length:]
            self._sock.sendall(struct.pack(">I", len(wrapped)) + wrapped)

    def pending(self) -> int:
        inner = getattr(self._sock, "pending", None)
        return len(self._incoming) + (inner() if inner else 0)

    def __getattr__(self, name: str):
        return getattr(self._sock, name)
