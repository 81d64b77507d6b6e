"""The server side of SASL DIGEST-MD5 (RFC 2831), with its integrity and confidentiality layers.

No maintained Python package offers it (pure-sasl and Cyrus' bindings are clients; pysasl
has no DIGEST-MD5), so it is here, as Java's ``DigestMD5Server`` runs it for Hadoop and
Hive: one challenge (realm, nonce, the qops, the cipher, charset=utf-8, algorithm=md5-sess),
one response checked against the password ``credentials(username)`` gives, then ``rspauth``
proving the server knew the password too.  No subsequent authentication.

The client chooses the qop: ``auth`` (authentication only: the messages after it travel as
they are), ``auth-int`` (each message carries an HMAC-MD5 and a sequence number) or
``auth-conf`` (the same, encrypted with 3DES in CBC mode; RFC 2831 2.4).  That is what a
Hadoop or Hive client asks for with ``hadoop.rpc.protection`` integrity or privacy, and the
only protection Hive 2.3's metastore client can have on a SASL connection (it never puts
TLS under SASL).  Only 3des is offered: rc4 and des are weaker, and the offer is not
itself protected, so offering them would let a man in the middle pick them.

Who the password belongs to is the caller's business (``credentials``): the metastore
looks up delegation tokens there (``hopshive.metastore.authentication``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import struct
from typing import Callable, Generic, TypeVar

from cryptography.hazmat.decrepit.ciphers.algorithms import TripleDES
from cryptography.hazmat.primitives.ciphers import Cipher, modes

from .sasl import SaslError, SaslRejected

NAME = "DIGEST-MD5"
MAX_RESPONSE = 4096
AUTH, AUTH_INT, AUTH_CONF = "auth", "auth-int", "auth-conf"
QOPS = (AUTH, AUTH_INT, AUTH_CONF)
CIPHER = "3des"
MAX_BUFFER = 16 * 1024 * 1024     # what we tell the client it may send in one wrapped message
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
                   digest_uri: str, authzid: str | None, qop: str = AUTH, initial: bool = True) -> str:
    """The ``response`` (``initial``) or ``rspauth`` value of RFC 2831 2.1.2.1."""
    key = session_key(username, realm, password, nonce, cnonce, authzid)
    return responses(key, nonce, cnonce, nc, digest_uri, qop)[0 if initial else 1]


def session_key(username: str, realm: str, password: str, nonce: str, cnonce: str, authzid: str | None) -> bytes:
    """H(A1) of RFC 2831 2.1.2.1: the digest the responses and the layers' keys derive from."""
    user_hash = hashlib.md5(_encode(username) + b":" + _encode(realm) + b":" + _encode(password)).digest()
    a1 = user_hash + f":{nonce}:{cnonce}".encode()
    if authzid:
        a1 += b":" + authzid.encode("utf-8")
    return hashlib.md5(a1).digest()


def responses(key: bytes, nonce: str, cnonce: str, nc: str, digest_uri: str, qop: str) -> tuple[str, str]:
    """(``response``, ``rspauth``) from the session key H(A1): both at the cost of one A1 hash."""
    head = f"{key.hex()}:{nonce}:{nc}:{cnonce}:{qop}:"
    tail = "" if qop == AUTH else ":" + "0" * 32
    return tuple(_hex_md5((head + _hex_md5(f"{a2}{digest_uri}{tail}".encode())).encode())
                 for a2 in ("AUTHENTICATE:", ":"))


def _des_key(seven: bytes) -> bytes:
    """56 key bits spread over 8 bytes, 7 per byte, the low (parity) bit left clear: how RFC
    2831 2.4 and Java's DigestMD5Base make a DES key from 7 bytes of Kc."""
    bits = int.from_bytes(seven, "big")
    return bytes(((bits >> (7 * (7 - i))) & 0x7F) << 1 for i in range(8))


