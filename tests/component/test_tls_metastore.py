"""The metastore's Thrift port with TLS (#24 item 4): Python clients speak SASL with a token
inside TLS and verify the server with the deployment's CA; a connection without TLS is
refused unless it is SASL-authenticated at qop auth-conf (every message encrypted and signed)
and metastore.tls_plain_sasl allows it, because Hive 2.3's client (Spark's) cannot do SASL and
SSL together -- shown here with that client itself: with SASL on it ignores its SSL settings
(and gets in with hadoop.rpc.protection=privacy only), with SASL off it speaks TLS with a
truststore."""

from __future__ import annotations

import pytest
from thrift.Thrift import TApplicationException
from thrift.transport.TTransport import TTransportException

from hopshive.metastore.probe import probe
from hopshive.metastore.thrift.server import TLS_REFUSAL
from hopshive.security.digest_md5 import AUTH, AUTH_INT
from hopshive.security.secrets import SecretManager
from tests.support.metastore import thrift_client
from tests.support.metastore_fixtures import running
from tests.support.tls import TRUSTSTORE_PASSWORD, make_ca
from tests.support.token_clients import JavaMetastoreClient

pytestmark = pytest.mark.metastore


@pytest.fixture(scope="module")
def ca(tmp_path_factory):
    return make_ca(tmp_path_factory.mktemp("ca"))


def tls_settings(ca, **extra) -> dict:
    return dict(ca.server_settings(), tls_ca_file=str(ca.ca_file), **extra)


@pytest.fixture
def metastore(db, ca):
    yield from running(db, security="token", **tls_settings(ca))


@pytest.fixture
def token(db):
    issued = SecretManager(db).issue("carol")
    return issued.identifier, issued.password


def test_sasl_with_a_token_inside_tls(metastore, ca, token):
    with thrift_client(metastore.port, user=None, token=token, ca_file=str(ca.ca_file)) as hms:
        assert "default" in hms.get_all_databases()


def test_the_server_is_verified(metastore, token):
    with pytest.raises(TTransportException):    # the system's trust store does not know our CA
        with thrift_client(metastore.port, user=None, token=token, ca_file=""):
            pass


def test_without_tls_only_encrypted_sasl_is_let_in(metastore, token):
    with pytest.raises(TApplicationException, match="requires TLS"):
        with thrift_client(metastore.port, user="carol") as hms:
            hms.get_all_databases()
    for qop in (AUTH, AUTH_INT):
        with pytest.raises(TApplicationException, match=r"requires TLS .*hadoop.rpc.protection=privacy"):
            with thrift_client(metastore.port, user=None, token=token, qop=qop) as hms:
                hms.get_all_databases()
    with thrift_client(metastore.port, user=None, token=token) as hms:  # auth-conf: tls_plain_sasl (the default)
        assert "default" in hms.get_all_databases()


def test_tls_only(db, ca, token):
    server = next(running(db, security="token", **tls_settings(ca, tls_plain_sasl=False)))
    try:
        with pytest.raises(TApplicationException, match="requires TLS"):
            with thrift_client(server.port, user=None, token=token) as hms:
                hms.get_all_databases()
        with thrift_client(server.port, user=None, token=token, ca_file=str(ca.ca_file)) as hms:
            assert "default" in hms.get_all_databases()
    finally:
        server.stop()


def test_the_probe_verifies_too(metastore, ca):
    assert probe("127.0.0.1", metastore.port, ca_file=str(ca.ca_file)) == 0
    assert probe("127.0.0.1", metastore.port, tls=True) == 1          # not our CA: unhealthy, as clients see it
    assert probe("127.0.0.1", metastore.port) == 1                    # plain: told TLS is required
    assert TLS_REFUSAL.startswith("This metastore requires TLS")


# ------------------------------------------------------------------ Hive 2.3's own client
@pytest.fixture(scope="module")
def java_client(tmp_path_factory):
    return JavaMetastoreClient(tmp_path_factory.mktemp("hms-java"))


def truststore(ca) -> tuple[str, ...]:
    return (f"-Dhopshive.truststore={ca.truststore}", f"-Dhopshive.truststore.password={TRUSTSTORE_PASSWORD}")


def test_hive_2_3_with_sasl_ignores_ssl(db, ca, java_client):
    """SASL and the SSL settings together: Hive 2.3 connects without TLS (its open() takes
    the SASL branch), so it works where tls_plain_sasl lets it in, at privacy, and nowhere
    else."""
    secrets = SecretManager(db)
    token_file = java_client.token_file(secrets.issue("carol"), "carol")
    for plain_sasl, protection, works in ((True, "privacy", True), (True, "authentication", False),
                                          (True, "integrity", False), (False, "privacy", False)):
        server = next(running(db, security="token", **tls_settings(ca, tls_plain_sasl=plain_sasl)))
        try:
            code, lines = java_client.run(server.port, token_file, "databases",
                                          jvm_options=(*truststore(ca), f"-Dhopshive.protection={protection}"))
        finally:
            server.stop()
        assert (code == 0) is works, (protection, lines)
        if works:
            assert lines[0].startswith("databases [") and "default" in lines[0], lines


def test_hive_2_3_ssl_without_sasl(db, ca, java_client):
    """Hive 2.3's SSL (hive.metastore.use.SSL with a PKCS12 truststore) reaches the TLS port;
    the metastore then wants a token, which only SASL carries: refused in token mode (set_ugi is
    answered with the refusal, which Hive's client only logs, and the connection closed), served
    in simple mode.  Without the truststore's CA the handshake fails."""
    server = next(running(db, security="token", **tls_settings(ca)))
    try:
        code, lines = java_client.run(server.port, None, "databases", jvm_options=("-Dhopshive.sasl=false",
                                                                                  *truststore(ca)))
        # Hive's open() logs set_ugi's refusal and goes on; the metastore has closed the connection.
        assert code == 1 and lines[0].startswith("ERROR "), lines
    finally:
        server.stop()
    server = next(running(db, security="simple", **tls_settings(ca)))
    try:
        code, lines = java_client.run(server.port, None, "databases", jvm_options=("-Dhopshive.sasl=false",
                                                                                  *truststore(ca)))
        assert code == 0 and "default" in lines[0], lines
        other = make_ca(java_client.work / "other-ca")
        code, lines = java_client.run(server.port, None, "databases", jvm_options=(
            "-Dhopshive.sasl=false", f"-Dhopshive.truststore={other.truststore}",
            f"-Dhopshive.truststore.password={TRUSTSTORE_PASSWORD}"))
        assert code == 1, lines
    finally:
        server.stop()
