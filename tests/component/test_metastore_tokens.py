"""The metastore in its default security mode (token): SASL DIGEST-MD5 with a delegation token,
from Hive 2.3's own client (a Hadoop credentials file in HADOOP_TOKEN_FILE_LOCATION) and
from thrift_sasl with our DIGEST-MD5 client (hopshive.security.sasl_client); the caller is
the token's owner and storage-based authorization judges that user.  Refused: no SASL,
forged, expired and cancelled tokens, set_ugi to another user from a non-proxy user, broken
handshakes.  Hive's get/renew/cancel_delegation_token calls."""

from __future__ import annotations

import socket
import struct
import time

import pytest
from pymetastore.hive_metastore import ttypes as h3
from thrift.Thrift import TApplicationException
from thrift.transport.TTransport import TTransportException

from hopshive.security.secrets import SecretManager, TokenPolicy
from hopshive.security.tokens import HIVE_KIND, Token, credentials_file
from tests.support.hms import database, table
from tests.support.metastore import MetastoreProcess, settings, thrift_client
from tests.support.metastore_fixtures import FAKE_NAMENODE, running, start_in_thread
from tests.support.token_clients import SIGNATURE, JavaMetastoreClient

pytestmark = pytest.mark.metastore
PROXY = "hopshive-sql"
ALICE_DB = "/user/hive/warehouse/alice_db.db"


@pytest.fixture
def metastore(db):
    yield from running(db, security="token", proxy_users=[PROXY])


@pytest.fixture
def secrets(db):
    """The issuer (the platform API issues tokens the same way)."""
    return SecretManager(db)


def connect(metastore, token: Token, user: str | None = None) -> thrift_client:
    return thrift_client(metastore.port, user=user, token=(token.identifier, token.password))


def forged(token: Token, field: str, index: int) -> Token:
    raw = bytearray(getattr(token, field))
    raw[index] ^= 0x01
    return Token(bytes(raw) if field == "identifier" else token.identifier,
                 bytes(raw) if field == "password" else token.password, token.kind, token.service)


def refusal(metastore, token: Token) -> str:
    with pytest.raises(TTransportException) as refused:
        with connect(metastore, token) as hms:
            hms.get_all_databases()
    return str(refused.value)


def still_serves(metastore, secrets) -> None:
    with connect(metastore, secrets.issue("carol")) as hms:
        assert "default" in hms.get_all_databases()


# ------------------------------------------------------------------ Hive's own client
@pytest.fixture(scope="module")
def java_client(tmp_path_factory):
    return JavaMetastoreClient(tmp_path_factory.mktemp("hms-java"))


def test_hive_client_with_a_token_file_acts_as_the_token_owner(metastore, secrets, namespace, java_client):
    alice, bob = secrets.issue("alice"), secrets.issue("bob")
    with connect(metastore, alice) as hms:
        hms.create_database(database("alice_db"))
        hms.create_table(table("alice_db", "t"))
    namespace.set_permission(namespace.caller("hdfs"), ALICE_DB, 0o700)

    code, lines = java_client.run(metastore.port, java_client.token_file(alice, "alice"), "databases", "table:alice_db.t")
    assert (code, lines) == (0, ["databases [alice_db, default]", "table alice_db.t owner=alice"])

    code, lines = java_client.run(metastore.port, java_client.token_file(bob, "bob"), "databases", "table:alice_db.t")
    assert code == 1 and lines[0] == "databases [alice_db, default]", lines
    assert lines[1].startswith("ERROR org.apache.hadoop.hive.metastore.api.MetaException: Permission denied: "
                               "user=bob, access=EXECUTE"), lines


def test_hive_client_with_a_forged_token_is_refused(metastore, secrets, java_client):
    code, lines = java_client.run(metastore.port, java_client.token_file(forged(secrets.issue("alice"), "password", 3),
                                                                         "forged"), "databases")
    assert code == 1 and lines[0].startswith("ERROR "), lines
    assert "wrong password" in lines[0] or "SASL" in lines[0], lines