class SecurityLayer:
    """RFC 2831 2.3/2.4: wraps what one side sends and unwraps what it receives, after an
    exchange that chose auth-int or auth-conf.  ``server`` says which side this is (each
    direction has its own keys and sequence numbers).  A message that fails its check
    raises SaslError: the connection must be closed."""

    MAGIC = {("sign", "client"): b"Digest session key to client-to-server signing key magic constant",
             ("sign", "server"): b"Digest session key to server-to-client signing key magic constant",
             ("seal", "client"): b"Digest H(A1) to client-to-server sealing key magic constant",
             ("seal", "server"): b"Digest H(A1) to server-to-client sealing key magic constant"}

    def __init__(self, key: bytes, qop: str, server: bool):
        sender, receiver = ("server", "client") if server else ("client", "server")
        self.confidential = qop == AUTH_CONF
        self._send_mac = hashlib.md5(key + self.MAGIC["sign", sender]).digest()
        self._receive_mac = hashlib.md5(key + self.MAGIC["sign", receiver]).digest()
        self._send_seq = self._receive_seq = 0
        if self.confidential:
            self._encrypt = self._cipher(hashlib.md5(key + self.MAGIC["seal", sender]).digest()).encryptor()
            self._decrypt = self._cipher(hashlib.md5(key + self.MAGIC["seal", receiver]).digest()).decryptor()

    @staticmethod
    def _cipher(kc: bytes) -> Cipher:
        """Two-key 3DES (k1, k2, k1) in CBC mode, the IV the last 8 bytes of Kc; the chain
        runs on from one message to the next."""
        k1, k2 = _des_key(kc[:7]), _des_key(kc[7:14])
        return Cipher(TripleDES(k1 + k2 + k1), modes.CBC(kc[8:16]))

    @staticmethod
    def _mac(key: bytes, seq: int, message: bytes) -> bytes:
        return hmac.new(key, struct.pack(">I", seq) + message, hashlib.md5).digest()[:10]

    def wrap(self, message: bytes) -> bytes:
        seq = self._send_seq
        self._send_seq += 1
        mac = self._mac(self._send_mac, seq, message)
        if self.confidential:
            pad = 8 - (len(message) + 10) % 8
            body = self._encrypt.update(message + bytes([pad]) * pad + mac)
        else:
            body = message + mac
        return body + struct.pack(">HI", 1, seq)

    def unwrap(self, wrapped: bytes) -> bytes:
        if len(wrapped) < 16:
            raise SaslError(f"a SASL-wrapped message of {len(wrapped)} bytes is too short")
        kind, seq = struct.unpack(">HI", wrapped[-6:])
        if kind != 1 or seq != self._receive_seq:
            raise SaslError(f"SASL message {seq} of type {kind} where message {self._receive_seq} of type 1 was "
                            "expected (replayed, reordered or forged)")
        self._receive_seq += 1
        if self.confidential:
            if (len(wrapped) - 6) % 8:
                raise SaslError("an encrypted SASL message is not a whole number of 3DES blocks")
            plain = self._decrypt.update(wrapped[:-6])
            body, mac = plain[:-10], plain[-10:]
            pad = body[-1] if body else 0
            if not 1 <= pad <= 8 or body[-pad:] != bytes([pad]) * pad:
                raise SaslError("an encrypted SASL message has bad padding: wrong key or tampered with")
            message = body[:-pad]
        else:
            message, mac = wrapped[:-16], wrapped[-16:-6]
        if not hmac.compare_digest(mac, self._mac(self._receive_mac, seq, message)):
            raise SaslError("a SASL message failed its integrity check: tampered with or wrong key")
        return message


class DigestMD5Server(Generic[Principal]):
    """One exchange.  ``credentials(username)`` returns (principal, password) or raises
    SaslRejected; after ``complete``, ``principal`` is whom the client proved to be."""

    def __init__(self, credentials: Callable[[str], tuple[Principal, str]], realm: str = "default"):
        self.credentials = credentials
        self.realm = realm
        self.nonce = base64.b64encode(os.urandom(24)).decode("ascii")
        self.complete = False
        self.principal: Principal | None = None
        self.layer: SecurityLayer | None = None
        self._step = 0

    def evaluate(self, response: bytes) -> bytes:
        self._step += 1
        if self._step == 1:
            if response:
                raise SaslRejected("DIGEST-MD5: no initial response expected (subsequent authentication is"
                                   " not supported)")
            return (f'realm="{self.realm}",nonce="{self.nonce}",qop="{",".join(QOPS)}",cipher="{CIPHER}",'
                    f'maxbuf={MAX_BUFFER},charset=utf-8,algorithm=md5-sess').encode("ascii")
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
        qop = fields.get("qop", AUTH)
        if qop not in QOPS:
            raise SaslRejected(f"DIGEST-MD5: qop {qop[:20]!r} is not one of {', '.join(QOPS)}")
        if qop == AUTH_CONF and fields.get("cipher") != CIPHER:
            raise SaslRejected(f"DIGEST-MD5: cipher {fields.get('cipher', '')[:20]!r} is not offered (only {CIPHER})")
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
        key = session_key(username, self.realm, password, self.nonce, fields["cnonce"], authzid)
        expected, rspauth = responses(key, self.nonce, fields["cnonce"], fields["nc"], fields["digest-uri"], qop)
        if not hmac.compare_digest(fields["response"].lower(), expected):
            raise SaslRejected("DIGEST-MD5: digest response does not match: wrong password")
        self.principal = principal
        if qop != AUTH:
            self.layer = SecurityLayer(key, qop, server=True)
        self.complete = True
        return f"rspauth={rspauth}".encode("ascii")
