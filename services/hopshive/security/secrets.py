"""The delegation-token secret manager, shared by every namenode and metastore.

Master keys and live tokens are rows of the `hops` schema, so a token issued through one
node verifies on any other (Galera replicates them).  A new master key is made once the
newest is ``key_update_interval`` old; a key stays until the last token it could have signed
has died (``max_lifetime`` later).  A token lives ``renew_interval`` from its issue or last
renewal, never past its ``max_date``, and a cancelled one is gone.

Verification is an HMAC over the identifier with a cached key, plus a look-up of the
token's row that is cached for ``cache_seconds``: a token cancelled through another node
may still pass here for that long (on this node, cancelling evicts it at once).  A token
the cached row says has expired is looked up again before it is refused, once per row read
(it may have been renewed through another node since).  Both caches are bounded LRUs.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from ..core.db import Database, Tx
from ..exceptions import AccessDenied, InvalidToken
from .tokens import MalformedToken, Token, TokenIdentifier

DAY = 86_400
VERIFIED_LIMIT = 10_000     # url strings believed without decoding (each a few hundred bytes)
ROWS_LIMIT = 100_000        # cached token rows (sequence -> expiry)


@dataclass(frozen=True)
class TokenPolicy:
    """How long keys and tokens live, in seconds (Hadoop's defaults)."""

    renew_interval: float = DAY
    max_lifetime: float = 7 * DAY
    key_update_interval: float = DAY
    cache_seconds: float = 5.0

    @classmethod
    def from_config(cls, section: dict | None) -> "TokenPolicy":
        section = section or {}
        return cls(**{name: float(section[name]) for name in cls.__dataclass_fields__ if name in section})


def _now_ms() -> int:
    return int(time.time() * 1000)


def _sign(secret: bytes, identifier: bytes) -> bytes:
    return hmac.new(secret, identifier, hashlib.sha1).digest()


class SecretManager:
    def __init__(self, db: Database, policy: TokenPolicy | None = None):
        self.db = db
        self.policy = policy or TokenPolicy()
        self._keys: dict[int, bytes] = {}        # keys never change: cached for good
        # sequence -> (checked: monotonic, expires or None when gone, read at: ms)
        self._rows: OrderedDict[int, tuple[float, int | None, int]] = OrderedDict()
        # url string -> (identifier, checked, expires): a verified token, believed again without
        # decoding or signing for as long as its row is (cache_seconds from the row's read)
        # and never past its expiry; evicted when this manager renews or cancels it.  Once
        # that window has passed only its row is read again: its signature stays checked.
        self._verified: OrderedDict[str, tuple[TokenIdentifier, float, int]] = OrderedDict()
        self._lock = threading.Lock()

    # ----------------------------------------------------------------- issue
    def issue(self, owner: str, renewer: str = "", real_user: str = "", lifetime: float | None = None) -> Token:
        """A new token for ``owner``, renewable by ``renewer`` (none when empty).  With
        ``lifetime`` (seconds, at most ``max_lifetime``) it dies for good that soon: what
        a service mints for its own short-lived use."""
        if not owner:
            raise InvalidToken("a token needs an owner")
        if lifetime is not None and not 0 < lifetime <= self.policy.max_lifetime:
            raise ValueError(f"a token's lifetime must be more than 0 and at most max_lifetime "
                             f"({self.policy.max_lifetime:g} s), not {lifetime:g} s")
        now = _now_ms()
        max_date = now + int((self.policy.max_lifetime if lifetime is None else lifetime) * 1000)
        expires = min(max_date, now + int(self.policy.renew_interval * 1000))

        def work(tx: Tx) -> Token:
            key_id, secret = self._current_key(tx, now)
            tx.execute("INSERT INTO hops.hdfs_delegation_tokens (owner, renewer, real_user, issue_date, max_date,"
                       " expires, master_key_id) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                       (owner, renewer, real_user, now, max_date, expires, key_id))
            identifier = TokenIdentifier(owner, renewer, real_user, now, max_date, tx.lastrowid, key_id).to_bytes()
            return Token(identifier, _sign(secret, identifier))

        token = self.db.run(work)
        self._purge_now_and_then(now)
        return token

    def expiry_of(self, token: Token) -> int:
        """When a freshly issued (or just renewed) token expires unless renewed, in ms."""
        identifier = token.decoded()
        return min(identifier.max_date, identifier.issue_date + int(self.policy.renew_interval * 1000))

    def _current_key(self, tx: Tx, now: int) -> tuple[int, bytes]:
        since = now - int(self.policy.key_update_interval * 1000)
        row = tx.query_one("SELECT key_id, secret FROM hops.hdfs_master_keys WHERE created > %s"
                           " ORDER BY created DESC LIMIT 1", (since,))
        if row is None:   # the newest key is due to roll (or there is none yet)
            expires = now + int((self.policy.key_update_interval + self.policy.max_lifetime) * 1000)
            secret = os.urandom(64)
            tx.execute("INSERT INTO hops.hdfs_master_keys (secret, created, expires) VALUES (%s, %s, %s)",
                       (secret, now, expires))
            row = (tx.lastrowid, secret)
        self._keys[row[0]] = bytes(row[1])
        return row[0], bytes(row[1])

    # ---------------------------------------------------------------- verify
    def verify(self, token: Token) -> TokenIdentifier:
        """The identifier of a valid token; InvalidToken otherwise."""
        identifier = self._decode(token.identifier)
        if not hmac.compare_digest(self._password(identifier, token.identifier), token.password):
            raise InvalidToken(f"token ({self._describe(identifier)}) is invalid: its password does not match")
        self._check_alive(identifier)
        return identifier

    def verify_url_string(self, text: str) -> TokenIdentifier:
        """``verify`` of a token's URL string (WebHDFS's ``delegation=``).  A string verified
        less than ``cache_seconds`` ago is believed without decoding or signing it again:
        no staler than the row cache ``verify`` uses anyway, and never past the expiry.
        After that only its row is looked up again."""
        hit = self._verified.get(text)
        if hit is None:
            try:
                identifier = self.verify(Token.from_url_string(text))
            except MalformedToken as exc:
                raise InvalidToken(str(exc)) from exc
        else:
            identifier, checked, expires = hit
            if time.monotonic() - checked < self.policy.cache_seconds and _now_ms() <= expires:
                _touch(self._verified, text)
                return identifier
            try:
                self._check_alive(identifier)
            except InvalidToken:
                self._verified.pop(text, None)
                raise
        row = self._rows.get(identifier.sequence_number)
        if row is not None and row[1] is not None:
            with self._lock:
                _put(self._verified, text, (identifier, row[0], min(row[1], identifier.max_date)), VERIFIED_LIMIT)
        return identifier

    def password_for(self, identifier_bytes: bytes) -> tuple[TokenIdentifier, bytes]:
        """For SASL DIGEST-MD5, where the client proves it knows the password: the live
        token's identifier and the password it must know."""
        identifier = self._decode(identifier_bytes)
        password = self._password(identifier, identifier_bytes)
        self._check_alive(identifier)
        return identifier, password

    def _decode(self, raw: bytes) -> TokenIdentifier:
        try:
            return TokenIdentifier.from_bytes(raw)
        except MalformedToken as exc:
            raise InvalidToken(str(exc)) from exc

    def _password(self, identifier: TokenIdentifier, raw: bytes) -> bytes:
        secret = self.secret(identifier.master_key_id)
        if secret is None:
            raise InvalidToken(f"token ({self._describe(identifier)}) is invalid: unknown master key")
        return _sign(secret, raw)

    # ------------------------------------------------- keys for other signers
    def signing_key(self) -> tuple[int, bytes]:
        """The newest master key (made when due): (key id, secret), for the other HMACs the
        services sign with the shared keys (hopshive.security.block_tokens)."""
        return self.db.run(lambda tx: self._current_key(tx, _now_ms()))

    def secret(self, key_id: int) -> bytes | None:
        """The master key ``key_id``, or None when there is no such key (any more)."""
        secret = self._keys.get(key_id)
        if secret is None:
            row = self.db.run(lambda tx: tx.query_one(
                "SELECT secret FROM hops.hdfs_master_keys WHERE key_id=%s", (key_id,)), readonly=True)
            if row is None:
                return None
            secret = self._keys.setdefault(key_id, bytes(row[0]))
        return secret

    def _check_alive(self, identifier: TokenIdentifier) -> None:
        now = _now_ms()
        if identifier.max_date < now:
            raise InvalidToken(f"token ({self._describe(identifier)}) is expired: its max lifetime has passed")
        expires, read_at = self._expiry(identifier.sequence_number)
        if expires is not None and expires < now and read_at <= expires:
            # The cached row was read while the token lived: it may have been renewed since
            # (through another node).  Asked once per row read, so refusing costs no more.
            expires, read_at = self._expiry(identifier.sequence_number, fresh=True)
        if expires is None:
            raise InvalidToken(f"token ({self._describe(identifier)}) can't be found: it was cancelled or has"
                               " expired")
        if expires < now:
            raise InvalidToken(f"token ({self._describe(identifier)}) is expired: renew it or get a new one")

    def _expiry(self, sequence: int, fresh: bool = False) -> tuple[int | None, int]:
        """(the token's expiry, None when its row is gone; when that was read, in ms)."""
        cached = self._rows.get(sequence)
        clock = time.monotonic()
        if cached and not fresh and clock - cached[0] < self.policy.cache_seconds:
            _touch(self._rows, sequence)
            return cached[1], cached[2]
        read_at = _now_ms()
        row = self.db.run(lambda tx: tx.query_one(
            "SELECT expires FROM hops.hdfs_delegation_tokens WHERE sequence_number=%s", (sequence,)), readonly=True)
        expires = row[0] if row else None
        with self._lock:
            _put(self._rows, sequence, (clock, expires, read_at), ROWS_LIMIT)
        return expires, read_at

    @staticmethod
    def _describe(identifier: TokenIdentifier) -> str:
        return f"owner={identifier.owner}, sequenceNumber={identifier.sequence_number}"

    # ------------------------------------------------------- renew, cancel
    def renew(self, token: Token, renewer: str) -> int:
        """Extend a token's life by ``renew_interval`` (not past its max date); the new
        expiry in ms.  Only the renewer named in the token may."""
        identifier = self.verify(token)
        if not identifier.renewer:
            raise AccessDenied(f"token ({self._describe(identifier)}) has no renewer: it cannot be renewed")
        if identifier.renewer != renewer:
            raise AccessDenied(f"{renewer} tries to renew a token ({self._describe(identifier)}) with renewer "
                               f"{identifier.renewer}")
        expires = min(identifier.max_date, _now_ms() + int(self.policy.renew_interval * 1000))
        self.db.run(lambda tx: tx.execute("UPDATE hops.hdfs_delegation_tokens SET expires=%s"
                                          " WHERE sequence_number=%s", (expires, identifier.sequence_number)))
        self._forget(identifier.sequence_number)
        return expires

    def cancel(self, token: Token, canceller: str) -> TokenIdentifier:
        """Cancel a token: its owner or renewer may."""
        identifier = self._decode(token.identifier)
        if not hmac.compare_digest(self._password(identifier, token.identifier), token.password):
            raise InvalidToken(f"token ({self._describe(identifier)}) is invalid: its password does not match")
        if canceller not in (identifier.owner, identifier.renewer):
            raise AccessDenied(f"{canceller} is not authorized to cancel the token ({self._describe(identifier)})")
        gone = self.db.run(lambda tx: tx.execute("DELETE FROM hops.hdfs_delegation_tokens WHERE sequence_number=%s",
                                                 (identifier.sequence_number,)))
        self._forget(identifier.sequence_number)
        if not gone:
            raise InvalidToken(f"token ({self._describe(identifier)}) can't be found: it was cancelled already")
        return identifier

    def _forget(self, sequence: int) -> None:
        with self._lock:
            self._rows.pop(sequence, None)
            for text, hit in list(self._verified.items()):
                if hit[0].sequence_number == sequence:
                    self._verified.pop(text, None)

    # ----------------------------------------------------------------- purge
    def purge(self, now: int | None = None) -> tuple[int, int]:
        """Delete expired tokens and keys no live token can use; (tokens, keys) removed."""
        now = _now_ms() if now is None else now

        def work(tx: Tx) -> tuple[int, int]:
            tokens = tx.execute("DELETE FROM hops.hdfs_delegation_tokens WHERE expires < %s", (now,))
            keys = tx.execute("DELETE FROM hops.hdfs_master_keys WHERE expires < %s", (now,))
            return tokens, keys

        return self.db.run(work)

    def _purge_now_and_then(self, now: int) -> None:
        if now % 64 == 0:   # about one issue in 64: cheap, and nothing depends on promptness
            self.purge(now)


def _put(cache: OrderedDict, key, value, limit: int) -> None:
    """Insert as the most recently used entry, dropping the least recently used beyond
    ``limit`` (the caller holds the manager's lock)."""
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > limit:
        cache.popitem(last=False)


def _touch(cache: OrderedDict, key) -> None:
    """Mark an entry used (it may just have been dropped by another thread)."""
    try:
        cache.move_to_end(key)
    except KeyError:
        pass