def test_hive_client_token_calls(metastore, secrets, java_client):
    """Hive's client gets, renews and cancels tokens of a service account; Hadoop's Token and
    Hive's DelegationTokenIdentifier read what it gets."""
    service = java_client.token_file(secrets.issue(PROXY), "service")
    code, lines = java_client.run(metastore.port, service, f"token:bob:{PROXY}", f"renew:bob:{PROXY}",
                                  f"cancel:bob:{PROXY}")
    assert code == 1 and lines[:3] == [
        f"token kind=HIVE_DELEGATION_TOKEN service= owner=bob renewer={PROXY} realUser={PROXY} lifetime=7d",
        "renewed for 23 h", "cancelled"], lines
    assert lines[3].startswith("ERROR org.apache.hadoop.hive.metastore.api.MetaException: token (owner=bob, "), lines
    assert lines[3].endswith("can't be found: it was cancelled or has expired"), lines

    code, lines = java_client.run(metastore.port, java_client.token_file(secrets.issue("alice"), "alice"),
                                  "token:alice:alice")
    assert code == 1 and "cannot be used to get another" in lines[0], lines


@pytest.mark.parametrize("protection", ["integrity", "privacy"])
def test_hive_client_with_a_security_layer(metastore, secrets, namespace, java_client, protection):
    """hadoop.rpc.protection integrity / privacy: Hive's client asks for qop auth-int /
    auth-conf (3DES) and every message after the handshake is wrapped both ways.  A table of
    3,000 columns makes an answer of over 100 KB, more than the client's 64 KB maxbuf, in
    one wrapped message; several calls run the sequence numbers and the CBC chain on."""
    alice = secrets.issue("alice")
    with connect(metastore, alice) as hms:
        hms.create_database(database("alice_db"))
        hms.create_table(table("alice_db", "wide", cols=[f"a_rather_long_column_name_{i} string" for i in range(3000)]))
    code, lines = java_client.run(metastore.port, java_client.token_file(alice, "alice"), "databases",
                                  "table:alice_db.wide", "table:alice_db.wide", "databases",
                                  jvm_options=(f"-Dhopshive.protection={protection}",))
    assert (code, lines) == (0, ["databases [alice_db, default]", "table alice_db.wide owner=alice",
                                 "table alice_db.wide owner=alice", "databases [alice_db, default]"]), lines


def test_hive_client_without_its_token_signature_gets_no_connection(metastore, secrets, java_client):
    """A token for another signature is not selected: the client falls back to Kerberos,
    which it has no ticket for."""
    token_file = java_client.token_file(secrets.issue("alice"), "other", signature="another-metastore")
    code, lines = java_client.run(metastore.port, token_file, "databases")
    assert code == 1 and lines[0].startswith("ERROR "), lines


# ------------------------------------------------------------------ refusals
def test_a_connection_without_sasl_is_told_why_and_closed(metastore):
    with thrift_client(metastore.port, user=None) as hms:
        with pytest.raises(TApplicationException, match="accepts only SASL .*hive.metastore.sasl.enabled"):
            hms.get_all_databases()
        with pytest.raises((TTransportException, EOFError, OSError)):
            hms.get_all_databases()


def test_set_ugi_without_sasl_is_refused_before_it_is_served(metastore):
    with pytest.raises(TApplicationException, match="accepts only SASL"):
        with thrift_client(metastore.port, user="hdfs"):
            pass


@pytest.mark.parametrize("field, index", [("password", 0), ("password", 19), ("identifier", 2), ("identifier", -1)])
def test_a_token_with_one_byte_changed_is_refused(metastore, secrets, field, index):
    message = refusal(metastore, forged(secrets.issue("alice"), field, index))
    assert "DIGEST-MD5" in message or "invalid" in message or "can't be found" in message, message
    still_serves(metastore, secrets)


def test_an_expired_token_is_refused(metastore, db):
    token = SecretManager(db, TokenPolicy(renew_interval=1.0)).issue("alice")
    with connect(metastore, token) as hms:
        assert "default" in hms.get_all_databases()
    time.sleep(1.2)
    assert "is expired" in refusal(metastore, token)


def test_a_cancelled_token_is_refused(metastore, secrets):
    token = secrets.issue("alice")
    secrets.cancel(token, "alice")
    assert "can't be found" in refusal(metastore, token)


def test_set_ugi_may_not_name_another_user(metastore, secrets):
    with connect(metastore, secrets.issue("alice")) as hms:
        assert hms.set_ugi("alice", ["staff"]) == ["staff"]
        with pytest.raises(h3.MetaException, match="User: alice is not allowed to impersonate bob"):
            hms.set_ugi("bob", [])
        hms.create_database(database("mine"))
        assert hms.get_database("mine").ownerName == "alice"


