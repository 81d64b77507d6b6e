"""Raw WebHDFS for the contract suite: plain `requests`, nothing of ours in between, so the
same tests can run against a real Hadoop namenode (set HOPSHIVE_WEBHDFS_URL).

``Target`` is what a test runs against: a URL and a superuser name, plus -- only for our
own server -- the process (for fault tests) and the database (for SQL cross-checks).
"""

from __future__ import annotations

import http.client
import re
import socket
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator
from urllib.parse import quote, urlsplit

import requests

from hopshive.core.db import Database
from hopshive.core.tls import VerifyingSession
from tests.support.namenode import NamenodeServer

PREFIX = "/webhdfs/v1"
TEST_ROOT = "/hopshive-tests"
TIMEOUT = 60


def _param(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def assert_no_content_type(response: requests.Response) -> None:
    assert "Content-Type" not in response.headers, \
        f"{response.request.method} {response.url}: JSON answer carries Content-Type " \
        f"{response.headers['Content-Type']!r}"


def remote_exception(response: requests.Response, status: int | set[int],
                     java_classes: str | set[str]) -> str:
    """Assert ``response`` is a WebHDFS RemoteException of one of ``java_classes`` with one
    of the ``status`` codes; returns its message."""
    statuses = {status} if isinstance(status, int) else status
    classes = {java_classes} if isinstance(java_classes, str) else java_classes
    body = response.text
    assert response.status_code in statuses, f"expected HTTP {sorted(statuses)}, got {response.status_code}: {body}"
    assert_no_content_type(response)
    error = response.json()["RemoteException"]
    assert error["javaClassName"] in classes, f"expected one of {sorted(classes)}, got {error}"
    assert error["exception"] == error["javaClassName"].rsplit(".", 1)[1].rsplit("$", 1)[-1], error
    assert error["message"], error
    return error["message"]


class WebHdfs:
    """WebHDFS calls as one user (optionally impersonating another with ``doas``): named with
    ``user.name``, or proven with a delegation ``token`` (its urlString)."""

    def __init__(self, url: str, user: str, doas: str | None = None, token: str | None = None,
                 verify: str | bool = True):
        """``verify``: the CA file an https ``url`` is checked against."""
        self.url, self.user, self.doas, self.token = url, user, doas, token
        self.http = VerifyingSession(verify if isinstance(verify, str) else "")

    def endpoint(self, path: str) -> str:
        return self.url + PREFIX + quote(path, safe="/")

    def call(self, method: str, path: str, op: str, data=None, redirect: bool = False,
             headers: dict | None = None, **params) -> requests.Response:
        auth = {"delegation": self.token} if self.token else {"user.name": self.user}
        query = {"op": op, **auth, **{k: _param(v) for k, v in params.items()}}
        if self.doas:
            query["doas"] = self.doas
        return self.http.request(method, self.endpoint(path), params=query, data=data, headers=headers,
                                 allow_redirects=redirect, timeout=TIMEOUT)

    def json(self, method: str, path: str, op: str, **params) -> dict:
        """A call that must succeed with a JSON answer (and no Content-Type)."""
        response = self.call(method, path, op, **params)
        assert response.status_code == 200, f"{op} {path}: HTTP {response.status_code}: {response.text}"
        assert_no_content_type(response)
        return response.json()

    # --------------------------------------------------------- two-step ops
    def redirected(self, method: str, path: str, op: str, **params) -> str:
        """Step one of CREATE/APPEND/OPEN: must be a bare 307 to an absolute URL."""
        response = self.call(method, path, op, **params)
        assert response.status_code == 307, f"{op} {path}: expected 307, got {response.status_code}: {response.text}"
        location = response.headers["Location"]
        assert urlsplit(location).scheme in ("http", "https") and urlsplit(location).netloc, location
        assert response.headers.get("Content-Length") == "0", dict(response.headers)
        return location

    def send(self, method: str, location: str, data) -> requests.Response:
        return self.http.request(method, location, data=data, timeout=TIMEOUT,
                                 headers={"Content-Type": "application/octet-stream"})

    def create(self, path: str, data: bytes = b"", **params) -> requests.Response:
        """CREATE in two steps; returns the second answer (201 on success)."""
        first = self.call("PUT", path, "CREATE", **params)
        if first.status_code != 307:
            return first
        return self.send("PUT", self.redirected("PUT", path, "CREATE", **params), data)

    def append(self, path: str, data: bytes, **params) -> requests.Response:
        first = self.call("POST", path, "APPEND", **params)
        if first.status_code != 307:
            return first
        return self.send("POST", first.headers["Location"], data)

    def open(self, path: str, **params) -> requests.Response:
        first = self.call("GET", path, "OPEN", **params)
        if first.status_code != 307:
            return first
        return self.http.get(first.headers["Location"], timeout=TIMEOUT)

    # -------------------------------------------------------- conveniences
    def write(self, path: str, data: bytes, **params) -> None:
        response = self.create(path, data, **params)
        assert response.status_code == 201, f"CREATE {path}: {response.status_code} {response.text}"

    def read(self, path: str, **params) -> bytes:
        response = self.open(path, **params)
        assert response.status_code == 200, f"OPEN {path}: {response.status_code} {response.text}"
        return response.content

    def mkdirs(self, path: str, **params) -> None:
        assert self.json("PUT", path, "MKDIRS", **params) == {"boolean": True}

    def status(self, path: str) -> dict:
        return self.json("GET", path, "GETFILESTATUS")["FileStatus"]

    def exists(self, path: str) -> bool:
        response = self.call("GET", path, "GETFILESTATUS")
        if response.status_code == 404:
            return False
        assert response.status_code == 200, response.text
        return True

    def listing(self, path: str) -> dict[str, dict]:
        statuses = self.json("GET", path, "LISTSTATUS")["FileStatuses"]["FileStatus"]
        return {s["pathSuffix"]: s for s in statuses}

    def delete(self, path: str, recursive: bool = True, **params) -> bool:
        return self.json("DELETE", path, "DELETE", recursive=recursive, **params)["boolean"]

    def chmod(self, path: str, permission: str) -> None:
        response = self.call("PUT", path, "SETPERMISSION", permission=permission)
        assert response.status_code == 200, response.text

    def chown(self, path: str, owner: str | None = None, group: str | None = None) -> None:
        params = {k: v for k, v in (("owner", owner), ("group", group)) if v}
        response = self.call("PUT", path, "SETOWNER", **params)
        assert response.status_code == 200, response.text


def in_parallel(target: "Target", user: str, work, items, workers: int = 8) -> list:
    """``work(client, item)`` for every item on ``workers`` threads, one session each."""
    local = threading.local()

    def run(item):
        if not hasattr(local, "client"):
            local.client = target.client(user)
        return work(local.client, item)
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(run, items))


