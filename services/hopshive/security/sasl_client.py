"""The client side of SASL DIGEST-MD5 with a delegation token, as Hadoop's SaslRpcClient does
it (what the metastore's hopshive.metastore.authentication expects): the user name is the
standard base64 of the token's identifier, the password the base64 of its password, the
realm ``default``.  Thrift's framing is thrift_sasl's TSaslClientTransport; the mechanism is
pure-sasl's DIGEST-MD5 client behind the interface thrift_sasl calls (that of python-sasl).

Used by the platform's provisioning and by the tests' and the harness's metastore clients.
"""

from __future__ import annotations

import base64
from typing import Any

from puresasl import SASLError
from puresasl.client import SASLClient
from thrift.transport.TTransport import TTransportBase
from thrift_sasl import TSaslClientTransport

MECHANISM = "DIGEST-MD5"
REALM = "default"       # Hadoop's SaslRpcServer.SASL_DEFAULT_REALM
SERVICE = "hive"


class DigestMD5Client:
    """pure-sasl's DIGEST-MD5 client with python-sasl's methods (start, step, encode,
    decode, getError), which thrift_sasl calls.  pure-sasl's DIGEST-MD5 does only the
    ``auth`` quality of protection, so encode and decode pass bytes through."""

    def __init__(self, identifier: bytes, password: bytes, service: str = SERVICE):
        self.sasl = SASLClient(REALM, service=service, mechanism=MECHANISM,
                               username=base64.b64encode(identifier).decode("ascii"),
                               password=base64.b64encode(password).decode("ascii"))
        self.error: str | None = None

    def start(self, mechanism: str) -> tuple[bool, str, bytes | None]:
        try:
            self.sasl.choose_mechanism([mechanism])
            # DIGEST-MD5 has no initial response: thrift_sasl must still send an empty one.
            return True, self.sasl.mechanism, self.sasl.process() or b""
        except SASLError as exc:
            self.error = str(exc)
            return False, mechanism, None

    def step(self, challenge: bytes | None = None) -> tuple[bool, bytes | None]:
        try:
            return True, self.sasl.process(challenge)
        except SASLError as exc:
            self.error = str(exc)
            return False, None

    def encode(self, outgoing: bytes) -> tuple[bool, bytes]:
        return True, self.sasl.wrap(outgoing)

    def decode(self, incoming: bytes) -> tuple[bool, bytes]:
        return True, self.sasl.unwrap(incoming)

    def getError(self) -> str | None:  # noqa: N802 -- python-sasl's name, which thrift_sasl calls
        return self.error


def digest_md5_transport(transport: TTransportBase | Any, identifier: bytes, password: bytes,
                         service: str = SERVICE) -> TSaslClientTransport:
    """``transport`` (a TSocket, opened by the returned transport's open() unless it is
    already) wrapped in SASL DIGEST-MD5 authenticated by the token ``identifier`` and
    ``password``.  A refused token surfaces as a TTransportException from open()."""
    if not identifier or not password:
        raise ValueError("DIGEST-MD5 needs a token identifier and password")
    return TSaslClientTransport(lambda: DigestMD5Client(identifier, password, service), MECHANISM, transport)
