"""server2 as a platform user reaches it: PyHive over SASL PLAIN with the user's e-mail and
password, in a project's database, and beeline; over TLS, verified with the deployment's CA,
when the deployment serves it (support/trust)."""

from __future__ import annotations

from pyhive import hive
from pyhive.hive import get_installed_sasl
from thrift.transport import TSSLSocket
from thrift_sasl import TSaslClientTransport

from hopshive.core.tls import client_context
from tests.support.tls import TRUSTSTORE_PASSWORD

from . import trust


def connect(targets, email: str, password: str, database: str):
    host, port = targets.server2
    ca = trust.ca_file()
    if not ca:
        return hive.connect(host=host, port=port, username=email, password=password, auth="CUSTOM",
                            database=database)
    socket = TSSLSocket.TSSLSocket(host, port, ssl_context=client_context(ca))
    transport = TSaslClientTransport(
        lambda: get_installed_sasl(host=host, sasl_auth="PLAIN", username=email, password=password), "PLAIN", socket)
    return hive.connect(thrift_transport=transport, username=email, database=database)


def jdbc_tail(url_tail: str = "") -> str:
    """A Hive JDBC URL's session settings for beeline: ``url_tail``, plus TLS with the
    deployment's CA when it serves TLS."""
    if not trust.ca_file():
        return url_tail
    return f"{url_tail};ssl=true;sslTrustStore={trust.truststore_file()};trustStorePassword={TRUSTSTORE_PASSWORD}"


def query(conn, sql: str) -> list:
    """The statement's rows (none for a statement without a result set)."""
    cursor = conn.cursor()
    cursor.execute(sql)
    return cursor.fetchall() if cursor.description else []
