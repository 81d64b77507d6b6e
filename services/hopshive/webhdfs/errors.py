"""Complete WebHDFS answers (Reply) and the one place where domain errors become
RemoteException answers."""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson
from aiohttp import hdrs, web

from .. import exceptions as e

# exception -> (HTTP status, Java class name Hadoop's client re-creates)
REMOTE_EXCEPTIONS: dict[type, tuple[int, str]] = {
    e.FileNotFound: (404, "java.io.FileNotFoundException"),
    e.FileAlreadyExists: (403, "org.apache.hadoop.fs.FileAlreadyExistsException"),
    e.ParentNotDirectory: (403, "org.apache.hadoop.fs.ParentNotDirectoryException"),
    e.PathIsNotEmptyDirectory: (403, "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException"),
    e.AccessDenied: (403, "org.apache.hadoop.security.AccessControlException"),
    e.InvalidToken: (403, "org.apache.hadoop.security.token.SecretManager$InvalidToken"),
    e.AuthenticationError: (401, "java.lang.SecurityException"),
    e.InvalidPath: (400, "org.apache.hadoop.fs.InvalidPathException"),
    e.InvalidArgument: (400, "java.lang.IllegalArgumentException"),
    e.SubtreeLocked: (403, "io.hops.exception.SubtreeLockedException"),
    e.AlreadyBeingCreated: (403, "org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException"),
    e.FileUnderConstruction: (403, "java.io.IOException"),
    e.CorruptReplica: (409, "org.apache.hadoop.fs.ChecksumException"),
    e.BlocksUnavailable: (403, "org.apache.hadoop.hdfs.BlockMissingException"),
    e.NamespaceError: (403, "java.io.IOException"),
}
INTERNAL = (500, "java.io.IOException")


class BareResponse(web.Response):
    """A response without Content-Type: the Jersey-less client shaded into Spark fails with
    ClassNotFoundException when a JSON answer names its media type.  aiohttp always adds
    one, so it is removed as the headers are written."""

    async def _write_headers(self) -> None:
        self._headers.pop(hdrs.CONTENT_TYPE, None)
        await super()._write_headers()


@dataclass
class Reply:
    """A whole answer: status, body and extra headers (never a Content-Type, see
    BareResponse).  Either HTTP layer sends it: the front (hopshive.webhdfs.front) writes it
    out itself, aiohttp through ``aiohttp()``."""

    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)

    def aiohttp(self) -> web.Response:
        return BareResponse(status=self.status, body=self.body, headers=self.headers)


def json_response(payload: object, status: int = 200) -> Reply:
    return Reply(status, orjson.dumps(payload))


def remote_exception(exc: BaseException) -> Reply:
    status, java_class = next((v for k, v in REMOTE_EXCEPTIONS.items() if isinstance(exc, k)), INTERNAL)
    message = str(exc) if status != 500 else f"Internal error: {type(exc).__name__}; see the namenode log"
    return json_response({"RemoteException": {"exception": java_class.rsplit(".", 1)[1].rsplit("$", 1)[-1],
                                              "javaClassName": java_class, "message": message}}, status)
