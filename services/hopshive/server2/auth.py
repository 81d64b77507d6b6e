"""The HopsWorks authenticator (thesis §3.2, Figure 3.1): e-mail and password are checked by
logging in to the platform API; the profile gives the user name, the project list the
databases the user may use.  The session user is ``<database>__<username>``.

A successful login is remembered for ``cache_seconds`` (as Trino's LDAP authenticator's
``cache-ttl``): a client that reconnects with the same e-mail and password within that time
is not sent through the platform's Argon2id check again.  Only successes are remembered,
under an HMAC of the credentials with a key of this process; a blocked account, a changed
password or a changed membership takes effect on new connections within that time.

An engine in a secured deployment carries a delegation token of its project user, which the
platform issues to that user's login (``project_token``): server2 holds no key that could
mint one, so it can act only for users who have just proven themselves."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import requests

from ..core.tls import VerifyingSession
from .exceptions import AuthenticationFailed, Server2Error

API = "/hopsworks-api/api"


@dataclass(frozen=True)
class Identity:
    email: str
    username: str
    projects: frozenset[str]
    # (e-mail, password, client) while the connection that proved them lasts, to ask the
    # platform for tokens; never kept in the login cache.
    credentials: tuple[str, str, str] | None = field(default=None, repr=False, compare=False)

    def session_user(self, database: str) -> str:
        """The project user for ``database``; refused unless the user is a member."""
        if database not in self.projects:
            raise AuthenticationFailed(f"{self.email} is not a member of project {database!r}; "
                                       f"connect to one of your projects' databases")
        return f"{database}__{self.username}"


class PlatformAuthenticator:
    MAX_REMEMBERED = 10_000

    def __init__(self, url: str, timeout: float = 15.0, cache_seconds: float = 0.0, ca_file: str = ""):
        self.url = url.rstrip("/")
        self.ca_file = ca_file      # an https platform_url is checked against the deployment's CA
        self.timeout = timeout
        self.cache_seconds = cache_seconds
        self._key = secrets.token_bytes(32)
        self._remembered: dict[bytes, tuple[float, Identity]] = {}
        self._lock = threading.Lock()

    def authenticate(self, email: str | None, password: str | None, client: str = "") -> Identity:
        """``client``: the JDBC client's address, forwarded so the platform limits failed
        logins per client rather than per server2 host."""
        if not email or not password:
            raise AuthenticationFailed("an e-mail address and a password are required")
        key = hmac.new(self._key, f"{email}\0{password}".encode(), hashlib.sha256).digest()
        now = time.monotonic()
        with self._lock:
            until, identity = self._remembered.get(key, (0.0, None))
        if identity is None or now >= until:
            identity = self._login(email, password, client)
            if self.cache_seconds > 0:
                with self._lock:
                    if len(self._remembered) >= self.MAX_REMEMBERED:
                        self._remembered = {k: v for k, v in self._remembered.items() if v[0] > now}
                    if len(self._remembered) < self.MAX_REMEMBERED:
                        self._remembered[key] = (now + self.cache_seconds, identity)
        return replace(identity, credentials=(email, password, client))

    def project_token(self, identity: Identity, project: str) -> tuple[str, int]:
        """A delegation token of ``identity``'s user in ``project`` (its urlString and expiry
        in ms), issued by the platform to a fresh login with the connection's credentials."""
        if identity.credentials is None:
            raise AuthenticationFailed("this connection's login cannot be used to get a token; reconnect")
        with self._session(*identity.credentials) as http:
            response = http.post(f"{self.url}{API}/project/{project}/token", timeout=self.timeout)
        if response.status_code != 200:
            raise AuthenticationFailed(self._message(response))
        body = response.json()
        return body["urlString"], int(body["expiresAt"])

    def _login(self, email: str, password: str, client: str) -> Identity:
        with self._session(email, password, client) as http:
            profile = http.get(f"{self.url}{API}/users/profile", timeout=self.timeout)
            projects = http.get(f"{self.url}{API}/project", timeout=self.timeout)
        if profile.status_code != 200 or projects.status_code != 200:
            raise AuthenticationFailed(self._message(profile if profile.status_code != 200 else projects))
        body = profile.json()
        return Identity(body["email"], body["username"], frozenset(p["name"] for p in projects.json()))

    @contextmanager
    def _session(self, email: str, password: str, client: str):
        """A logged-in platform session for the block, logged out after it."""
        with VerifyingSession(self.ca_file) as http:
            if client:
                http.headers["X-Forwarded-For"] = client
            try:
                login = http.post(f"{self.url}{API}/auth/login", data={"email": email, "password": password},
                                  timeout=self.timeout)
                if login.status_code != 200:
                    raise AuthenticationFailed(self._message(login))
                try:
                    yield http
                finally:
                    http.post(f"{self.url}{API}/auth/logout", timeout=self.timeout)
            except requests.RequestException as exc:
                raise Server2Error(f"the platform API at {self.url} cannot be reached: {exc}", "08001") from exc

    @staticmethod
    def _message(response: requests.Response) -> str:
        try:
            return str(response.json()["errorMsg"])
        except (ValueError, KeyError, TypeError):
            return f"the platform refused the login (HTTP {response.status_code})"
