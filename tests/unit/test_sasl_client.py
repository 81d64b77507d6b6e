"""Our DIGEST-MD5 client (hopshive.security.sasl_client) against the server mechanism, whose
hashes RFC 2831's example and pure-sasl's and Java's clients check (test_digest_md5.py,
tests/component/test_metastore_tokens.py)."""

from __future__ import annotations

import base64
import socket
import struct
import threading

import pytest
from thrift.transport import TSocket
from thrift.transport.TTransport import TTransportException

from hopshive.security.digest_md5 import AUTH_CONF, AUTH_INT, DigestMD5Server, parse_directives, response_value
from hopshive.security.sasl import COMPLETE, OK, SaslError, SaslRejected, SecuredStream, negotiate, read_frame, send_frame
from hopshive.security.sasl_client import REALM, DigestMD5Client, digest_md5_transport

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


# ------------------------------------------------------------------ security layers
def exchanged(qop: str) -> tuple[DigestMD5Client, DigestMD5Server]:
    client, mechanism = DigestMD5Client(IDENTIFIER, PASSWORD, qop=qop), server()
    _, _, initial = client.start("DIGEST-MD5")
    ok, response = client.step(mechanism.evaluate(initial))
    assert ok, client.getError()
    assert parse_directives(response.decode())["qop"] == qop
    assert client.step(mechanism.evaluate(response)) == (True, b"")
    return client, mechanism


def framed(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


MESSAGES = [b"x", b"\x80\x01\x00\x01" + b"get_table" * 3, b"", b"1234567", b"12345678", bytes(range(256)) * 400]


@pytest.mark.parametrize("qop", [AUTH_INT, AUTH_CONF])
def test_both_sides_wrap_and_unwrap_each_others_messages_in_order(qop):
    """Several messages each way, of lengths around the 3DES block: the CBC chain and the
    sequence numbers run on from one message to the next."""
    client, mechanism = exchanged(qop)
    assert mechanism.layer.confidential is (qop == AUTH_CONF)
    for message in MESSAGES:
        ok, encoded = client.encode(message)
        assert ok and struct.unpack(">I", encoded[:4])[0] == len(encoded) - 4
        if qop == AUTH_CONF and len(message) > 8:
            assert message not in encoded
        assert mechanism.layer.unwrap(encoded[4:]) == message
        assert client.decode(framed(mechanism.layer.wrap(message[::-1]))) == (True, message[::-1])


@pytest.mark.parametrize("qop", [AUTH_INT, AUTH_CONF])
def test_tampered_replayed_and_reordered_messages_are_refused(qop):
    client, mechanism = exchanged(qop)
    first, second = client.encode(b"first message")[1][4:], client.encode(b"second message")[1][4:]
    tampered = bytearray(first)
    tampered[3] ^= 0x01
    with pytest.raises(SaslError, match="integrity check|padding"):
        mechanism.layer.unwrap(bytes(tampered))
    client, mechanism = exchanged(qop)
    first, second = client.encode(b"first message")[1][4:], client.encode(b"second message")[1][4:]
    with pytest.raises(SaslError, match="message 1 of type 1 where message 0"):
        mechanism.layer.unwrap(second)
    client, mechanism = exchanged(qop)
    first = client.encode(b"first message")[1][4:]
    assert mechanism.layer.unwrap(first) == b"first message"
    with pytest.raises(SaslError, match="message 0 of type 1 where message 1"):
        mechanism.layer.unwrap(first)
    with pytest.raises(SaslError, match="too short"):
        mechanism.layer.unwrap(b"short")
    ok, _ = client.decode(framed(b"\x00" * 30))
    assert not ok and client.getError()


def test_a_secured_stream_reads_and_writes_the_plain_framed_stream():
    """What the metastore's Thrift server sees through SecuredStream: plain frames, whatever
    size its reads; each frame it writes leaves wrapped."""
    client, mechanism = exchanged(AUTH_CONF)
    near, far = socket.socketpair()
    with near, far:
        stream = SecuredStream(near, mechanism.layer, max_frame=1 << 20)
        far.sendall(client.encode(b"hello")[1] + client.encode(b"world!")[1])
        assert [stream.recv(3), stream.recv(100), stream.recv(4), stream.recv(6)] == [
            b"\x00\x00\x00", b"\x05hello", b"\x00\x00\x00\x06", b"world!"]
        stream.sendall(framed(b"answer")[:3])
        stream.sendall(framed(b"answer")[3:] + framed(b"two"))
        for expected in (b"answer", b"two"):
            (length,) = struct.unpack(">I", far.recv(4))
            assert client.decode(framed(far.recv(length, socket.MSG_WAITALL))) == (True, expected)
        far.sendall(struct.pack(">I", 2 << 20))
        with pytest.raises(SaslError, match="at most"):
            stream.recv(4)


def opened_against(serve) -> str | None:
    """Open our transport against ``serve(sock)`` in a thread; the error, None when it opened."""
    near, far = socket.socketpair()
    with near, far:
        thread = threading.Thread(target=serve, args=(far,), daemon=True)
        thread.start()
        sock = TSocket.TSocket()
        sock.handle = near
        try:
            digest_md5_transport(sock, IDENTIFIER, PASSWORD, qop="auth").open()
            return None
        except TTransportException as exc:
            return str(exc)
        finally:
            thread.join(5)


def test_the_transport_checks_the_servers_rspauth():
    """thrift_sasl alone would accept an impostor that answers COMPLETE to anything."""
    def impostor(sock):
        read_frame(sock), read_frame(sock)            # START, the empty initial response
        send_frame(sock, OK, DigestMD5Server(lambda user: (user, "not the password")).evaluate(b""))
        read_frame(sock)
        send_frame(sock, COMPLETE, b"rspauth=" + b"0" * 32)

    assert opened_against(lambda sock: negotiate(sock, {"DIGEST-MD5": server})) is None
    assert "rspauth does not match" in opened_against(impostor)
