"""The front: a lean HTTP/1.1 server for the WebHDFS requests that are answered whole.

Metadata calls are small: a request head, no body (or a small file's few KiB), a JSON
answer.  aiohttp spent about 200 us of CPU on each one (its pure-Python parser, which
Hadoop's raw UTF-8 targets require, the request, response and header objects), more than
the namespace operation itself.  The front reads such a request with a few bytes
operations, runs it through the same WebHdfs handlers, and writes the Reply in one go.

It only takes what it fully understands: HTTP/1.1, a target under /webhdfs/v1 without
control characters, well-formed header lines, a Host header, no Transfer-Encoding, Expect
or Upgrade, at most one Content-Length no larger than ``max_body``, and an operation
answered whole (WebHdfs.answers_whole: not the data requests of OPEN, APPEND or a large
CREATE).  On the first request it does not take, the connection is handed to aiohttp as
it stands (the bytes not yet parsed included), which serves it and everything after it.
Requests on a connection are answered in order, one at a time.

Limits as for aiohttp (hopshive.webhdfs.limits): a connection must complete each request
(head and body) within ``idle_timeout`` of opening or of the previous answer; a head larger
than MAX_HEAD goes to aiohttp, which refuses it.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from email.utils import formatdate
from http import HTTPStatus
from typing import Callable

from yarl import URL

from .app import PREFIX, WebHdfs
from .errors import Reply, remote_exception
from .params import Params

log = logging.getLogger(__name__)
MAX_HEAD = 16 * 1024
_TOKEN = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_FORBIDDEN_IN_TARGET = re.compile(rb"[\x00-\x20\x7f#]")
_FORBIDDEN_IN_VALUE = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
_CONTROL = re.compile(rb"[\x00-\x1f\x7f]")
_NOT_OURS = frozenset((b"transfer-encoding", b"expect", b"upgrade"))
_METHODS = frozenset((b"GET", b"PUT", b"POST", b"DELETE"))
_REASONS = {status.value: status.phrase.encode() for status in HTTPStatus}


class PlainRequest:
    """What WebHdfs handlers read of a request, as the front parsed it."""

    def __init__(self, method: str, raw_path: str, body: bytes | None, remote: str | None, close: bool):
        self.method, self.raw_path, self.remote, self.close = method, raw_path, remote, close
        self._body = body
        path, _, query = raw_path.partition("?")
        self.query = URL.build(path=path, query_string=query, encoded=True).query   # as aiohttp parses it

    @property
    def content_length(self) -> int | None:
        return None if self._body is None else len(self._body)

    async def read(self) -> bytes:
        return self._body or b""


def parse(buffer: bytearray, max_body: int, remote: str | None) -> tuple[PlainRequest, int] | None | bool:
    """The request at the start of ``buffer`` and its length: (PlainRequest, length), None
    when more bytes are needed, False when it is not one the front takes."""
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        line = buffer.split(b"\r\n", 1)[0]
        return None if len(buffer) <= MAX_HEAD and _may_start_a_request(bytes(line)) else False
    if end > MAX_HEAD:
        return False
    lines = bytes(buffer[:end]).split(b"\r\n")
    parts = lines[0].split(b" ")
    if len(parts) != 3 or parts[0] not in _METHODS or parts[2] != b"HTTP/1.1" \
            or not parts[1].startswith(PREFIX.encode()) or _FORBIDDEN_IN_TARGET.search(parts[1]):
        return False
    host, length, close = False, None, False
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or not _TOKEN.fullmatch(name) or _FORBIDDEN_IN_VALUE.search(value):
            return False
        name, value = name.lower(), value.strip(b" \t")
        if name in _NOT_OURS:
            return False
        if name == b"host":
            host = True
        elif name == b"content-length":
            if length is not None or not value.isdigit() or int(value) > max_body:
                return False
            length = int(value)
        elif name == b"connection":
            close = b"close" in (token.strip() for token in value.lower().split(b","))
    start = end + 4
    if not host:
        return False
    if len(buffer) < start + (length or 0):
        return None
    body = bytes(buffer[start:start + length]) if length is not None else None
    request = PlainRequest(parts[0].decode(), parts[1].decode("utf-8", "surrogateescape"), body, remote, close)
    return request, start + (length or 0)


def _may_start_a_request(line: bytes) -> bool:
    """Whether the (first bytes of a) request line could be one the front takes: anything
    else goes to aiohttp at once, which refuses it without waiting for more."""
    method, space, _ = line.partition(b" ")
    if _CONTROL.search(line):
        return False
    return method in _METHODS if space else any(m.startswith(method) for m in _METHODS)


class _Clock:
    """The Date header, formatted once a second."""

    def __init__(self):
        self.second, self.value = 0, b""

    def date(self) -> bytes:
        now = int(time.time())
        if now != self.second:
            self.second, self.value = now, formatdate(now, usegmt=True).encode()
        return self.value


def encode(reply: Reply, close: bool, clock: _Clock) -> bytes:
    head = [b"HTTP/1.1 %d %s\r\nDate: %s\r\nContent-Length: %d\r\n"
            % (reply.status, _REASONS.get(reply.status, b"Unknown"), clock.date(), len(reply.body))]
    head += [f"{name}: {value}\r\n".encode("latin-1") for name, value in reply.headers.items()]
    if close:
        head.append(b"Connection: close\r\n")
    head.append(b"\r\n")
    return b"".join(head) + reply.body


class Front:
    """One worker's front: its connections, the WebHdfs service, the aiohttp server that
    takes connections over (``hand_off()`` makes its protocol)."""

    def __init__(self, service: WebHdfs, hand_off: Callable[[], asyncio.Protocol], idle_timeout: float):
        self.service, self.hand_off, self.idle_timeout = service, hand_off, idle_timeout
        self.max_body = service.ns.small_file_limit
        self.connections: set[FrontProtocol] = set()
        self.clock = _Clock()
        self.closing = False

    def protocol(self) -> asyncio.Protocol:
        return FrontProtocol(self)

    async def shutdown(self, timeout: float) -> None:
        """Close idle connections now and busy ones after their answer, within ``timeout``."""
        self.closing = True
        for connection in list(self.connections):
            if connection.task is None:
                connection.transport.close()
        tasks = [c.task for c in self.connections if c.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)
            for task in tasks:
                task.cancel()


class FrontProtocol(asyncio.Protocol):
    def __init__(self, front: Front):
        self.front = front
        self.buffer = bytearray()
        self.task: asyncio.Task | None = None
        self.transport: asyncio.Transport | None = None
        self.remote: str | None = None
        self._timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        peer = transport.get_extra_info("peername")
        self.remote = peer[0] if isinstance(peer, tuple) else None
        self.front.connections.add(self)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self.front.connections.discard(self)
        self._disarm()

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if self.task is None:
            self._next()
        elif len(self.buffer) > MAX_HEAD + self.front.max_body:
            self.transport.pause_reading()      # a pipelining client waits for its answers

    def _arm(self) -> None:
        self._disarm()
        self._timer = asyncio.get_running_loop().call_later(self.front.idle_timeout, self.transport.close)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _next(self) -> None:
        try:
            parsed = parse(self.buffer, self.front.max_body, self.remote)
        except Exception:   # whatever the front cannot read is aiohttp's to judge
            parsed = False
        if parsed is None:
            return
        if parsed is not False:
            request, length = parsed
            params = Params(request.query)
            if self.front.service.answers_whole(request.method, params, request.content_length or 0):
                del self.buffer[:length]
                self._disarm()
                self.task = asyncio.get_running_loop().create_task(self._serve(request, params))
                return
        self._hand_off()

    async def _serve(self, request: PlainRequest, params: Params) -> None:
        try:
            reply = await self.front.service.answer(request, params)
            if not isinstance(reply, Reply):
                raise TypeError(f"{request.raw_path} was answered with a stream, not a Reply")
        except Exception as exc:    # answer() turns errors into replies; this is a last resort
            log.exception("front request failed", extra={"target": request.raw_path})
            reply = remote_exception(exc)
        self.task = None
        if self.transport.is_closing():
            return
        close = request.close or self.front.closing
        try:
            data = encode(reply, close, self.front.clock)
        except Exception as exc:    # a reply HTTP cannot carry: answer that, never leave the client waiting
            log.exception("front reply could not be encoded", extra={"target": request.raw_path})
            close = True
            data = encode(remote_exception(exc), close, self.front.clock)
        self.transport.write(data)
        if close:
            self.transport.close()
            return
        self._arm()
        self.transport.resume_reading()
        self._next()

    def _hand_off(self) -> None:
        """aiohttp takes the connection over from the first byte not yet answered."""
        self._disarm()
        self.front.connections.discard(self)
        handler = self.front.hand_off()
        self.transport.set_protocol(handler)
        handler.connection_made(self.transport)
        if self.buffer:
            handler.data_received(bytes(self.buffer))
        self.transport.resume_reading()
