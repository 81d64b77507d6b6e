"""Bounds on what clients may hold of a namenode worker: connections, and time without a
complete request head.

Connections start on the front (hopshive.webhdfs.front), which keeps the same timer, and
may be handed to aiohttp.  aiohttp's keep-alive timer closes a connection whose next request head has not arrived
within ``keepalive_timeout`` of the connection opening or of the previous response, however
slowly the client trickles header bytes; ``idle_timeout`` is that timer.  Connections beyond
``max_connections`` are answered at once with 503 and Retry-After (Hadoop's
RetriableException), so a flood is refused instead of stalling the clients already served.
"""

from __future__ import annotations

import asyncio
import json
import logging
import ssl

from aiohttp import web

from .front import Front

log = logging.getLogger(__name__)
RETRY_AFTER_S = 1


def _refusal(max_connections: int) -> bytes:
    body = json.dumps({"RemoteException": {
        "exception": "RetriableException", "javaClassName": "org.apache.hadoop.ipc.RetriableException",
        "message": f"The namenode is serving its maximum of {max_connections} connections; retry later"}}).encode()
    return (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
            b"Retry-After: %d\r\nConnection: close\r\nContent-Length: %d\r\n\r\n" % (RETRY_AFTER_S, len(body))) + body


class _Refuse(asyncio.Protocol):
    def __init__(self, response: bytes):
        self.response = response

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.write(self.response)
        transport.close()


class BoundedSockSite(web.SockSite):
    """A SockSite whose connections start on ``front`` and that refuses connections beyond
    ``max_connections`` (on the front and on aiohttp together).  With ``tls``, every
    connection is TLS (the front and aiohttp see the decrypted stream; a refused one gets its
    503 over TLS too)."""

    def __init__(self, runner: web.BaseRunner, sock, max_connections: int, front: Front,
                 tls: ssl.SSLContext | None = None):
        super().__init__(runner, sock, ssl_context=tls)
        self.max_connections = max_connections
        self.front = front
        self._response = _refusal(max_connections)

    def _protocol(self) -> asyncio.Protocol:
        if len(self._runner.server.connections) + len(self.front.connections) >= self.max_connections:
            log.warning("connection refused: limit reached", extra={"max_connections": self.max_connections})
            return _Refuse(self._response)
        return self.front.protocol()

    async def start(self) -> None:
        await web.BaseSite.start(self)      # registers the site with its runner
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(self._protocol, sock=self._sock, ssl=self._ssl_context)