def raw_http(url: str, method: str, target: str, timeout: float = 10) -> http.client.HTTPResponse:
    """Send a request target exactly as given (no normalisation of '.' or '..')."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    connection.putrequest(method, target, skip_accept_encoding=True)
    connection.endheaders()
    return connection.getresponse()


def raw_exchange(url: str, data: bytes, half_close: bool = False, timeout: float = 10) -> bytes:
    """Write ``data`` on a fresh connection and return everything the server sends before it
    closes (b"" when it just hangs up).  With ``half_close`` our side then signals EOF, as
    a client that gives up mid-request does.  The server must close within ``timeout``."""
    parts = urlsplit(url)
    received = b""
    with socket.create_connection((parts.hostname, parts.port), timeout=timeout) as sock:
        try:
            sock.sendall(data)
            if half_close:
                sock.shutdown(socket.SHUT_WR)
            while chunk := sock.recv(65536):
                received += chunk
        except (ConnectionResetError, BrokenPipeError):
            pass
        except socket.timeout:
            raise AssertionError(f"the server neither answered nor closed in {timeout}s; got {received[:200]!r}")
    return received


@dataclass
class Target:
    """The WebHDFS under test.  ``server`` and ``database`` exist only for our own server."""

    url: str
    superuser: str
    server: NamenodeServer | None = None
    database: Database | None = None

    def client(self, user: str, doas: str | None = None) -> WebHdfs:
        return WebHdfs(self.url, user, doas)

    @property
    def admin(self) -> WebHdfs:
        return self.client(self.superuser)

    def ensure_home(self, user: str) -> None:
        """/user/<user>, owned by the user (as a cluster administrator would create it)."""
        home = f"/user/{user}"
        if not self.admin.exists(home):
            self.admin.mkdirs(home, permission="755")
            self.admin.chown(home, user)

    @contextmanager
    def scratch(self, label: str, owner: str) -> Iterator[str]:
        """A fresh directory owned by ``owner`` (755) under TEST_ROOT, removed afterwards
        together with anything the test moved to ``owner``'s trash from it."""
        name = f"{re.sub(r'[^A-Za-z0-9_.-]+', '-', label)[:80]}-{uuid.uuid4().hex[:8]}"
        root = f"{TEST_ROOT}/{name}"
        self.admin.mkdirs(TEST_ROOT, permission="755")
        self.admin.mkdirs(root, permission="755")
        self.admin.chown(root, owner)
        self.ensure_home(owner)
        try:
            yield root
        finally:
            self.admin.delete(root, recursive=True)
            self.admin.delete(f"/user/{owner}/.Trash/Current{root}", recursive=True)