def test_a_proxy_user_acts_for_users_but_not_for_superusers(metastore, secrets):
    with connect(metastore, secrets.issue(PROXY)) as hms:
        hms.set_ugi("bob", [])
        hms.create_database(database("bobs"))
        assert hms.get_database("bobs").ownerName == "bob"
        for privileged in ("hdfs", "hive"):
            with pytest.raises(h3.MetaException, match=f"User: {PROXY} is not allowed to impersonate {privileged}"):
                hms.set_ugi(privileged, [])


# ------------------------------------------------------------------ the token calls
def test_token_calls(metastore, secrets):
    with connect(metastore, secrets.issue("alice")) as hms:
        with pytest.raises(h3.MetaException, match="cannot be used to get another"):
            hms.get_delegation_token("alice", "alice")
    with connect(metastore, secrets.issue(PROXY)) as service:
        issued = service.get_delegation_token("bob", PROXY)
        token = Token.from_url_string(issued)
        assert (token.kind, token.service, token.decoded().owner, token.decoded().real_user) == \
            ("HIVE_DELEGATION_TOKEN", "", "bob", PROXY)
        with pytest.raises(h3.MetaException, match="not allowed to impersonate hdfs"):
            service.get_delegation_token("hdfs", PROXY)
        with connect(metastore, token) as bob:
            bob.create_database(database("bobs"))
            assert bob.get_database("bobs").ownerName == "bob"
            with pytest.raises(h3.MetaException, match="bob tries to renew"):
                bob.renew_delegation_token(issued)
        assert service.renew_delegation_token(issued) > time.time() * 1000 + 3_600_000
        with pytest.raises(h3.MetaException, match="is invalid: its password does not match"):
            service.renew_delegation_token(forged(token, "password", 0).url_string())
        with pytest.raises(h3.MetaException, match="not URL-safe base64|malformed token"):
            service.cancel_delegation_token("!" + issued)
        service.cancel_delegation_token(issued)
    assert "can't be found" in refusal(metastore, token)


def test_simple_mode_believes_set_ugi_and_issues_no_token(db, secrets):
    server = start_in_thread(db, security="simple", proxy_users=[PROXY])
    try:
        with thrift_client(server.port, user="bob") as hms:
            hms.create_database(database("bobs"))
            assert hms.get_database("bobs").ownerName == "bob"
            with pytest.raises(h3.MetaException, match="only to authenticated callers"):
                hms.get_delegation_token("bob", "bob")
        with connect(server, secrets.issue("alice")) as hms:     # SASL is still authenticated
            with pytest.raises(h3.MetaException, match="not allowed to impersonate bob"):
                hms.set_ugi("bob", [])
    finally:
        server.stop()


@pytest.mark.parametrize("mode", ["token", "simple"])
def test_the_service_starts_in_either_mode_and_says_when_it_is_insecure(mariadb, db, tmp_path, secrets, mode):
    """The real hopshive-metastore process; its health probe passes in token mode too (it
    takes the SASL refusal as an answer)."""
    process = MetastoreProcess(tmp_path / mode, settings(mariadb.config, FAKE_NAMENODE, security=mode)).start()
    try:
        with connect(process, secrets.issue("alice")) as hms:
            assert "default" in hms.get_all_databases()
    finally:
        assert process.stop() == 0, process.log_tail()
    assert ("INSECURE: security.mode is simple" in process.log_tail(100_000)) == (mode == "simple")


# ------------------------------------------------------------------ bad input
def _raw(metastore, data: bytes, wait: float = 5.0) -> bytes:
    """Send ``data``, half-close, return all the server answered before it closed (a reset
    is a close: the server does not read what is not Thrift); it must close within ``wait``."""
    answer = b""
    with socket.create_connection(("127.0.0.1", metastore.port), timeout=wait) as sock:
        try:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
            while chunk := sock.recv(4096):
                answer += chunk
        except TimeoutError:
            raise
        except OSError:         # reset, or closed before we finished sending
            pass
    return answer


def _frame(status: int, payload: bytes) -> bytes:
    return struct.pack(">BI", status, len(payload)) + payload


def _frames(data: bytes) -> list[tuple[int, bytes]]:
    frames = []
    while data:
        status, length = struct.unpack(">BI", data[:5])
        frames.append((status, data[5:5 + length]))
        data = data[5 + length:]
    return frames


