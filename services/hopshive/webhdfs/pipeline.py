"""The write pipeline: each block a writer produces is streamed to peers while it is being
written here (one hop wide: this namenode sends to every peer itself), so a replicated
write costs about what an unreplicated one does instead of one more pass per replica.

A peer that fails, or stops reading for PEER_STALL seconds, is dropped from the pipeline;
the blocks it did not store are then copied synchronously after the last byte to other live
holders (WebHdfs._replicate), so a write is still acknowledged only with its replicas
durable on every live holder it needs that did not fail.
"""

from __future__ import annotations

import asyncio
import logging

from typing import Awaitable, Callable

import aiohttp

from ..namespace.replication import replica_url
from ..security.block_tokens import WRITE

log = logging.getLogger(__name__)
QUEUE_CHUNKS = 8       # chunks buffered per peer before the writer waits for it
PEER_STALL = 60.0


class WritePipeline:
    def __init__(self, session: aiohttp.ClientSession, peers: list[str],
                 grant: Callable[[int, str], Awaitable[dict[str, str]]], scheme: str = "http"):
        """``grant(block_id, access)``: the block access token header a peer wants."""
        self.session, self.peers, self.grant, self.scheme = session, peers, grant, scheme
        self.streams: dict[str, tuple[asyncio.Queue, asyncio.Task]] = {}
        self.sent: list[tuple[int, int, dict[str, asyncio.Task]]] = []   # (block, length, peer -> task)

    async def feed(self, events: list[tuple]) -> None:
        """Forward a BlockWriter's events (see BlockWriter.take_events)."""
        for event in events:
            kind, block_id = event[0], event[1]
            if kind == "open":
                self.streams = {}
                for peer in self.peers:
                    queue: asyncio.Queue = asyncio.Queue(QUEUE_CHUNKS)
                    self.streams[peer] = (queue, asyncio.ensure_future(self._send(peer, block_id, queue)))
            elif kind == "data":
                data = bytes(event[2])
                for peer, (queue, task) in list(self.streams.items()):
                    await self._put(peer, queue, task, data)
            else:
                for peer, (queue, task) in list(self.streams.items()):
                    await self._put(peer, queue, task, None)
                self.sent.append((block_id, event[2], {peer: task for peer, (_, task) in self.streams.items()}))
                self.streams = {}

    async def _put(self, peer: str, queue: asyncio.Queue, task: asyncio.Task, item: bytes | None) -> None:
        if task.done():
            return
        try:
            await asyncio.wait_for(queue.put(item), PEER_STALL)
        except asyncio.TimeoutError:
            log.warning("pipeline peer stalled; dropped", extra={"peer": peer})
            task.cancel()

    async def _send(self, peer: str, block_id: int, queue: asyncio.Queue) -> int:
        async def body():
            while (chunk := await queue.get()) is not None:
                yield chunk
        headers = await self.grant(block_id, WRITE)
        async with self.session.put(replica_url(self.scheme, peer, block_id), data=body(), headers=headers) as reply:
            answer = await reply.json(content_type=None)
            if reply.status != 201:
                raise aiohttp.ClientResponseError(reply.request_info, (), status=reply.status, message=str(answer))
            return int(answer["length"])

    async def finish(self) -> tuple[dict[int, list[str]], set[str]]:
        """(block id -> the peers that stored all of it, durably; the peers that failed)."""
        stored: dict[int, list[str]] = {}
        failed: set[str] = set()
        for block_id, length, tasks in self.sent:
            stored[block_id] = []
            for peer, task in tasks.items():
                try:
                    if not task.cancelled() and await task == length:
                        stored[block_id].append(peer)
                        continue
                    problem = "dropped" if task.cancelled() else "stored a different length"
                except (aiohttp.ClientError, asyncio.TimeoutError, OSError, ValueError, KeyError) as exc:
                    problem = repr(exc)
                failed.add(peer)
                log.warning("pipeline peer failed", extra={"peer": peer, "block_id": block_id, "error": problem})
        return stored, failed

    def abort(self) -> None:
        for _, task in self.streams.values():
            task.cancel()
        for _, _, tasks in self.sent:
            for task in tasks.values():
                task.cancel()
