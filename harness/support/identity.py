"""Who the harness's own clients are.  In the deployment's default security mode (token) a
client proves its user with a delegation token, and the harness gets one per user the way an
operator does: ``hopshive-dfs --user NAME token``, run as root on the first namenode host
(this machine, or its container).  Project members get theirs from the platform instead
(support/platform.project_token).

Like Hadoop's UserGroupInformation, the tokens are process-wide: ``use(targets)`` once, then
every client of support/ (WebHdfs, metastore.client, hdfs_client, the Spark sessions) asks
``token(user)``.  In simple mode it answers None and clients send the bare user name."""

from __future__ import annotations

import threading
from pathlib import Path

from hopshive.security import TOKEN
from hopshive.security.token_files import credentials_for, write_private
from hopshive.security.tokens import Token

from .services import run_on

DFS = "/opt/hopshive/venv/bin/hopshive-dfs"


class TokenSource:
    """Tokens minted on a namenode host, one per user (each minted once per run)."""

    def __init__(self, targets):
        self.targets = targets
        first = (targets.namenodes[0] if targets.namenodes else targets.authority).rsplit(":", 1)[0]
        self.container = targets.containers.get(first)
        self.minted: dict[str, str] = {}
        self.lock = threading.Lock()

    def url_string(self, user: str, lifetime: float | None = None) -> str:
        """A token of ``user`` (a fresh one, not kept, when ``lifetime`` seconds are asked)."""
        with self.lock:
            if lifetime is None and user in self.minted:
                return self.minted[user]
            extra = ["--lifetime", str(lifetime)] if lifetime is not None else []
            done = run_on(self.container, DFS, "--user", user, "token", *extra)
            if done.returncode != 0:
                raise RuntimeError(f"hopshive-dfs token --user {user} on {self.container or 'this host'} failed: "
                                   f"{done.stderr.strip()}")
            minted = done.stdout.strip()
            if lifetime is None:
                self.minted[user] = minted
            return minted

    def credentials(self, url_string: str) -> bytes:
        """A Hadoop token file of the token, for every namenode and the metastores."""
        targets = self.targets
        return credentials_for(Token.from_url_string(url_string), list(targets.namenodes) or [targets.authority],
                               [targets.nameservice] if targets.nameservice else [])


_source: TokenSource | None = None


def use(targets) -> None:
    """Set the run's identities from the targets' security mode."""
    global _source
    _source = TokenSource(targets) if targets.security_mode == TOKEN else None


def secured() -> bool:
    return _source is not None


def token(user: str | None) -> str | None:
    """``user``'s token urlString; None in simple mode (or for no user)."""
    return _source.url_string(user) if _source is not None and user else None


def short_lived_token(user: str, lifetime: float) -> str:
    """A fresh token of ``user`` that expires after ``lifetime`` seconds (token mode only)."""
    assert _source is not None, "short-lived tokens exist in token mode only"
    return _source.url_string(user, lifetime)


def metastore_token(user: str | None) -> tuple[bytes, bytes] | None:
    """(identifier, password) of ``user``'s token for SASL DIGEST-MD5, or None."""
    url_string = token(user)
    if url_string is None:
        return None
    parsed = Token.from_url_string(url_string)
    return parsed.identifier, parsed.password


def token_file(user: str, path: Path) -> Path | None:
    """Write ``user``'s Hadoop token file at ``path`` (mode 0600); None in simple mode."""
    url_string = token(user)
    if url_string is None:
        return None
    return write_private(path, _source.credentials(url_string))


def fsspec_identity(user: str) -> dict:
    """fsspec WebHDFS's keyword arguments for ``user``: ``token=`` in token mode, else ``user=``."""
    url_string = token(user)
    return {"token": url_string} if url_string else {"user": user}


def hdfs_client(url: str, user: str):
    """HdfsCLI's client for ``user``: its TokenClient in token mode, else InsecureClient."""
    import hdfs
    url_string = token(user)
    return hdfs.TokenClient(url, url_string) if url_string else hdfs.InsecureClient(url, user=user)
