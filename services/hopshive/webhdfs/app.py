"""WebHDFS v1 handlers: a thin layer that parses parameters, runs the namespace operation
in a worker thread and renders Hadoop's JSON.

CREATE, APPEND and OPEN are two-step as in HDFS: the first request is answered with a 307
redirect to the data URL (this same server, with ``data=true``), which carries the bytes.

Blocks are replicated (hopshive.namespace.replication): a write is answered once
``min(replication, live holders)`` replicas are durable, copied synchronously from this
namenode to its peers' internal block endpoint (``/internal/v1/blocks/<id>``, which the
replication monitor uses too); a read takes each block from this disk when it holds a
sound replica, else from a live holder, and moves on to the next replica, at the same byte,
when one is corrupt or its holder fails mid-stream.  The internal endpoint serves only
callers with a block access token for that block (hopshive.security.block_tokens), which
only namenodes can sign, in every security mode.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import logging
import time
import uuid
from dataclasses import dataclass, replace
from typing import Awaitable, Callable
from urllib.parse import quote, unquote_to_bytes, urlencode

import aiohttp
from aiohttp import web

from ..core.build import RUNNING
from ..core.metrics import CONTENT_TYPE, render
from ..core.tls import client_context, http_scheme
from ..exceptions import (AccessDenied, BlocksUnavailable, CorruptReplica, HopsHiveError, InvalidArgument,
                          NamespaceError)
from ..namespace.blocks import CHECK_CHUNK, READ_CHUNK, Block, FileChecksum, segments
from ..namespace.inodes import BLOCK_SIZE_BITS
from ..namespace.namespace import MAX_REPLICATION, Namespace
from ..namespace.replication import INTERNAL, replica_url
from ..namespace.status import FileStatus
from ..namespace.users import Caller
from ..security.block_tokens import HEADER, READ, WRITE, BlockTokens
from .errors import Reply, json_response, remote_exception
from .identity import Identity
from .token_ops import DelegationTokens
from .loop_reads import LoopReads
from .metrics import OTHER_OP, NamenodeMetrics
from .params import Params
from .pipeline import WritePipeline

log = logging.getLogger(__name__)
PREFIX = "/webhdfs/v1"
LIST_BATCH = 1000
MAX_BLOCK_SIZE = (1 << BLOCK_SIZE_BITS) - 1   # what the inode header holds
Handler = Callable[["Request"], Awaitable[web.StreamResponse]]


@dataclass
class Request:
    """One WebHDFS call: the HTTP request, its path, parameters and caller."""

    http: web.Request
    path: str
    params: Params
    caller: Caller
    service: "WebHdfs"
    proven: bool = False     # the caller showed a delegation token

    def run(self, function, *args, **kwargs):
        """Run a blocking namespace call off the event loop."""
        return asyncio.get_running_loop().run_in_executor(None, functools.partial(function, *args, **kwargs))

    async def read(self, function, *args):
        """Run a namespace read of one or two short statements that take no locks: on the
        event loop with the worker's own connection (no hop to a thread), else as ``run``.
        ``function`` takes the transaction as its last argument."""
        return await self.service.loop_reads.run(lambda tx: function(*args, tx),
                                                 lambda: self.run(function, *args))


def request_path(raw_target: str) -> str:
    """The file-system path of a request target.  Hadoop sends non-ASCII names as raw UTF-8
    bytes (the HTTP parser decodes them with surrogateescape) and ASCII specials
    percent-encoded once; both are decoded here, strictly.  (Redirects are sent back fully
    percent-encoded: Java reads a Location header as latin-1.)"""
    raw = raw_target.split("?", 1)[0][len(PREFIX):]
    return unquote_to_bytes(raw.encode("utf-8", "surrogateescape")).decode("utf-8") or "/"


def file_status_json(status: FileStatus) -> dict:
    return {
        "accessTime": status.access_time, "blockSize": status.block_size, "childrenNum": status.children_num,
        "fileId": status.file_id, "group": status.group, "length": status.length,
        "modificationTime": status.modification_time, "owner": status.owner, "pathSuffix": status.path_suffix,
        "permission": format(status.permission, "o"), "replication": status.replication, "storagePolicy": 0,
        "type": "DIRECTORY" if status.is_dir else "FILE",
    }


class WebHdfs:
    def __init__(self, namespace: Namespace, config: dict, loop_reads: LoopReads, identity: Identity,
                 block_tokens: BlockTokens, metrics: NamenodeMetrics):
        self.ns = namespace
        self.metrics = metrics
        self.block_tokens = block_tokens
        self.config = config
        self.loop_reads = loop_reads
        self.identity = identity
        self.tokens = DelegationTokens(identity, config["advertised_address"])
        self.advertised = config["advertised_address"]
        # https everywhere a client or a peer is sent when this namenode serves TLS.
        self.scheme = http_scheme(config)
        self._peer_tls = client_context(config.get("tls_ca_file", "")) if self.scheme == "https" else None
        self._peer_session: aiohttp.ClientSession | None = None
        self.ops: dict[tuple[str, str], Handler] = {
            ("GET", "GETFILESTATUS"): self.get_file_status,
            ("GET", "LISTSTATUS"): self.list_status,
            ("GET", "LISTSTATUS_BATCH"): self.list_status_batch,
            ("GET", "GETCONTENTSUMMARY"): self.content_summary,
            ("GET", "GETFILECHECKSUM"): self.file_checksum,
            ("GET", "GETFILEBLOCKLOCATIONS"): self.block_locations,
            ("GET", "GETHOMEDIRECTORY"): self.home_directory,
            ("GET", "GETTRASHROOT"): self.trash_root,
            ("GET", "GETSERVERDEFAULTS"): self.server_defaults,
            ("GET", "FSCK"): self.fsck,   # HopsHive extension, for `hopshive-dfs fsck`
            ("GET", "GETLOCALREPLICAS"): self.local_replicas,   # HopsHive extension: short-circuit reads
            ("GET", "OPEN"): self.open,
            ("PUT", "MKDIRS"): self.mkdirs,
            ("PUT", "CREATE"): self.create,
            ("PUT", "RENAME"): self.rename,
            ("PUT", "SETPERMISSION"): self.set_permission,
            ("PUT", "SETOWNER"): self.set_owner,
            ("PUT", "SETTIMES"): self.set_times,
            ("PUT", "SETREPLICATION"): self.set_replication,
            ("POST", "APPEND"): self.append,
            ("POST", "EXPUNGE"): self.expunge,  # HopsHive extension, for `hopshive-dfs expunge`
            ("DELETE", "DELETE"): self.delete,
            ("GET", "GETDELEGATIONTOKEN"): self.tokens.get,
            ("PUT", "RENEWDELEGATIONTOKEN"): self.tokens.renew,
            ("PUT", "CANCELDELEGATIONTOKEN"): self.tokens.cancel,
        }

    # ------------------------------------------------------------- plumbing
    def application(self) -> web.Application:
        app = web.Application(client_max_size=0)
        app.router.add_get("/health", self.health)
        app.router.add_get("/metrics", self.prometheus)
        app.router.add_route("*", PREFIX + "{tail:.*}", self.dispatch)
        app.router.add_get(INTERNAL + "/{block_id:[0-9]+}", self.replica_get)
        app.router.add_put(INTERNAL + "/{block_id:[0-9]+}", self.replica_put)
        app.on_cleanup.append(self._close_peers)
        return app

    async def health(self, request: web.Request) -> web.Response:
        try:
            await asyncio.get_running_loop().run_in_executor(
                None, lambda: self.ns.db.run(lambda tx: tx.query_one("SELECT 1")))
        except Exception as exc:
            return json_response({"status": "unavailable", "reason": type(exc).__name__}, 503).aiohttp()
        return json_response({"status": "ok", "namenode_id": self.ns.liveness.namenode_id,
                              "build": RUNNING}).aiohttp()

    async def prometheus(self, request: web.Request) -> web.Response:
        """/metrics: the block health gauges read the database, so off the event loop."""
        body = await asyncio.get_running_loop().run_in_executor(None, render, self.metrics.registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE})

    async def dispatch(self, http: web.Request) -> web.StreamResponse:
        """The aiohttp route of every WebHDFS request the front did not serve itself."""
        answer = await self.answer(http)
        return answer.aiohttp() if isinstance(answer, Reply) else answer

    def answers_whole(self, method: str, params: Params, body_length: int) -> bool:
        """Whether a request is answered with a Reply after reading no more than a body of
        ``body_length`` bytes, so the front may serve it: all but the data requests of OPEN
        and APPEND (streamed) and of a CREATE too large for a small file."""
        if (params.text("data") or "").lower() != "true":
            return True
        op = (params.text("op") or "").upper()
        if op == "CREATE":
            return body_length <= self.ns.small_file_limit
        return op not in ("OPEN", "APPEND")

    async def answer(self, http, params: Params | None = None) -> Reply | web.StreamResponse:
        """Run one WebHDFS request, counted and timed per op (hopshive.webhdfs.metrics):
        ``http`` is aiohttp's request or the front's (the attributes handlers read: method,
        raw_path, query, remote, content_length, read())."""
        started = time.monotonic()
        params = params or Params(http.query)
        op = (params.text("op") or "").upper()
        handler = self.ops.get((http.method, op))
        reply = await self._answer(http, params, op, handler)
        self.metrics.observe(op if handler else OTHER_OP, time.monotonic() - started, reply.status)
        return reply

    async def _answer(self, http, params: Params, op: str, handler: Handler | None) -> Reply | web.StreamResponse:
        try:
            path = request_path(http.raw_path)
            if handler is None:
                if not op:
                    raise InvalidArgument("Required parameter \"op\" is missing")
                raise InvalidArgument(f"Invalid value for webhdfs parameter \"op\": {op} is not a "
                                      f"valid {http.method} operation")
            # Identities and token checks are cached (re-read every few seconds): no thread hop
            # needed for most requests.
            caller, proven = self.identity.caller(params, http.remote)
            return await handler(Request(http, path, params, caller, self, proven))
        except HopsHiveError as exc:
            return remote_exception(exc)
        except UnicodeDecodeError:
            return remote_exception(InvalidArgument("The request path is not valid UTF-8"))
        except (ConnectionResetError, asyncio.CancelledError):
            raise
        except Exception as exc:
            log.exception("request failed", extra={"method": http.method, "target": http.raw_path})
            return remote_exception(exc)

    def _redirect(self, req: Request, to: str | None = None) -> Reply:
        """307 to the data URL on namenode ``to`` (this one by default)."""
        query = dict(req.http.query)
        query["data"] = "true"
        return Reply(307, headers={"Location": f"{self.scheme}://{to or self.advertised}{PREFIX}{quote(req.path)}?"
                                               f"{urlencode(query)}"})

    # ---------------------------------------------------------------- reads
    async def get_file_status(self, req: Request) -> Reply:
        status = await req.read(self.ns.get_status, req.caller, req.path)
        return json_response({"FileStatus": file_status_json(status)})

    async def list_status(self, req: Request) -> Reply:
        statuses = await req.run(self.ns.list_status, req.caller, req.path)
        return json_response({"FileStatuses": {"FileStatus": [file_status_json(s) for s in statuses]}})

    async def list_status_batch(self, req: Request) -> Reply:
        start = req.params.text("startAfter", "")
        statuses = await req.run(self.ns.list_status, req.caller, req.path, start, LIST_BATCH + 1)
        remaining = 0
        if len(statuses) > LIST_BATCH:
            statuses = statuses[:LIST_BATCH]
            remaining = 1  # Hadoop only tests for > 0
        return json_response({"DirectoryListing": {
            "partialListing": {"FileStatuses": {"FileStatus": [file_status_json(s) for s in statuses]}},
            "remainingEntries": remaining}})

    async def content_summary(self, req: Request) -> Reply:
        summary = await req.run(self.ns.content_summary, req.caller, req.path)
        return json_response({"ContentSummary": {
            "directoryCount": summary.directory_count, "fileCount": summary.file_count,
            "length": summary.length, "quota": -1, "spaceConsumed": summary.space_consumed,
            "spaceQuota": -1, "typeQuota": {}}})

    async def file_checksum(self, req: Request) -> Reply:
        inode, blocks = await req.read(self.ns.file_blocks, req.caller, req.path, True)
        try:
            if not all(self.ns.blocks.holds(b) for b in blocks):
                raise CorruptReplica("not every block is held here")
            algorithm, value = await req.run(self.ns.blocks.checksum, blocks, inode.block_size)
        except CorruptReplica:   # blocks held elsewhere, or a bad replica here: read replica by replica
            checksum = FileChecksum(inode.block_size, len(blocks))
            for block in blocks:
                checksum.start_block()
                async for chunk in self._block_bytes(block, 0, block.num_bytes):
                    checksum.update(chunk)
            algorithm, value = checksum.result()
        return json_response({"FileChecksum": {"algorithm": algorithm, "bytes": value.hex(), "length": len(value)}})

    async def block_locations(self, req: Request) -> Reply:
        offset = req.params.integer("offset", 0, minimum=0)
        length = req.params.integer("length", None, minimum=0)
        _, blocks = await req.read(self.ns.file_blocks, req.caller, req.path, False)
        end = None if length is None else offset + length
        located, start = [], 0
        for block in blocks:
            if block.num_bytes and start + block.num_bytes > offset and (end is None or start < end):
                # Any namenode serves a small file; a block, its live holders (this one first).
                holders = [self.advertised] if block.inline else self._readable(block) or list(block.replicas)
                located.append({"hosts": [h.rsplit(":", 1)[0] for h in holders], "names": holders,
                                "topologyPaths": [f"/default-rack/{h}" for h in holders], "offset": start,
                                "length": block.num_bytes, "corrupt": False, "cachedHosts": [],
                                "storageTypes": ["DISK"]})
            start += block.num_bytes
        return json_response({"BlockLocations": {"BlockLocation": located}})

    async def local_replicas(self, req: Request) -> Reply:
        """Short-circuit reads (as HDFS's for a client on a datanode): to a client on this host
        that may read the file, the block files of this disk that hold all of it, with their
        checksum files, so it can read them itself instead of streaming them over HTTP.
        ``null`` when some part is not here (a small file in the database, a block held
        elsewhere): the client then reads through OPEN."""
        if not self._on_this_host(req.http.remote):
            raise AccessDenied("GETLOCALREPLICAS answers clients on the namenode's own host only")
        inode, blocks = await req.read(self.ns.file_blocks, req.caller, req.path, True)
        store = self.ns.blocks
        if not all(not block.inline and store.holds(block) for block in blocks):
            return json_response({"LocalReplicas": None})
        located, start = [], 0
        for block in blocks:
            located.append({"offset": start, "length": block.num_bytes, "path": str(store.path(block.block_id)),
                            "checksums": str(store.meta_path(block.block_id))})
            start += block.num_bytes
        return json_response({"LocalReplicas": {"length": inode.size, "bytesPerChecksum": CHECK_CHUNK,
                                                "blocks": located}})

    def _on_this_host(self, remote: str | None) -> bool:
        try:
            address = ipaddress.ip_address(remote or "")
        except ValueError:
            return False
        return address.is_loopback or str(address) == self.advertised.rsplit(":", 1)[0]

    async def home_directory(self, req: Request) -> Reply:
        return json_response({"Path": f"/user/{req.caller.name}"})

    async def trash_root(self, req: Request) -> Reply:
        return json_response({"Path": f"/user/{req.caller.name}/.Trash"})

    async def server_defaults(self, req: Request) -> Reply:
        return json_response({"FsServerDefaults": {
            "blockSize": self.config["block_size"], "bytesPerChecksum": 512, "writePacketSize": 65536,
            "replication": self.config["replication"], "fileBufferSize": 4096, "encryptDataTransfer": False,
            "trashInterval": self.config["trash_interval"], "checksumType": 2, "keyProviderUri": "",
            "defaultStoragePolicyId": 7}})

    def _readable(self, block: Block) -> list[str]:
        """The holders of ``block``'s sound replicas that are live now, this one first."""
        live = set(self.ns.holders.live())
        if not live.issuperset(block.replicas):   # a holder may have (re)joined since the cache was read
            live = set(self.ns.holders.live(fresh=True))
        return [h for h in self.ns.holders.order(block.replicas) if h in live]

    async def fsck(self, req: Request) -> Reply:
        return json_response({"Fsck": await req.run(self.ns.fsck, req.caller, req.path)})

    async def open(self, req: Request) -> Reply | web.StreamResponse:
        """The redirect goes to a live namenode holding the first block read (this one when
        it holds it, or for a small file); the data request streams each block from this
        disk or from a live holder, replica after replica until one reads sound."""
        offset = req.params.integer("offset", 0, minimum=0)
        length = req.params.integer("length", None, minimum=0)
        inode, blocks = await req.read(self.ns.file_blocks, req.caller, req.path, True)
        if offset > inode.size or offset == inode.size > 0:  # as Hadoop's namenode: 403 IOException
            raise NamespaceError(f"Offset={offset} out of the range [0, {inode.size}); OPEN, path={req.path}")
        count = inode.size - offset if length is None else min(length, inode.size - offset)
        parts = list(segments(blocks, offset, count))
        lost = [block.block_id for block, _, _ in parts if not block.inline and not self._readable(block)]
        if lost:   # as HDFS's client: refuse up front rather than fail mid-stream
            raise BlocksUnavailable(f"Could not obtain blocks {', '.join(f'blk_{b}' for b in lost[:10])}"
                                    f" of {req.path}: no live holder has a sound replica")
        if not req.params.boolean("data", False):
            first = parts[0][0] if parts else None
            return self._redirect(req, None if first is None or self.ns.blocks.holds(first)
                                  else self._readable(first)[0])
        response = web.StreamResponse(headers={"Content-Type": "application/octet-stream",
                                               "Content-Length": str(count)})
        await response.prepare(req.http)
        try:
            for block, start, part in parts:
                async for chunk in self._block_bytes(block, start, part):
                    await response.write(chunk)
        except (ConnectionResetError, BrokenPipeError):
            pass  # clients hang up mid-stream on seek
        except BlocksUnavailable as exc:   # the status line is gone: end the stream short
            log.error("read failed mid-stream", extra={"path": req.path, "error": str(exc)})
            req.http.transport and req.http.transport.abort()
        return response

    async def _block_bytes(self, block: Block, start: int, count: int):
        """``count`` bytes of ``block`` from ``start``: from the database (a small file), this
        disk, or a live holder; a replica that is corrupt or whose holder fails is reported or
        skipped, and the next one continues at the byte reached."""
        if block.inline:
            yield block.data[start:start + count]
            return
        failures = []
        for holder in self.ns.holders.order(block.replicas):
            try:
                if holder == self.ns.blocks.location:
                    source = _iterate(self.ns.blocks.read_local(block.block_id, start, count))
                else:
                    source = self._remote_replica(holder, block.block_id, start, count)
                async for chunk in source:
                    start, count = start + len(chunk), count - len(chunk)
                    yield chunk
                if count == 0:
                    return
                failures.append(f"{holder}: ended {count} bytes short")
            except CorruptReplica as exc:
                log.warning("corrupt replica", extra={"block_id": block.block_id, "holder": holder, "error": str(exc)})
                await asyncio.get_running_loop().run_in_executor(None, self.ns.report_corrupt, block.block_id, holder)
                failures.append(f"{holder}: corrupt")
            except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
                log.warning("replica holder failed", extra={"block_id": block.block_id, "holder": holder,
                                                            "error": repr(exc)})
                failures.append(f"{holder}: {type(exc).__name__}")
        raise BlocksUnavailable(f"Could not obtain block {block.block_id}: no replica could be read"
                                f" ({'; '.join(failures) or 'no replicas recorded'})")

    async def _remote_replica(self, holder: str, block_id: int, start: int, count: int):
        """Bytes of ``holder``'s replica of ``block_id`` (it verifies them as it sends)."""
        url = replica_url(self.scheme, holder, block_id)
        headers = await self._grant(block_id, READ)
        async with self._peers().get(url, params={"offset": str(start), "length": str(count)},
                                     headers=headers) as reply:
            if reply.status == 409:
                raise CorruptReplica(f"{holder} reports its replica of block {block_id} corrupt or missing")
            if reply.status != 200:
                raise aiohttp.ClientResponseError(reply.request_info, (), status=reply.status,
                                                  message=(await reply.text())[:200])
            async for chunk in reply.content.iter_chunked(READ_CHUNK):
                yield chunk

    # --------------------------------------------------- replicas (internal)
    async def replica_get(self, http: web.Request) -> web.StreamResponse:
        """This disk's replica of a block (``offset``, ``length``), verified as it is sent:
        409 when it is missing or corrupt at the start; the stream is cut when it turns out
        corrupt later (either way the replica is reported)."""
        block_id = int(http.match_info["block_id"])
        loop = asyncio.get_running_loop()
        try:
            params = Params(http.query)
            start, count = params.integer("offset", 0, minimum=0), params.integer("length", None, minimum=0)
            if count is None:
                raise InvalidArgument("length is required")
            await loop.run_in_executor(None, self.block_tokens.check, http.headers.get(HEADER), block_id, READ)
        except HopsHiveError as exc:
            return remote_exception(exc).aiohttp()
        chunks = self.ns.blocks.read_local(block_id, start, count)
        try:
            first = await loop.run_in_executor(None, next, chunks, b"")
        except CorruptReplica as exc:
            await loop.run_in_executor(None, self.ns.report_corrupt, block_id, self.ns.blocks.location)
            return remote_exception(exc).aiohttp()
        response = web.StreamResponse(headers={"Content-Type": "application/octet-stream",
                                               "Content-Length": str(count)})
        await response.prepare(http)
        try:
            await response.write(first)
            while True:
                chunk = await loop.run_in_executor(None, next, chunks, b"")
                if not chunk:
                    break
                await response.write(chunk)
        except CorruptReplica:
            await loop.run_in_executor(None, self.ns.report_corrupt, block_id, self.ns.blocks.location)
            http.transport and http.transport.abort()
        except (ConnectionResetError, BrokenPipeError):
            pass
        return response

    async def replica_put(self, http: web.Request) -> web.Response:
        """Store a replica sent by a peer, durably; 201 once fsynced, with its length.  Given
        ``length`` (a copy of a finished block), 200 when a sound one is here already (a
        missing or corrupt one is replaced); without it (the write pipeline, which learns the
        length at the end) the sender compares the length answered."""
        block_id = int(http.match_info["block_id"])
        loop = asyncio.get_running_loop()
        try:
            length = Params(http.query).integer("length", None, minimum=0)
            await loop.run_in_executor(None, self.block_tokens.check, http.headers.get(HEADER), block_id, WRITE)
        except HopsHiveError as exc:
            return remote_exception(exc).aiohttp()
        if length is not None and await loop.run_in_executor(None, self.ns.blocks.sound, block_id, length):
            return json_response({"stored": False, "length": length}, 200).aiohttp()
        replica = self.ns.blocks.replica_file(block_id)
        try:
            async for chunk in http.content.iter_chunked(READ_CHUNK):
                replica.write(chunk)
            if length is not None and replica.length != length:
                raise InvalidArgument(f"received {replica.length} bytes of block {block_id}, expected {length}")
            await loop.run_in_executor(None, replica.close)
        except BaseException as exc:
            replica.discard()
            if isinstance(exc, HopsHiveError):
                return remote_exception(exc).aiohttp()
            raise
        return json_response({"stored": True, "length": replica.length}, 201).aiohttp()

    def _wanted(self, inode, failed: set[str] = frozenset()) -> int:
        """Replicas a write of ``inode`` must make durable: its replication, or every live
        holder (but ``failed``) when fewer are live (the file then stays under-replicated
        until more join)."""
        live = [h for h in self.ns.holders.live() if h not in failed]
        if len(live) < inode.replication:   # a holder may have joined since the cache was read
            live = [h for h in self.ns.holders.live(fresh=True) if h not in failed]
        if len(live) < inode.replication:
            log.warning("fewer live holders than the file's replication: it stays under-replicated until"
                        " more join", extra={"replication": inode.replication, "live": live})
        return min(max(inode.replication, 1), len(live))

    async def _replicate(self, inode, written: list[Block], piped: dict[int, list[str]],
                         failed: set[str]) -> list[Block]:
        """Copy each new block to peers until ``min(replication, live holders)`` replicas are
        durable (``piped``: the peers the write pipeline already stored each block on); the
        blocks, with their holders.  A peer that fails during this write (``failed``, and
        those failing here) no longer counts as live for it, as HDFS's pipeline recovery
        drops a failed datanode: the file is then under-replicated until the monitor copes.
        BlocksUnavailable when fewer replicas than that are durable."""
        done = []
        for block in written:
            holders = list(block.replicas) + piped.get(block.block_id, [])
            for peer in self.ns.holders.copy_targets(tuple(holders) + tuple(failed)):
                if len(holders) >= self._wanted(inode, failed):
                    break
                try:
                    await self._push(peer, block)
                    holders.append(peer)
                except (aiohttp.ClientError, asyncio.TimeoutError, OSError, HopsHiveError) as exc:
                    failed.add(peer)
                    log.warning("replica copy failed", extra={"block_id": block.block_id, "peer": peer,
                                                              "error": repr(exc)})
            wanted = self._wanted(inode, failed)
            if len(holders) < wanted:
                raise BlocksUnavailable(f"block {block.block_id} could only be replicated to {len(holders)}"
                                        f" of the {wanted} live holders its file needs")
            done.append(replace(block, replicas=tuple(holders)))
        return done

    async def _push(self, peer: str, block: Block) -> None:
        async with self._peers().put(replica_url(self.scheme, peer, block.block_id),
                                     params={"length": str(block.num_bytes)},
                                     headers=await self._grant(block.block_id, WRITE),
                                     data=_iterate(self.ns.blocks.read_local(block.block_id, 0, block.num_bytes))
                                     ) as reply:
            if reply.status not in (200, 201):
                raise BlocksUnavailable(f"{peer} refused block {block.block_id}: {(await reply.text())[:200]}")

    async def _grant(self, block_id: int, access: str) -> dict[str, str]:
        """The header a peer's internal endpoint wants for ``access`` to ``block_id``."""
        return await asyncio.get_running_loop().run_in_executor(None, self.block_tokens.headers, block_id, access)

    def _peers(self) -> aiohttp.ClientSession:
        """One HTTP client session per worker for reading from other namenodes."""
        if self._peer_session is None:
            connector = aiohttp.TCPConnector(ssl=self._peer_tls) if self._peer_tls else None
            self._peer_session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None, sock_read=60),
                                                       connector=connector)
        return self._peer_session

    async def _close_peers(self, app: web.Application) -> None:
        if self._peer_session is not None:
            await self._peer_session.close()

    # ------------------------------------------------------------ mutations
    async def mkdirs(self, req: Request) -> Reply:
        await req.run(self.ns.mkdirs, req.caller, req.path, req.params.permission())
        return json_response({"boolean": True})

    async def rename(self, req: Request) -> Reply:
        destination = req.params.text("destination")
        if not destination:
            raise InvalidArgument("Required parameter \"destination\" is missing")
        done = await req.run(self.ns.rename, req.caller, req.path, destination)
        return json_response({"boolean": done})

    async def delete(self, req: Request) -> Reply:
        done = await req.run(self.ns.delete, req.caller, req.path, req.params.boolean("recursive", False),
                             req.params.boolean("skiptrash", True))
        return json_response({"boolean": done})

    async def set_permission(self, req: Request) -> Reply:
        mode = req.params.permission()
        await req.run(self.ns.set_permission, req.caller, req.path, 0o755 if mode is None else mode)
        return Reply(200)

    async def set_owner(self, req: Request) -> Reply:
        await req.run(self.ns.set_owner, req.caller, req.path, req.params.name("owner"), req.params.name("group"))
        return Reply(200)

    async def set_times(self, req: Request) -> Reply:
        await req.run(self.ns.set_times, req.caller, req.path, req.params.integer("modificationtime", -1, minimum=-1),
                      req.params.integer("accesstime", -1, minimum=-1))
        return Reply(200)

    async def set_replication(self, req: Request) -> Reply:
        replication = req.params.integer("replication", None, minimum=1, maximum=MAX_REPLICATION)
        if replication is None:
            raise InvalidArgument("Required parameter \"replication\" is missing")
        return json_response({"boolean": await req.run(self.ns.set_replication, req.caller, req.path, replication)})

    async def expunge(self, req: Request) -> Reply:
        removed = await req.run(self.ns.expunge, req.caller, self.config["trash_interval"])
        return json_response({"removed": removed})

    async def create(self, req: Request) -> Reply:
        if not req.params.boolean("data", False):
            return self._redirect(req)
        params = req.params
        client = (f"webhdfs-{uuid.uuid4().hex}", req.http.remote or "")
        settings = (params.boolean("overwrite", False), params.permission(),
                    params.integer("replication", self.config["replication"], minimum=1, maximum=MAX_REPLICATION),
                    params.integer("blocksize", self.config["block_size"], minimum=512, maximum=MAX_BLOCK_SIZE),
                    client)
        length = req.http.content_length
        if length is not None and length <= self.ns.small_file_limit:
            # A small file announced as such: received whole, then created complete in one
            # transaction (no lease, no second transaction to close it).
            content = await req.http.read()
            await req.run(self.ns.start_file, req.caller, req.path, *settings, content)
        else:
            inode = await req.run(self.ns.start_file, req.caller, req.path, *settings)
            await self._receive(req, inode, client[0], None)
        return Reply(201, headers={"Location": f"hdfs://{self.advertised}{quote(req.path)}"})

    async def append(self, req: Request) -> Reply:
        if not req.params.boolean("data", False):
            return self._redirect(req)
        client = (f"webhdfs-{uuid.uuid4().hex}", req.http.remote or "")
        inode, blocks = await req.run(self.ns.start_append, req.caller, req.path, client)
        await self._receive(req, inode, client[0], blocks)
        return Reply(200)

    async def _receive(self, req: Request, inode, holder: str, blocks) -> None:
        """Stream the request body into blocks, then close the file; on any failure the
        half-written file is removed (or the append rolled back)."""
        pipeline = None
        try:
            peers = self.ns.holders.copy_targets()[:self._wanted(inode) - 1]
            pipeline = WritePipeline(self._peers(), peers, self._grant, self.scheme) if peers else None
            writer = self.ns.writer(inode, blocks, record_events=pipeline is not None)
        except BaseException:
            await asyncio.shield(req.run(self.ns.abandon_file, inode.id, holder))
            raise
        try:
            if pipeline:
                await pipeline.feed(writer.take_events())
            async for chunk in req.http.content.iter_chunked(1 << 20):
                await req.run(writer.write, chunk)   # disk writes and fsyncs off the event loop
                if pipeline:
                    await pipeline.feed(writer.take_events())
            written = await req.run(writer.finish)
            piped, failed = {}, set()
            if pipeline:
                await pipeline.feed(writer.take_events())
                piped, failed = await pipeline.finish()
            if written and not written[0].inline:
                written = await self._replicate(inode, written, piped, failed)
            await req.run(self.ns.complete_file, inode.id, holder, written, writer.replaces_tail)
        except BaseException:
            if pipeline:
                pipeline.abort()
            writer.abort()
            await asyncio.shield(req.run(self.ns.abandon_file, inode.id, holder))
            raise


async def _iterate(chunks):
    """An async view of a blocking iterator of chunks (each step in a worker thread)."""
    loop = asyncio.get_running_loop()
    while True:
        chunk = await loop.run_in_executor(None, next, chunks, b"")
        if not chunk:
            return
        yield chunk

