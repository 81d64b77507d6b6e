"""Our DIGEST-MD5 client (hopshive.security.sasl_client) against the server mechanism, whose
hashes RFC 2831's example and pure-sasl's and Java's clients check (test_digest_md5.py,
tests/component/test_metastore_tokens.py)."""

from __future__ import annotations

import base64

import pytest

from hopshive.security.digest_md5 import DigestMD5Server, parse_directives, response_value
from hopshive.security.sasl import SaslRejected
from hopshive.security.sasl_client import REALM, DigestMD5Client

IDENTIFIER, PASSWORD = b"\x00\x05alice\x05alice", b"\x01\x02secret"


def server(password: bytes = PASSWORD) -> DigestMD5Server:
    return DigestMD5Server(lambda user: ({"user": user}, base64.b64encode(password).decode("ascii")), REALM)


def test_the_response_is_rfc_2831s_for_the_token():
    client = DigestMD5Client(IDENTIFIER, PASSWORD, cnonce="OA6MHXh6VqTrRk")
    assert client.start("DIGEST-MD5") == (True, "DIGEST-MD5", b"")
    ok, answer = client.step(b'realm="default",nonce="OA6MG9tEQGm2hh",qop="auth",charset=utf-8,algorithm=md5-sess')
    assert ok, client.getError()
    fields = parse_directives(answer.decode())
    user = base64.b64encode(IDENTIFIER).decode()
    assert fields == {"username": user, "realm": "default", "nonce": "OA6MG9tEQGm2hh", "cnonce": "OA6MHXh6VqTrRk",
                      "nc": "00000001", "qop": "auth", "digest-uri": "hive/default", "charset": "utf-8",
                      "response": response_value(user, "default", base64.b64encode(PASSWORD).decode(),
                                                 "OA6MG9tEQGm2hh", "OA6MHXh6VqTrRk", "00000001", "hive/default", None)}


def test_a_full_exchange_authenticates_and_checks_the_servers_rspauth():
    client, mechanism = DigestMD5Client(IDENTIFIER, PASSWORD), server()
    _, _, initial = client.start("DIGEST-MD5")
    ok, response = client.step(mechanism.evaluate(initial))
    final = mechanism.evaluate(response)
    assert ok and mechanism.complete and mechanism.principal == {"user": base64.b64encode(IDENTIFIER).decode()}
    assert client.step(final) == (True, b"")


def test_a_server_without_the_password_is_found_out():
    client, mechanism = DigestMD5Client(IDENTIFIER, PASSWORD), server()
    _, _, initial = client.start("DIGEST-MD5")
    client.step(mechanism.evaluate(initial))
    ok, _ = client.step(b"rspauth=" + b"0" * 32)
    assert not ok and "rspauth" in client.getError()


def test_a_wrong_password_is_refused_by_the_server():
    client, mechanism = DigestMD5Client(IDENTIFIER, b"guess"), server()
    _, _, initial = client.start("DIGEST-MD5")
    _, response = client.step(mechanism.evaluate(initial))
    with pytest.raises(SaslRejected, match="wrong password"):
        mechanism.evaluate(response)


def test_challenges_it_cannot_answer_fail_with_a_reason():
    for challenge in (b'realm="default",qop="auth-conf",algorithm=md5-sess,nonce="n"',
                      b'realm="default",qop="auth",algorithm=md5-sess',
                      b'realm="default",qop="auth",nonce="n"', b"not directives", b"\xff"):
        client = DigestMD5Client(IDENTIFIER, PASSWORD)
        assert client.step(challenge) == (False, None) and client.getError()
    assert DigestMD5Client(IDENTIFIER, PASSWORD).start("PLAIN")[0] is False
