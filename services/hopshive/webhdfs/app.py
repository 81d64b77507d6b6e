"""WebHDFS v1 handlers: a thin layer that parses parameters, runs the namespace operation
in a worker thread and renders Hadoop's JSON.

CREATE, APPEND and OPEN are two-step as in HDFS: the first request is answered with a 307
redirect to the data URL (this same server, with ``data=true``), which carries the bytes.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import uuid
from dataclasses import dataclass
from typing import Awaitable, Callable
from urllib.parse import quote, unquote_to_bytes, urlencode

import aiohttp
from aiohttp import web

from ..exceptions import AccessDenied, HopsHiveError, InvalidArgument, NamespaceError
from ..namespace.blocks import READ_CHUNK, FileChecksum, segments
from ..namespace.inodes import BLOCK_SIZE_BITS
from ..namespace.namespace import Namespace
from ..namespace.status import FileStatus
from ..namespace.users import Caller
from .errors import BareResponse, json_response, remote_exception
from .params import Params

log = logging.getLogger(__name__)
PREFIX = "/webhdfs/v1"
LIST_BATCH = 1000
MAX_REPLICATION = 512                        # HDFS's dfs.replication.max
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

    def run(self, function, *args, **kwargs):
        """Run a blocking namespace call off the event loop."""
        return asyncio.get_running_loop().run_in_executor(None, functools.partial(function, *args, **kwargs))


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
    def __init__(self, namespace: Namespace, config: dict):
        self.ns = namespace
        self.config = config
        self.advertised = config["advertised_address"]
        self.proxy_users = config.get("proxy_users") or {}
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
        }

    # ------------------------------------------------------------- plumbing
    def application(self) -> web.Application:
        app = web.Application(client_max_size=0)
        app.router.add_get("/health", self.health)
        app.router.add_route("*", PREFIX + "{tail:.*}", self.dispatch)
        app.on_cleanup.append(self._close_peers)
        return app

    async def health(self, request: web.Request) -> web.Response:
        try:
            await asyncio.get_running_loop().run_in_executor(
                None, lambda: self.ns.db.run(lambda tx: tx.query_one("SELECT 1")))
        except Exception as exc:
            return json_response({"status": "unavailable", "reason": type(exc).__name__}, 503)
        return json_response({"status": "ok", "namenode_id": self.ns.liveness.namenode_id})

    def _caller(self, params: Params, peer: str | None) -> Caller:
        user = params.name("user.name") or "dr.who"
        doas = params.name("doas")
        if doas and doas != user:
            rule = self.proxy_users.get(user)
            allowed = rule and _matches(rule.get("users", ""), doas) and _matches(rule.get("hosts", "*"), peer or "")
            if allowed and self.ns.caller(doas).superuser and not self.ns.caller(user).superuser:
                # "*" never covers a superuser: a proxy must be one, or name them one by one.
                allowed = doas in _names(rule.get("users", ""))
            if allowed and rule.get("groups", "*") != "*":
                groups = self.ns.users.groups_of(doas)
                allowed = bool(groups & set(str(rule["groups"]).split(",")))
            if not allowed:
                raise AccessDenied(f"User: {user} is not allowed to impersonate {doas}")
            user = doas
        return self.ns.caller(user)

    async def dispatch(self, http: web.Request) -> web.StreamResponse:
        try:
            path = request_path(http.raw_path)
            params = Params(http.query)
            op = (params.text("op") or "").upper()
            handler = self.ops.get((http.method, op))
            if handler is None:
                if not op:
                    raise InvalidArgument("Required parameter \"op\" is missing")
                raise InvalidArgument(f"Invalid value for webhdfs parameter \"op\": {op} is not a "
                                      f"valid {http.method} operation")
            # Identities are cached (groups re-read every few seconds): no thread hop needed.
            caller = self._caller(params, http.remote)
            return await handler(Request(http, path, params, caller, self))
        except HopsHiveError as exc:
            return remote_exception(exc)
        except UnicodeDecodeError:
            return remote_exception(InvalidArgument("The request path is not valid UTF-8"))
        except (ConnectionResetError, asyncio.CancelledError):
            raise
        except Exception as exc:
            log.exception("request failed", extra={"method": http.method, "target": http.raw_path})
            return remote_exception(exc)

    def _redirect(self, req: Request, to: str | None = None) -> web.Response:
        """307 to the data URL on namenode ``to`` (this one by default)."""
        query = dict(req.http.query)
        query["data"] = "true"
        location = f"http://{to or self.advertised}{PREFIX}{quote(req.path)}?{urlencode(query)}"
        return web.Response(status=307, headers={"Location": location, "Content-Length": "0"})

    # ---------------------------------------------------------------- reads
    async def get_file_status(self, req: Request) -> web.Response:
        status = await req.run(self.ns.get_status, req.caller, req.path)
        return json_response({"FileStatus": file_status_json(status)})

    async def list_status(self, req: Request) -> web.Response:
        statuses = await req.run(self.ns.list_status, req.caller, req.path)
        return json_response({"FileStatuses": {"FileStatus": [file_status_json(s) for s in statuses]}})

    async def list_status_batch(self, req: Request) -> web.Response:
        start = req.params.text("startAfter", "")
        statuses = await req.run(self.ns.list_status, req.caller, req.path, start, LIST_BATCH + 1)
        remaining = 0
        if len(statuses) > LIST_BATCH:
            statuses = statuses[:LIST_BATCH]
            remaining = 1  # Hadoop only tests for > 0
        return json_response({"DirectoryListing": {
            "partialListing": {"FileStatuses": {"FileStatus": [file_status_json(s) for s in statuses]}},
            "remainingEntries": remaining}})

    async def content_summary(self, req: Request) -> web.Response:
        summary = await req.run(self.ns.content_summary, req.caller, req.path)
        return json_response({"ContentSummary": {
            "directoryCount": summary.directory_count, "fileCount": summary.file_count,
            "length": summary.length, "quota": -1, "spaceConsumed": summary.space_consumed,
            "spaceQuota": -1, "typeQuota": {}}})

    async def file_checksum(self, req: Request) -> web.Response:
        inode, blocks = await req.run(self.ns.file_blocks, req.caller, req.path)
        if all(self.ns.blocks.holds(b) for b in blocks):
            algorithm, value = await req.run(self.ns.blocks.checksum, blocks, inode.block_size)
        else:   # some blocks are on other namenodes: their bytes come through their OPEN
            checksum, position = FileChecksum(inode.block_size, len(blocks)), 0
            for block in blocks:
                checksum.start_block()
                async for chunk in self._block_bytes(req, block, 0, block.num_bytes, position):
                    checksum.update(chunk)
                position += block.num_bytes
            algorithm, value = checksum.result()
        return json_response({"FileChecksum": {"algorithm": algorithm, "bytes": value.hex(), "length": len(value)}})

    async def block_locations(self, req: Request) -> web.Response:
        offset = req.params.integer("offset", 0, minimum=0)
        length = req.params.integer("length", None, minimum=0)
        _, blocks = await req.run(self.ns.file_blocks, req.caller, req.path, False)
        end = None if length is None else offset + length
        located, start = [], 0
        for block in blocks:
            if block.num_bytes and start + block.num_bytes > offset and (end is None or start < end):
                holder = self.advertised if block.inline else block.location   # any namenode serves a small file
                host = holder.rsplit(":", 1)[0]
                located.append({"hosts": [host], "names": [holder],
                                "topologyPaths": [f"/default-rack/{holder}"], "offset": start,
                                "length": block.num_bytes, "corrupt": False, "cachedHosts": [],
                                "storageTypes": ["DISK"]})
            start += block.num_bytes
        return json_response({"BlockLocations": {"BlockLocation": located}})

    async def home_directory(self, req: Request) -> web.Response:
        return json_response({"Path": f"/user/{req.caller.name}"})

    async def trash_root(self, req: Request) -> web.Response:
        return json_response({"Path": f"/user/{req.caller.name}/.Trash"})

    async def server_defaults(self, req: Request) -> web.Response:
        return json_response({"FsServerDefaults": {
            "blockSize": self.config["block_size"], "bytesPerChecksum": 512, "writePacketSize": 65536,
            "replication": self.config["replication"], "fileBufferSize": 4096, "encryptDataTransfer": False,
            "trashInterval": self.config["trash_interval"], "checksumType": 2, "keyProviderUri": "",
            "defaultStoragePolicyId": 7}})

    async def open(self, req: Request) -> web.StreamResponse:
        """The redirect goes to a namenode holding the first block read (this one when it
        holds it, or for a small file); the data request streams the blocks it holds from
        disk and the others from their holders' own OPEN, as the same caller."""
        offset = req.params.integer("offset", 0, minimum=0)
        length = req.params.integer("length", None, minimum=0)
        inode, blocks = await req.run(self.ns.file_blocks, req.caller, req.path)
        if offset > inode.size or offset == inode.size > 0:  # as Hadoop's namenode: 403 IOException
            raise NamespaceError(f"Offset={offset} out of the range [0, {inode.size}); OPEN, path={req.path}")
        count = inode.size - offset if length is None else min(length, inode.size - offset)
        parts = list(segments(blocks, offset, count))
        if not req.params.boolean("data", False):
            first = parts[0][0] if parts else None
            return self._redirect(req, None if first is None or self.ns.blocks.holds(first) else first.location)
        response = web.StreamResponse(headers={"Content-Type": "application/octet-stream",
                                               "Content-Length": str(count)})
        await response.prepare(req.http)
        position = offset
        try:
            for block, start, part in parts:
                async for chunk in self._block_bytes(req, block, start, part, position):
                    await response.write(chunk)
                position += part
        except (ConnectionResetError, BrokenPipeError):
            pass  # clients hang up mid-stream on seek
        return response

    async def _block_bytes(self, req: Request, block, start: int, count: int, file_offset: int):
        """``count`` bytes of ``block`` from ``start`` (``file_offset`` in the file): from
        this disk or the database, or through the holder's OPEN."""
        if self.ns.blocks.holds(block):
            for chunk in self.ns.blocks.read_block(block, start, count):
                yield chunk
        else:
            async for chunk in self._remote_read(req, block.location, file_offset, count):
                yield chunk

    async def _remote_read(self, req: Request, holder: str, offset: int, length: int):
        """``length`` bytes of the file from ``offset``, read through the OPEN of the namenode
        ``holder`` as this request's caller (it checks the caller's access again)."""
        query = {"op": "OPEN", "data": "true", "offset": str(offset), "length": str(length),
                 "user.name": req.caller.name}
        url = f"http://{holder}{PREFIX}{quote(req.path)}"
        async with self._peers().get(url, params=query) as reply:
            if reply.status != 200:
                raise NamespaceError(f"block holder {holder} answered {reply.status} for {req.path}: "
                                     f"{(await reply.text())[:200]}")
            async for chunk in reply.content.iter_chunked(READ_CHUNK):
                yield chunk

    def _peers(self) -> aiohttp.ClientSession:
        """One HTTP client session per worker for reading from other namenodes."""
        if self._peer_session is None:
            self._peer_session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None, sock_read=60))
        return self._peer_session

    async def _close_peers(self, app: web.Application) -> None:
        if self._peer_session is not None:
            await self._peer_session.close()

    # ------------------------------------------------------------ mutations
    async def mkdirs(self, req: Request) -> web.Response:
        await req.run(self.ns.mkdirs, req.caller, req.path, req.params.permission())
        return json_response({"boolean": True})

    async def rename(self, req: Request) -> web.Response:
        destination = req.params.text("destination")
        if not destination:
            raise InvalidArgument("Required parameter \"destination\" is missing")
        done = await req.run(self.ns.rename, req.caller, req.path, destination)
        return json_response({"boolean": done})

    async def delete(self, req: Request) -> web.Response:
        done = await req.run(self.ns.delete, req.caller, req.path, req.params.boolean("recursive", False),
                             req.params.boolean("skiptrash", True))
        return json_response({"boolean": done})

    async def set_permission(self, req: Request) -> web.Response:
        mode = req.params.permission()
        await req.run(self.ns.set_permission, req.caller, req.path, 0o755 if mode is None else mode)
        return BareResponse(status=200)

    async def set_owner(self, req: Request) -> web.Response:
        await req.run(self.ns.set_owner, req.caller, req.path, req.params.name("owner"), req.params.name("group"))
        return BareResponse(status=200)

    async def set_times(self, req: Request) -> web.Response:
        await req.run(self.ns.set_times, req.caller, req.path, req.params.integer("modificationtime", -1, minimum=-1),
                      req.params.integer("accesstime", -1, minimum=-1))
        return BareResponse(status=200)

    async def set_replication(self, req: Request) -> web.Response:
        req.params.integer("replication", None, minimum=1, maximum=MAX_REPLICATION)
        await req.run(self.ns.get_status, req.caller, req.path)
        return json_response({"boolean": True})  # one copy per block here; accepted for compatibility

    async def expunge(self, req: Request) -> web.Response:
        removed = await req.run(self.ns.expunge, req.caller, self.config["trash_interval"])
        return json_response({"removed": removed})

    async def create(self, req: Request) -> web.Response:
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
        return BareResponse(status=201, headers={"Location": f"hdfs://{self.advertised}{req.path}"})

    async def append(self, req: Request) -> web.Response:
        if not req.params.boolean("data", False):
            return self._redirect(req)
        client = (f"webhdfs-{uuid.uuid4().hex}", req.http.remote or "")
        inode, blocks = await req.run(self.ns.start_append, req.caller, req.path, client)
        await self._receive(req, inode, client[0], blocks)
        return BareResponse(status=200)

    async def _receive(self, req: Request, inode, holder: str, blocks) -> None:
        """Stream the request body into blocks, then close the file; on any failure the
        half-written file is removed (or the append rolled back)."""
        writer = self.ns.writer(inode, blocks)
        try:
            async for chunk in req.http.content.iter_chunked(1 << 20):
                writer.write(chunk)
            written = writer.finish()
            await req.run(self.ns.complete_file, inode.id, holder, written, writer.replaces_tail)
        except BaseException:
            writer.abort()
            await asyncio.shield(req.run(self.ns.abandon_file, inode.id, holder))
            raise


def _names(rule: str | list) -> list[str]:
    return rule if isinstance(rule, list) else str(rule).split(",")


def _matches(rule: str | list, value: str) -> bool:
    values = _names(rule)
    return "*" in values or value in values
