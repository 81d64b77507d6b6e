"""Delegation tokens in Hadoop's formats.

A token is an identifier (who owns it, who may renew it, when it was issued and when it
dies for good, its sequence number and the id of the master key that signed it), the
HMAC-SHA1 of that identifier under the master key (the "password"), a kind and a service.
Clients carry it as Hadoop does: the URL-safe base64 of the Writable Token
(``urlString``, WebHDFS's ``delegation=`` parameter, Hive's token strings) or in a
credentials file (``HADOOP_TOKEN_FILE_LOCATION``).  The same identifier and password serve
every kind: a WebHDFS token for each namenode address and a Hive token for the metastores
are the one secret under different labels.
"""

from __future__ import annotations

import base64
import binascii
import io
from dataclasses import dataclass, replace

from .writable import WritableError, read_bytes, read_text, read_vlong, write_bytes, write_text, write_vlong

IDENTIFIER_VERSION = 0
WEBHDFS_KIND = "WEBHDFS delegation"
SWEBHDFS_KIND = "SWEBHDFS delegation"
HDFS_KIND = "HDFS_DELEGATION_TOKEN"
HIVE_KIND = "HIVE_DELEGATION_TOKEN"
# The service a Hive token is filed under in a credentials file: what clients set as
# hive.metastore.token.signature to pick it.
HIVE_SIGNATURE = "hopshive"
CREDENTIALS_MAGIC = b"HDTS"
CREDENTIALS_WRITABLE = 0


class MalformedToken(ValueError):
    """Bytes or text that are not a token."""


@dataclass(frozen=True)
class TokenIdentifier:
    """AbstractDelegationTokenIdentifier's fields, in its order (times in ms)."""

    owner: str
    renewer: str
    real_user: str
    issue_date: int
    max_date: int
    sequence_number: int
    master_key_id: int

    def to_bytes(self) -> bytes:
        out = io.BytesIO()
        out.write(bytes((IDENTIFIER_VERSION,)))
        for text in (self.owner, self.renewer, self.real_user):
            write_text(out, text)
        write_vlong(out, self.issue_date)
        write_vlong(out, self.max_date)
        write_vlong(out, self.sequence_number)
        write_vlong(out, self.master_key_id)
        return out.getvalue()

    @classmethod
    def from_bytes(cls, raw: bytes) -> "TokenIdentifier":
        data = io.BytesIO(raw)
        try:
            if data.read(1) != bytes((IDENTIFIER_VERSION,)):
                raise MalformedToken("unknown token identifier version")
            owner, renewer, real_user = read_text(data), read_text(data), read_text(data)
            fields = [read_vlong(data) for _ in range(4)]
        except WritableError as exc:
            raise MalformedToken(f"malformed token identifier: {exc}") from exc
        if data.read(1):
            raise MalformedToken("trailing bytes after the token identifier")
        return cls(owner, renewer, real_user, *fields)

    @property
    def user(self) -> str:
        """Whom the token speaks for."""
        return self.owner


@dataclass(frozen=True)
class Token:
    identifier: bytes
    password: bytes
    kind: str = WEBHDFS_KIND
    service: str = ""

    def decoded(self) -> TokenIdentifier:
        return TokenIdentifier.from_bytes(self.identifier)

    def labelled(self, kind: str, service: str = "") -> "Token":
        return replace(self, kind=kind, service=service)

    def to_bytes(self) -> bytes:
        out = io.BytesIO()
        _write_token(out, self)
        return out.getvalue()

    def url_string(self) -> str:
        """Token.encodeToUrlString: URL-safe base64 without padding."""
        return base64.urlsafe_b64encode(self.to_bytes()).rstrip(b"=").decode("ascii")

    @classmethod
    def from_url_string(cls, text: str) -> "Token":
        try:
            raw = base64.urlsafe_b64decode(text.strip() + "=" * (-len(text.strip()) % 4))
        except (binascii.Error, ValueError) as exc:
            raise MalformedToken("the token is not URL-safe base64") from exc
        data = io.BytesIO(raw)
        token = _read_token(data)
        if data.read(1):
            raise MalformedToken("trailing bytes after the token")
        return token


def _write_token(out: io.BytesIO, token: Token) -> None:
    write_bytes(out, token.identifier)
    write_bytes(out, token.password)
    write_text(out, token.kind)
    write_text(out, token.service)


def _read_token(data: io.BytesIO) -> Token:
    try:
        return Token(read_bytes(data, 4096), read_bytes(data, 4096), read_text(data), read_text(data))
    except WritableError as exc:
        raise MalformedToken(f"malformed token: {exc}") from exc


def credentials_file(tokens: dict[str, Token]) -> bytes:
    """A Hadoop credentials file (``HADOOP_TOKEN_FILE_LOCATION``) of ``alias -> token``, in
    the Writable form every Hadoop 2 and 3 client reads."""
    out = io.BytesIO()
    out.write(CREDENTIALS_MAGIC + bytes((CREDENTIALS_WRITABLE,)))
    write_vlong(out, len(tokens))
    for alias, token in tokens.items():
        write_text(out, alias)
        _write_token(out, token)
    write_vlong(out, 0)     # no secret keys
    return out.getvalue()


def read_credentials_file(raw: bytes) -> dict[str, Token]:
    data = io.BytesIO(raw)
    if data.read(5) != CREDENTIALS_MAGIC + bytes((CREDENTIALS_WRITABLE,)):
        raise MalformedToken("not a Writable Hadoop credentials file")
    try:
        tokens = {}
        for _ in range(read_vlong(data)):
            alias = read_text(data)
            tokens[alias] = _read_token(data)
        return tokens
    except WritableError as exc:
        raise MalformedToken(f"malformed credentials file: {exc}") from exc
