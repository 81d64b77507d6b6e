"""Block access tokens: how a namenode proves to a peer's internal block endpoint that it
is a namenode (HDFS's BlockTokenSecretManager does the same for datanodes).

Without them, anything that reaches a namenode's port could read any block by its
(sequential) id, or overwrite a replica, past every permission of the namespace.  A token
names one block, one access (read or write) and an expiry, and carries an HMAC-SHA256 by a
master key of the shared secret manager, which only the services holding the database's
credentials can read.  The message is prefixed so a block token can never pass as a
delegation token's password or the other way round.
"""

from __future__ import annotations

import hashlib
import hmac
import threading
import time

from ..exceptions import InvalidToken
from .secrets import SecretManager

READ, WRITE = "read", "write"
HEADER = "X-HopsHive-Block-Token"
LIFETIME = 600.0         # seconds: a replica copy or a pipeline write starts well within it
KEY_REFRESH = 60.0       # seconds a signing key is reused before the newest is asked for again
_DOMAIN = b"hopshive-block-access\0"


class BlockTokens:
    def __init__(self, secrets: SecretManager, lifetime: float = LIFETIME):
        self.secrets, self.lifetime = secrets, lifetime
        self._key: tuple[float, int, bytes] | None = None     # (fetched, key id, secret)
        self._lock = threading.Lock()

    def headers(self, block_id: int, access: str) -> dict[str, str]:
        """The request header that grants ``access`` to ``block_id`` for ``lifetime``."""
        key_id, secret = self._signing_key()
        expiry = int((time.time() + self.lifetime) * 1000)
        return {HEADER: f"{key_id}.{expiry}.{_sign(secret, block_id, access, expiry)}"}

    def check(self, text: str | None, block_id: int, access: str) -> None:
        """InvalidToken unless ``text`` grants ``access`` to ``block_id`` now."""
        if not text:
            raise InvalidToken(f"{access} of block {block_id} needs a block access token ({HEADER})")
        try:
            key_id, expiry, signature = text.split(".")
            key_id_number, expiry_ms = int(key_id), int(expiry)
        except ValueError:
            raise InvalidToken(f"malformed block access token for block {block_id}") from None
        secret = self.secrets.secret(key_id_number)
        if secret is None or not hmac.compare_digest(_sign(secret, block_id, access, expiry_ms), signature):
            raise InvalidToken(f"block access token does not grant {access} of block {block_id}")
        if expiry_ms < time.time() * 1000:
            raise InvalidToken(f"block access token for block {block_id} is expired")

    def _signing_key(self) -> tuple[int, bytes]:
        with self._lock:
            if self._key is None or time.monotonic() - self._key[0] > KEY_REFRESH:
                self._key = (time.monotonic(), *self.secrets.signing_key())
            return self._key[1], self._key[2]


def _sign(secret: bytes, block_id: int, access: str, expiry_ms: int) -> str:
    message = _DOMAIN + f"{block_id}|{access}|{expiry_ms}".encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()
