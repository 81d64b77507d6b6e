"""A small WebHDFS client for the command line tools: plain `requests`, the two-step
CREATE/APPEND/OPEN, and the one place where RemoteException answers become errors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO, Iterable, Iterator
from urllib.parse import quote

import requests

from ..core.tls import VerifyingSession

PREFIX = "/webhdfs/v1"
CHUNK = 1 << 20
TIMEOUT = 300
# RemoteException classes that `hdfs dfs` reports as the errno-style phrase, not the message.
PHRASES = {
    "FileNotFoundException": "No such file or directory",
    "FileAlreadyExistsException": "File exists",
    "PathIsNotEmptyDirectoryException": "Directory is not empty",
    "ParentNotDirectoryException": "Not a directory",
}


class DfsError(Exception):
    """A failure to report as ``<command>: <message>``."""

    def describe(self, path: str | None = None) -> str:
        return str(self)


@dataclass
class RemoteError(DfsError):
    """A RemoteException from the namenode."""

    exception: str
    message: str
    status: int

    def __str__(self) -> str:
        return self.message

    def describe(self, path: str | None = None) -> str:
        phrase = PHRASES.get(self.exception)
        if phrase and path is not None:
            return f"`{path}': {phrase}"
        return self.message or self.exception


def not_found(path: str) -> RemoteError:
    return RemoteError("FileNotFoundException", f"File does not exist: {path}", 404)


def _check(response: requests.Response) -> requests.Response:
    if response.status_code < 300 or response.status_code == 307:
        return response
    try:
        error = response.json()["RemoteException"]
    except (ValueError, KeyError, TypeError):
        raise DfsError(f"HTTP {response.status_code} from {response.url}: {response.text[:200]}") from None
    raise RemoteError(error.get("exception", ""), error.get("message", ""), response.status_code)


def _lost(location: str, exc: Exception) -> DfsError:
    return DfsError(f"lost the connection to {location.split('?')[0]}: {exc.__class__.__name__}")


def _stream(handle: BinaryIO) -> Iterator[bytes]:
    while chunk := handle.read(CHUNK):
        yield chunk


class WebHdfsClient:
    """WebHDFS as ``user``: proven with a delegation ``token`` (its urlString) when given,
    else named with user.name (what a namenode in simple mode believes)."""

    def __init__(self, namenode: str, user: str, token: str | None = None, ca_file: str = ""):
        """``ca_file``: the CA an https namenode (and its redirects) is verified with."""
        self.base = namenode.rstrip("/")
        self.user = user
        self.token = token
        self.http = VerifyingSession(ca_file)

    def _call(self, method: str, path: str, op: str, **params) -> requests.Response:
        query = {"op": op, **({"delegation": self.token} if self.token else {"user.name": self.user})}
        query.update({k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in params.items()
                      if v is not None})
        url = self.base + PREFIX + quote(path, safe="/")
        try:
            return _check(self.http.request(method, url, params=query, allow_redirects=False, timeout=TIMEOUT))
        except requests.RequestException as exc:
            raise DfsError(f"cannot reach the namenode at {self.base}: {exc.__class__.__name__}") from None

    def _json(self, method: str, path: str, op: str, **params) -> dict:
        return self._call(method, path, op, **params).json()

    def _data(self, method: str, location: str, body) -> requests.Response:
        try:
            return _check(self.http.request(method, location, data=body, timeout=TIMEOUT, stream=method == "GET",
                                             headers={"Content-Type": "application/octet-stream"}))
        except requests.RequestException as exc:
            raise _lost(location, exc) from None

    # ---------------------------------------------------------------- reads
    def status(self, path: str) -> dict | None:
        """The FileStatus of ``path``, or None when it does not exist."""
        try:
            return self._json("GET", path, "GETFILESTATUS")["FileStatus"]
        except RemoteError as exc:
            if exc.status == 404:
                return None
            raise

    def list(self, path: str) -> Iterator[dict]:
        """Every entry of a directory (one status for a file), in batches."""
        start = None
        while True:
            listing = self._json("GET", path, "LISTSTATUS_BATCH", startAfter=start)["DirectoryListing"]
            entries = listing["partialListing"]["FileStatuses"]["FileStatus"]
            yield from entries
            if not listing.get("remainingEntries") or not entries:
                return
            start = entries[-1]["pathSuffix"]

    def content_summary(self, path: str) -> dict:
        return self._json("GET", path, "GETCONTENTSUMMARY")["ContentSummary"]

    def home(self) -> str:
        return self._json("GET", "/", "GETHOMEDIRECTORY")["Path"]

    def trash_root(self, path: str) -> str:
        return self._json("GET", path, "GETTRASHROOT")["Path"]

    def read(self, path: str) -> Iterator[bytes]:
        first = self._call("GET", path, "OPEN")
        if first.status_code != 307:  # a server may answer with the data at once
            yield first.content
            return
        location = first.headers["Location"]
        with self._data("GET", location, None) as response:
            try:
                yield from response.iter_content(CHUNK)
            except requests.RequestException as exc:
                raise _lost(location, exc) from None

    def read_range(self, path: str, offset: int, length: int) -> bytes:
        """At most ``length`` bytes of ``path`` from ``offset`` (fewer at its end): one ranged
        OPEN, on the session's kept-alive connections."""
        first = self._call("GET", path, "OPEN", offset=offset, length=length)
        if first.status_code != 307:
            return first.content
        location = first.headers["Location"]
        with self._data("GET", location, None) as response:
            try:
                return response.content
            except requests.RequestException as exc:
                raise _lost(location, exc) from None

    # ------------------------------------------------------------ mutations
    def create(self, path: str, source: BinaryIO, overwrite: bool = False) -> None:
        self.create_from(path, _stream(source), overwrite)

    def create_from(self, path: str, chunks: Iterable[bytes], overwrite: bool = False) -> None:
        """Write ``chunks`` to a new file ``path``, streamed (chunked transfer encoding) as
        they come."""
        location = self._call("PUT", path, "CREATE", overwrite=overwrite).headers["Location"]
        self._data("PUT", location, chunks)

    def mkdirs(self, path: str) -> bool:
        return self._json("PUT", path, "MKDIRS")["boolean"]

    def rename(self, source: str, destination: str) -> bool:
        return self._json("PUT", source, "RENAME", destination=destination)["boolean"]

    def delete(self, path: str, recursive: bool, skip_trash: bool = True) -> bool:
        return self._json("DELETE", path, "DELETE", recursive=recursive, skiptrash=skip_trash)["boolean"]

    def set_permission(self, path: str, mode: int) -> None:
        self._call("PUT", path, "SETPERMISSION", permission=format(mode, "o"))

    def set_owner(self, path: str, owner: str | None, group: str | None) -> None:
        self._call("PUT", path, "SETOWNER", owner=owner or None, group=group or None)

    def fsck(self, path: str) -> dict:
        return self._json("GET", path, "FSCK")["Fsck"]

    def set_replication(self, path: str, replication: int) -> bool:
        return self._json("PUT", path, "SETREPLICATION", replication=replication)["boolean"]

    def expunge(self) -> list[str]:
        return self._json("POST", "/", "EXPUNGE")["removed"]
