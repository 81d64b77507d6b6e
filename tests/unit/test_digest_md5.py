"""The DIGEST-MD5 server mechanism: RFC 2831's own example, a full exchange with pure-sasl's
client (an implementation nobody here wrote), and the refusals."""

from __future__ import annotations

import pytest
from puresasl.client import SASLClient

from hopshive.security.digest_md5 import DigestMD5Server, parse_directives, response_value
from hopshive.security.sasl import SaslRejected


def test_rfc_2831_example():
    """Section 4: chris / secret at elwood.innosoft.com, IMAP."""
    args = ("chris", "elwood.innosoft.com", "secret", "OA6MG9tEQGm2hh", "OA6MHXh6VqTrRk", "00000001",
            "imap/elwood.innosoft.com", None)
    assert response_value(*args) == "d388dad90d4bbd760a152321f2143af7"
    assert response_value(*args, initial=False) == "ea40f60335c427b5527b84dbabcdfffd"


def test_directives_with_quotes_and_escapes():
    assert parse_directives('a=1, b="x,\\"y\\"" ,c=""') == {"a": "1", "b": 'x,"y"', "c": ""}
    for bad in ('a=1,a=2', 'a="unterminated', '=1', 'a=1 b=2'):
        with pytest.raises(SaslRejected):
            parse_directives(bad)


def exchange(client_password: str, server_password: str = "cGFzcw==", **client_props) -> tuple[DigestMD5Server, SASLClient]:
    server = DigestMD5Server(lambda user: ({"user": user}, server_password))
    client = SASLClient("default", service="hive", mechanism="DIGEST-MD5", username="dXNlcg==",
                        password=client_password, **client_props)
    assert client.process() is None           # no initial response
    challenge = server.evaluate(b"")
    assert not server.complete
    final = server.evaluate(client.process(challenge))
    client.process(final)                     # pure-sasl checks rspauth here
    return server, client


def test_a_client_with_the_password_is_authenticated_and_checks_the_server():
    server, client = exchange("cGFzcw==")
    assert server.complete and client.complete and server.principal == {"user": "dXNlcg=="}


def test_a_wrong_password_is_refused():
    with pytest.raises(SaslRejected, match="wrong password"):
        exchange("cGFzcx==")


def test_the_exchange_ends_after_the_response():
    server, _ = exchange("cGFzcw==")
    with pytest.raises(SaslRejected, match="the exchange is over"):
        server.evaluate(b"again")


def test_unknown_qops_and_ciphers_other_realms_nonces_and_authzids_are_refused():
    nonce = "n0nce"
    base = {"username": "u", "realm": "default", "nonce": nonce, "cnonce": "c", "nc": "00000001",
            "digest-uri": "hive/default", "response": "0" * 32}
    for change, message in [({"qop": "auth-bogus"}, "qop 'auth-bogus' is not one of"),
                            ({"qop": "auth-conf", "cipher": "rc4"}, "cipher 'rc4' is not offered"),
                            ({"qop": "auth-conf"}, "cipher '' is not offered"),
                            ({"realm": "other"}, "unknown realm 'other'"),
                            ({"nonce": "stale"}, "another nonce"),
                            ({"nc": "00000002"}, "nonce count"),
                            ({"authzid": "root"}, "u may not act as root"),
                            ({}, "wrong password")]:
        response = ",".join(f'{key}="{value}"' for key, value in dict(base, **change).items())
        server = DigestMD5Server(lambda user: (user, "pw"))
        server.nonce = nonce
        server.evaluate(b"")
        with pytest.raises(SaslRejected, match=message):
            server.evaluate(response.encode())
        assert not server.complete and server.principal is None
