"""The client side of SASL DIGEST-MD5 with a delegation token, as Hadoop's SaslRpcClient does
it (what the metastore's hopshive.metastore.authentication expects): the user name is the
standard base64 of the token's identifier, the password the base64 of its password, the
realm ``default``.  Thrift's framing is thrift_sasl's TSaslClientTransport; the mechanism is
ours (RFC 2831, with the server's hashes and security layer from
hopshive.security.digest_md5) behind the interface thrift_sasl calls (that of python-sasl).
Over TLS it asks for qop=auth; without TLS for auth-conf, whose layer encrypts and signs
every message (what the metastores require of a SASL connection that is not TLS).  pure-sasl's client did the
same in ~0.4 ms of Python per connection, parsing the challenge a character at a time (a
third of what a SASL connection cost over set_ugi in bench/token_bench.py); the server is
still tested against pure-sasl's and Java's clients (tests/unit/test_digest_md5.py,
tests/component/test_metastore_tokens.py), so the two sides do not merely agree with each
other.

Used by the platform's provisioning and by the tests' and the harness's metastore clients.
"""

from __future__ import annotations

import base64
import hmac
import os
import struct
from typing import Any

from thrift.transport.TSSLSocket import TSSLSocket
from thrift.transport.TTransport import TTransportBase, TTransportException
from thrift_sasl import TSaslClientTransport

from .digest_md5 import AUTH, AUTH_CONF, CIPHER, QOPS, SecurityLayer, parse_directives, responses, session_key
from .sasl import SaslError, SaslRejected

MECHANISM = "DIGEST-MD5"
REALM = "default"       # Hadoop's SaslRpcServer.SASL_DEFAULT_REALM
SERVICE = "hive"


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


class DigestMD5Client:
    """One DIGEST-MD5 exchange (RFC 2831) with python-sasl's methods (start, step, encode,
    decode, getError), which thrift_sasl calls: the client has no initial response, answers
    the server's one challenge at ``qop``, and checks the ``rspauth`` that proves the server
    knew the password too (``VerifyingTransport`` hands it over).  At qop=auth, encode and decode pass bytes through; otherwise
    they wrap and unwrap whole frames (thrift_sasl hands them the length too)."""

    def __init__(self, identifier: bytes, password: bytes, service: str = SERVICE, cnonce: str | None = None,
                 qop: str = AUTH):
        if qop not in QOPS:
            raise ValueError(f"qop must be one of {', '.join(QOPS)}, not {qop!r}")
        self.qop = qop
        self.layer: SecurityLayer | None = None
        self.username = base64.b64encode(identifier).decode("ascii")
        self.password = base64.b64encode(password).decode("ascii")
        # pure-sasl, which this replaces, sent <service>/<its host argument>, which was the realm.
        self.digest_uri = f"{service}/{REALM}"
        self.cnonce = cnonce or base64.b64encode(os.urandom(24)).decode("ascii")
        self.error: str | None = None
        self._rspauth: str | None = None

    def start(self, mechanism: str) -> tuple[bool, str, bytes | None]:
        if mechanism != MECHANISM:
            self.error = f"only {MECHANISM} is offered, not {mechanism}"
            return False, mechanism, None
        return True, MECHANISM, b""     # thrift_sasl must still send the empty initial response

    def step(self, challenge: bytes | None = None) -> tuple[bool, bytes | None]:
        try:
            directives = parse_directives((challenge or b"").decode("utf-8"))
            if self._rspauth is None:
                return True, self._respond(directives)
            if not hmac.compare_digest(directives.get("rspauth", ""), self._rspauth):
                raise SaslRejected("DIGEST-MD5: the server's rspauth does not match: it does not know the password")
            return True, b""
        except (SaslRejected, UnicodeDecodeError) as exc:
            self.error = str(exc)
            return False, None

    def _respond(self, challenge: dict[str, str]) -> bytes:
        nonce = challenge.get("nonce")
        if not nonce:
            raise SaslRejected("DIGEST-MD5: the challenge has no nonce")
        if self.qop not in [q.strip() for q in challenge.get("qop", AUTH).split(",")]:
            raise SaslRejected(f"DIGEST-MD5: the server does not offer qop={self.qop} ({challenge.get('qop')!r})")
        if self.qop == AUTH_CONF and CIPHER not in [c.strip() for c in challenge.get("cipher", "").split(",")]:
            raise SaslRejected(f"DIGEST-MD5: the server does not offer cipher {CIPHER} ({challenge.get('cipher')!r})")
        if challenge.get("algorithm") != "md5-sess":
            raise SaslRejected("DIGEST-MD5: the challenge does not name algorithm=md5-sess")
        realm = challenge.get("realm", REALM)
        key = session_key(self.username, realm, self.password, nonce, self.cnonce, None)
        response, self._rspauth = responses(key, nonce, self.cnonce, "00000001", self.digest_uri, self.qop)
        fields = [f"username={_quoted(self.username)}", f"realm={_quoted(realm)}", f"nonce={_quoted(nonce)}",
                  f"cnonce={_quoted(self.cnonce)}", "nc=00000001", f"qop={self.qop}",
                  f"digest-uri={_quoted(self.digest_uri)}", f"response={response}"]
        if self.qop == AUTH_CONF:
            fields.append(f"cipher={CIPHER}")
        if self.qop != AUTH:
            self.layer = SecurityLayer(key, self.qop, server=False)
        if challenge.get("charset") == "utf-8":
            fields.append("charset=utf-8")
        return ",".join(fields).encode("utf-8")

    def encode(self, outgoing: bytes) -> tuple[bool, bytes]:
        if self.layer is None:
            return True, outgoing
        wrapped = self.layer.wrap(outgoing)
        return True, struct.pack(">I", len(wrapped)) + wrapped

    def decode(self, incoming: bytes) -> tuple[bool, bytes]:
        if self.layer is None:
            return True, incoming
        try:
            return True, self.layer.unwrap(incoming[4:])
        except SaslError as exc:
            self.error = str(exc)
            return False, b""

    def getError(self) -> str | None:  # noqa: N802 -- python-sasl's name, which thrift_sasl calls
        return self.error


class VerifyingTransport(TSaslClientTransport):
    """thrift_sasl's transport, which also hands the server's last challenge (DIGEST-MD5's
    ``rspauth``) to the client: thrift_sasl stops at COMPLETE without looking at it, so a
    server that does not know the token's password would go unnoticed."""

    def _recv_sasl_message(self):
        status, payload = super()._recv_sasl_message()
        if status == self.COMPLETE:
            ok, _ = self.sasl.step(payload)
            if not ok:
                raise TTransportException(type=TTransportException.NOT_OPEN,
                                          message=f"Bad SASL result: {self.sasl.getError()}")
        return status, payload


def digest_md5_transport(transport: TTransportBase | Any, identifier: bytes, password: bytes,
                         service: str = SERVICE, qop: str | None = None) -> VerifyingTransport:
    """``transport`` (a TSocket or TSSLSocket, opened by the returned transport's open()
    unless it is already) wrapped in SASL DIGEST-MD5 authenticated by the token
    ``identifier`` and ``password``, at ``qop`` (by default auth over TLS, auth-conf
    without).  A refused token surfaces as a TTransportException from open()."""
    if not identifier or not password:
        raise ValueError("DIGEST-MD5 needs a token identifier and password")
    if qop is None:
        qop = AUTH if isinstance(transport, TSSLSocket) else AUTH_CONF
    return VerifyingTransport(lambda: DigestMD5Client(identifier, password, service, qop=qop), MECHANISM, transport)
