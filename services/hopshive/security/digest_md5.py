"""The server side of SASL DIGEST-MD5 (RFC 2831), authentication only (qop=auth).

No maintained Python package offers it (pure-sasl and Cyrus' bindings are clients; pysasl
has no DIGEST-MD5), so it is here, as Java's ``DigestMD5Server`` runs it for Hadoop and
Hive: one challenge (realm, nonce, qop="auth", charset=utf-8, algorithm=md5-sess), one
response checked against the password ``credentials(username)`` gives, then ``rspauth``
proving the server knew the password too.  No subsequent authentication, no integrity or
confidentiality layer (a client asking for auth-int or auth-conf is refused).

Who the password belongs to is the caller's business (``credentials``): the metastore
looks up delegation tokens there (``hopshive.metastore.authentication``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
from typing import Callable, Generic, TypeVar

from .sasl import SaslRejected

NAME = "DIGEST-MD5"
MAX_RESPONSE = 4096
Principal = TypeVar("Principal")

_DIRECTIVE = re.compile(r'\s*([A-Za-z-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^,"\s]*)\s*(?:,|$)')
_ESCAPED = re.compile(r"\\(.)")


def parse_directives(text: str) -> dict[str, str]:
    """``key=value, key="quoted \\" value"`` -> dict; SaslRejected when malformed or repeated."""
    directives: dict[str, str] = {}
    position = 0
    text = text.strip()
    while position < len(text):
        match = _DIRECTIVE.match(text, position)
        if match is None or match.end() == position:
            raise SaslRejected(f"DIGEST-MD5: malformed response near {text[position:position + 30]!r}")
        key, value = match.group(1).lower(), match.group(2)
        if value.startswith('"'):
            value = value[1:-1]
            if "\\" in value:
                value = _ESCAPED.sub(r"\1", value)
        if key in directives:
            raise SaslRejected(f"DIGEST-MD5: the response repeats {key}")
        directives[key] = value
        position = match.end()
    return directives


def _encode(text: str) -> bytes:
    """RFC 2831 2.1.2.1: ISO 8859-1 when every character fits, else UTF-8."""
    try:
        return text.encode("iso-8859-1")
    except UnicodeEncodeError:
        return text.encode("utf-8")


def _hex_md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def response_value(username: str, realm: str, password: str, nonce: str, cnonce: str, nc: str,
                   digest_uri: str, authzid: str | None, qop: str = "auth", initial: bool = True) -> str:
    """The ``response`` (``initial``) or ``rspauth`` value of RFC 2831 2.1.2.1 for qop=auth."""
    return response_values(username, realm, password, nonce, cnonce, nc, digest_uri, authzid, qop)[0 if initial else 1]


def response_values(username: str, realm: str, password: str, nonce: str, cnonce: str, nc: str,
                    digest_uri: str, authzid: str | None, qop: str = "auth") -> tuple[str, str]:
    """(``response``, ``rspauth``): both at the cost of one A1 hash."""
    user_hash = hashlib.md5(_encode(username) + b":" + _encode(realm) + b":" + _encode(password)).digest()
    a1 = user_hash + f":{nonce}:{cnonce}".encode()
    if authzid:
        a1 += b":" + authzid.encode("utf-8")
    head = f"{_hex_md5(a1)}:{nonce}:{nc}:{cnonce}:{qop}:"
    return tuple(_hex_md5((head + _hex_md5(f"{a2}{digest_uri}".encode())).encode())
                 for a2 in ("AUTHENTICATE:", ":"))


class DigestMD5Server(Generic[Principal]):
    """One exchange.  ``credentials(username)`` returns (principal, password) or raises
    SaslRejected; after ``complete``, ``principal`` is whom the client proved to be."""

    def __init__(self, credentials: Callable[[str], tuple[Principal, str]], realm: str = "default"):
        self.credentials = credentials
        self.realm = realm
        self.nonce = base64.b64encode(os.urandom(24)).decode("ascii")
        self.complete = False
        self.principal: Principal | None = None
        self._step = 0

    def evaluate(self, response: bytes) -> bytes:
        self._step += 1
        if self._step == 1:
            if response:
                raise SaslRejected("DIGEST-MD5: no initial response expected (subsequent authentication is"
                                   " not supported)")
            return (f'realm="{self.realm}",nonce="{self.nonce}",qop="auth",charset=utf-8,'
                    f'algorithm=md5-sess').encode("ascii")
        if self._step == 2:
            return self._check(response)
        raise SaslRejected("DIGEST-MD5: the exchange is over")

    def _check(self, raw: bytes) -> bytes:
        if len(raw) > MAX_RESPONSE:
            raise SaslRejected(f"DIGEST-MD5: a response of {len(raw)} bytes")
        try:
            fields = parse_directives(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise SaslRejected("DIGEST-MD5: the response is not UTF-8") from exc
        for required in ("username", "nonce", "cnonce", "nc", "digest-uri", "response"):
            if not fields.get(required):
                raise SaslRejected(f"DIGEST-MD5: the response has no {required}")
        qop = fields.get("qop", "auth")
        if qop != "auth":
            raise SaslRejected(f"DIGEST-MD5: qop {qop!r} is not offered (only auth: set hadoop.rpc.protection"
                               " to authentication)")
        if fields.get("realm", self.realm) != self.realm:
            raise SaslRejected(f"DIGEST-MD5: unknown realm {fields['realm']!r} (this server's is {self.realm!r})")
        if not hmac.compare_digest(fields["nonce"], self.nonce):
            raise SaslRejected("DIGEST-MD5: the response is for another nonce")
        if fields["nc"] != "00000001":
            raise SaslRejected("DIGEST-MD5: nonce count must be 00000001")
        username, authzid = fields["username"], fields.get("authzid")
        if authzid and authzid != username:
            raise SaslRejected(f"DIGEST-MD5: {username[:40]} may not act as {authzid[:40]}")
        principal, password = self.credentials(username)
        expected, rspauth = response_values(username, self.realm, password, self.nonce, fields["cnonce"], fields["nc"],
                                            fields["digest-uri"], authzid)
        if not hmac.compare_digest(fields["response"].lower(), expected):
            raise SaslRejected("DIGEST-MD5: digest response does not match: wrong password")
        self.principal = principal
        self.complete = True
        return f"rspauth={rspauth}".encode("ascii")
