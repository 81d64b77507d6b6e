"""A minimal WebHDFS client for set-up, clean-up and listings (the scenarios themselves use
real clients: Spark, HdfsCLI, fsspec).  Plain WebHDFS v1 only, so the harness could point at
a real Hadoop namenode unchanged.  The user is proven by its token (support/identity) where
the deployment wants one, else named (user.name)."""

from __future__ import annotations

from typing import Iterator
from urllib.parse import quote

import requests

from hopshive.core.tls import VerifyingSession

from . import identity, trust

PREFIX = "/webhdfs/v1"


def health(base_url: str) -> dict | None:
    """What the namenode at ``base_url`` (scheme://host:port) answers GET /health with, when
    it answers 200; else None.  A service manager says "running" as soon as it has started
    the process, before it serves."""
    try:
        answer = VerifyingSession(trust.ca_file() or "").get(f"{base_url}/health", timeout=5)
    except requests.RequestException:
        return None
    return answer.json() if answer.status_code == 200 else None


def healthy(base_url: str) -> bool:
    return health(base_url) is not None


class WebHdfsError(RuntimeError):
    def __init__(self, status: int, body: str, what: str):
        super().__init__(f"{what}: HTTP {status}: {body[:500]}")
        self.status = status


class WebHdfs:
    def __init__(self, url: str, user: str, timeout: float = 30.0):
        self.url, self.user, self.timeout = url.rstrip("/"), user, timeout
        token = identity.token(user)
        self.auth = {"delegation": token} if token else {"user.name": user}
        self.session = VerifyingSession(trust.ca_file() or "")

    def _call(self, method: str, path: str, op: str, ok=(200,), **params):
        params = {"op": op, **self.auth, **{k: str(v).lower() if isinstance(v, bool) else v
                                             for k, v in params.items()}}
        response = self.session.request(method, self.url + PREFIX + quote(path), params=params,
                                        timeout=self.timeout, allow_redirects=False)
        if response.status_code not in ok:
            raise WebHdfsError(response.status_code, response.text, f"{method} {op} {path}")
        return response

    def status(self, path: str) -> dict | None:
        response = self._call("GET", path, "GETFILESTATUS", ok=(200, 404))
        return response.json()["FileStatus"] if response.status_code == 200 else None

    def list(self, path: str) -> list[dict]:
        return self._call("GET", path, "LISTSTATUS").json()["FileStatuses"]["FileStatus"]

    def mkdirs(self, path: str, permission: str | None = None) -> bool:
        extra = {"permission": permission} if permission else {}
        return self._call("PUT", path, "MKDIRS", **extra).json()["boolean"]

    def write(self, path: str, data: bytes) -> None:
        """CREATE (overwriting), both steps: the namenode's redirect, then the data."""
        location = self._call("PUT", path, "CREATE", ok=(307,), overwrite=True).headers["Location"]
        response = self.session.put(location, data=data, timeout=self.timeout)
        if response.status_code != 201:
            raise WebHdfsError(response.status_code, response.text, f"PUT CREATE {path} (data)")

    def chown(self, path: str, owner: str) -> None:
        self._call("PUT", path, "SETOWNER", owner=owner)

    def chmod(self, path: str, permission: str) -> None:
        self._call("PUT", path, "SETPERMISSION", permission=permission)

    def delete(self, path: str, recursive: bool = True, skiptrash: bool | None = None) -> bool:
        """DELETE; ``skiptrash=False`` moves the entry to the caller's trash instead (the
        Hadoop 3.4 parameter; left out unless given)."""
        extra = {} if skiptrash is None else {"skiptrash": skiptrash}
        return self._call("DELETE", path, "DELETE", recursive=recursive, **extra).json()["boolean"]

    def rename(self, source: str, destination: str) -> bool:
        return self._call("PUT", source, "RENAME", destination=destination).json()["boolean"]

    def block_locations(self, path: str) -> list[dict]:
        body = self._call("GET", path, "GETFILEBLOCKLOCATIONS").json()
        return body["BlockLocations"]["BlockLocation"]

    def walk(self, path: str) -> Iterator[tuple[str, dict]]:
        """(relative path, FileStatus) of everything below ``path``, by LISTSTATUS recursion."""
        pending = [""]
        while pending:
            relative = pending.pop()
            for entry in self.list(path + relative):
                child = f"{relative}/{entry['pathSuffix']}"
                yield child, entry
                if entry["type"] == "DIRECTORY":
                    pending.append(child)

    def close(self) -> None:
        self.session.close()