CHALLENGE = (2, b'realm="default",nonce="')


@pytest.mark.parametrize("data, answer", [
    (_frame(1, b"PLAIN") + _frame(2, b"\0alice\0pw"),
     [(3, b"unsupported SASL mechanism 'PLAIN'; this server offers DIGEST-MD5")]),
    (_frame(1, b"DIGEST-MD5")[:8], []),                                  # truncated START
    (_frame(1, b"DIGEST-MD5") + _frame(2, b"")[:3], []),                 # truncated response
    (_frame(1, b"DIGEST-MD5") + _frame(2, b"") + _frame(2, b'username="x",garbage'),
     [CHALLENGE, (3, b"DIGEST-MD5: malformed response near 'garbage'")]),
    (_frame(1, b"DIGEST-MD5") + _frame(2, b"") + _frame(2, b'username="eA==",nonce="n"'),
     [CHALLENGE, (3, b"DIGEST-MD5: the response has no cnonce")]),
    (_frame(1, b"DIGEST-MD5") + _frame(2, b"initial"),
     [(3, b"DIGEST-MD5: no initial response expected (subsequent authentication is not supported)")]),
    (_frame(1, b"DIGEST-MD5") + _frame(7, b""), [(4, b"unexpected SASL status 7 during the handshake")]),
    (_frame(2, b"DIGEST-MD5"), []),                                     # not a START: not SASL at all
    (b"\x01\xff\xff\xff\xffgarbage", []),                             # a START longer than any frame
    (b"GET / HTTP/1.1\r\n\r\n", []),
])
def test_bad_handshakes_close_only_their_connection(metastore, secrets, data, answer):
    frames = _frames(_raw(metastore, data))
    assert [(status, payload[:len(expected)]) for (status, payload), (_, expected) in zip(frames, answer)] == answer
    assert len(frames) == len(answer), frames
    still_serves(metastore, secrets)


# ------------------------------------------------------------------ Spark
@pytest.mark.spark
def test_spark_with_a_token_file_uses_the_token_mode_metastore(db, namenode, secrets, tmp_path):
    """PySpark's built-in Hive client with only the three settings a user adds: SASL on, the
    token signature, the credentials file."""
    from tests.support.spark_workload import SparkProcess

    server = start_in_thread(db, security="token", warehouse=f"webhdfs://{namenode.address}/user/hive/warehouse",
                             namespace_uris=[f"webhdfs://{namenode.address}"])
    token_file = tmp_path / "alice.token"
    token_file.write_bytes(credentials_file({"hive": secrets.issue("alice").labelled(HIVE_KIND, SIGNATURE)}))
    spark = SparkProcess(["--catalog", "hive", "--uris", f"thrift://127.0.0.1:{server.port}",
                          "--warehouse", f"webhdfs://{namenode.address}/user/hive/warehouse",
                          "--conf", "spark.hadoop.hive.metastore.sasl.enabled=true",
                          "--conf", f"spark.hadoop.hive.metastore.token.signature={SIGNATURE}"],
                         tmp_path / "spark.log", env={"HADOOP_TOKEN_FILE_LOCATION": str(token_file),
                                                      "HADOOP_USER_NAME": "alice"})
    statements = ["SHOW DATABASES", "CREATE DATABASE tok", "CREATE TABLE tok.t (a INT, b STRING) STORED AS PARQUET",
                  "INSERT INTO tok.t VALUES (1, 'x'), (2, 'y')", "SELECT * FROM tok.t", "SHOW DATABASES"]
    try:
        results = spark.run({"all": statements}, timeout=600)["all"]
    finally:
        spark.close()
        server.stop()
    assert results == {
        "SHOW DATABASES": [["default"], ["tok"]],       # the last one: the first saw only default
        "CREATE DATABASE tok": [], "CREATE TABLE tok.t (a INT, b STRING) STORED AS PARQUET": [],
        "INSERT INTO tok.t VALUES (1, 'x'), (2, 'y')": [], "SELECT * FROM tok.t": [["1", "x"], ["2", "y"]],
    }, spark.log_tail()
    with db.transaction() as tx:
        assert tx.query("SELECT OWNER FROM metastore.TBLS WHERE TBL_NAME='t'") == [("alice",)]
