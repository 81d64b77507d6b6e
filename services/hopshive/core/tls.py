"""TLS for the services and their clients, in one place: which protocol versions a server
accepts (TLS 1.2 and later) and how a client checks a server (against the CA file the
deployment hands out, else the system's trust store; never unverified).

Every service reads the same keys in its own section: ``tls_cert_file`` and
``tls_key_file`` (PEM; both empty: plain TCP) and, where it calls other services,
``tls_ca_file`` (PEM; empty: the system's trust store).  A setting that cannot be used is a
ConfigError at start, not a failure at the first client.
"""

from __future__ import annotations

import os
import socket
import ssl
from typing import Mapping

import requests

from .config import ConfigError

MINIMUM_VERSION = ssl.TLSVersion.TLSv1_2
# Where the deployment puts its CA's certificate on every host (roles/configure, roles/spark).
DEPLOYED_CA_FILE = "/etc/hopshive/tls/ca.pem"


def server_context(section: Mapping, where: str) -> ssl.SSLContext | None:
    """The server's TLS context from ``section``'s tls_cert_file / tls_key_file (None when
    both are empty); ``where`` names the section in the error."""
    cert, key = section.get("tls_cert_file") or "", section.get("tls_key_file") or ""
    if not cert and not key:
        return None
    if not cert or not key:
        raise ConfigError(f"{where}.tls_cert_file and {where}.tls_key_file must be set together")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = MINIMUM_VERSION
    _load_pair(context, cert, key, where)
    return context


def reload_server_context(context: ssl.SSLContext | None, section: Mapping, where: str) -> None:
    """Load ``section``'s certificate and key again into the context the server serves with
    (a renewed certificate): connections made afterwards get it, open ones keep theirs.

    Raises:
        ConfigError: the files cannot be used, or the setting turns TLS on or off (only a
            restart can: the listening socket would change protocol); the context is unchanged.
    """
    cert, key = section.get("tls_cert_file") or "", section.get("tls_key_file") or ""
    if (context is None) != (not cert and not key):
        raise ConfigError(f"{where}: turning TLS on or off needs a restart, not a reload")
    if context is not None:
        if not cert or not key:
            raise ConfigError(f"{where}.tls_cert_file and {where}.tls_key_file must be set together")
        # Tried on a scratch context first: a key that does not match the certificate fails
        # after OpenSSL has already taken the certificate, which would leave a broken pair.
        _load_pair(ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER), cert, key, where)
        _load_pair(context, cert, key, where)


def _load_pair(context: ssl.SSLContext, cert: str, key: str, where: str) -> None:
    try:
        context.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"{where}.tls_cert_file/tls_key_file cannot be used: {exc}") from exc


def client_context(ca_file: str = "") -> ssl.SSLContext:
    """A client context that verifies the server's certificate and name against ``ca_file``
    (empty: the system's trust store)."""
    try:
        context = ssl.create_default_context(cafile=ca_file or None)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"tls_ca_file {ca_file} cannot be used: {exc}") from exc
    context.minimum_version = MINIMUM_VERSION
    return context


def default_ca_file(environ: Mapping[str, str]) -> str:
    """The CA a command-line client verifies with when not told: $HOPSHIVE_CA_FILE, else the
    deployment's CA file when this host has one, else "" (the system's trust store)."""
    if environ.get("HOPSHIVE_CA_FILE"):
        return environ["HOPSHIVE_CA_FILE"]
    return DEPLOYED_CA_FILE if os.path.exists(DEPLOYED_CA_FILE) else ""


def verify(ca_file: str = "") -> str | bool:
    """What ``requests`` takes as ``verify=``: the CA file, else its default trust store."""
    return ca_file or True


class VerifyingSession(requests.Session):
    """A requests Session that checks servers with ``ca_file`` even where $REQUESTS_CA_BUNDLE
    or $CURL_CA_BUNDLE is set: plain requests lets those variables replace a Session's
    ``verify`` on every call that does not pass its own.  Without ``ca_file`` those variables
    apply, as for any requests client."""

    def __init__(self, ca_file: str = ""):
        super().__init__()
        self.verify = verify(ca_file)

    def merge_environment_settings(self, url, proxies, stream, verify, cert):  # noqa: A002 -- requests' names
        settings = super().merge_environment_settings(url, proxies, stream, verify, cert)
        if verify is None and self.verify is not True:
            settings["verify"] = self.verify
        return settings


def http_scheme(section: Mapping) -> str:
    """``https`` when ``section`` serves TLS (its tls_cert_file is set), else ``http``."""
    return "https" if section.get("tls_cert_file") else "http"


class Replayed:
    """A connection whose first bytes were read to tell protocols apart (a TLS socket cannot
    peek): they are read again first, and MSG_PEEK peeks at them; everything else is the
    socket's.  ``pending()`` counts them with what TLS has decrypted but not handed out, which
    select() on the socket cannot see."""

    def __init__(self, sock, head: bytes):
        self._sock, self._head = sock, head

    def recv(self, size: int, flags: int = 0) -> bytes:
        if flags & socket.MSG_PEEK:
            return self._head[:size]
        if self._head:
            data, self._head = self._head[:size], self._head[size:]
            return data
        return self._sock.recv(size)

    def pending(self) -> int:
        inner = getattr(self._sock, "pending", None)
        return len(self._head) + (inner() if inner else 0)

    def __getattr__(self, name: str):
        return getattr(self._sock, name)
