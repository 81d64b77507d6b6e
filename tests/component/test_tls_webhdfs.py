"""WebHDFS over TLS (swebhdfs://, #24 item 4): token-mode namenodes serving https with a
certificate from a private CA, checked by real clients that verify it (requests, HdfsCLI's
TokenClient, fsspec, Hadoop's WebHdfsFileSystem in Spark with a PKCS12 truststore);
redirects and the namenodes' own block traffic between each other use https."""

from __future__ import annotations

import os
import socket
import ssl
import subprocess
import sys

import pytest
import requests
from fsspec.implementations.webhdfs import WebHDFS
from hdfs import HdfsError, TokenClient

from hopshive.core.db import Database
from hopshive.core.tls import VerifyingSession, server_context
from hopshive.security.secrets import SecretManager, TokenPolicy
from hopshive.security.token_files import credentials_for
from hopshive.security.tokens import Token
from tests.component.test_webhdfs_tokens import SPARK_JOB
from tests.support.namenode import SUPERUSER, NamenodeServer
from tests.support.schemas import reset_schemas
from tests.support.tls import make_ca, ssl_client_xml
from tests.support.webhdfs import WebHdfs

ALICE, BOB = "p1__alice", "p2__bob"
BLOCK = 1 << 20


@pytest.fixture(scope="module")
def ca(tmp_path_factory):
    return make_ca(tmp_path_factory.mktemp("ca"))


@pytest.fixture(scope="module")
def pair(mariadb, ca, tmp_path_factory):
    """Two token-mode namenodes over TLS on one database, each file's blocks on both (so a
    write streams its blocks to the peer over https), and tokens for the superuser, alice, bob."""
    database = Database(mariadb.config)
    reset_schemas(database)
    base = tmp_path_factory.mktemp("tls-nn")
    settings = dict(security="token", ca=ca, workers=1, small_file_limit=0, replication=2, block_size=BLOCK)
    servers = [NamenodeServer(base / f"nn{i}", database.config, **settings).start() for i in (1, 2)]
    secrets = SecretManager(database, TokenPolicy(cache_seconds=0))
    tokens = {user: secrets.issue(user, renewer=user).url_string() for user in (SUPERUSER, ALICE, BOB)}
    admin = WebHdfs(servers[0].url, SUPERUSER, token=tokens[SUPERUSER], verify=servers[0].verify)
    admin.mkdirs("/user", permission="755")
    for user in (ALICE, BOB):
        admin.mkdirs(f"/user/{user}", permission="700")
        admin.chown(f"/user/{user}", user)
    yield servers, tokens
    for server in servers:
        assert server.stop() == 0, server.log_tail()
    database.close()


def test_https_is_verified_with_the_deployment_ca(pair, ca):
    server = pair[0][0]
    assert server.url.startswith("https://")
    answer = requests.get(f"{server.url}/webhdfs/v1/", params={"op": "LISTSTATUS", "delegation": pair[1][ALICE]},
                          verify=str(ca.ca_file), timeout=10)
    assert answer.status_code == 200, answer.text
    with pytest.raises(requests.exceptions.SSLError):       # the system's trust store does not know our CA
        requests.get(f"{server.url}/health", timeout=10)
    with pytest.raises(requests.exceptions.ConnectionError):  # plain HTTP gets no answer from a TLS port
        requests.get(f"http://127.0.0.1:{server.port}/health", timeout=10)


def test_tls_1_2_and_later_only(pair, ca):
    """The servers' context refuses anything older than TLS 1.2 (older clients cannot even be
    made on this OpenSSL: its own floor is the same); a TLS 1.2 client is served."""
    assert server_context(ca.server_settings(), "namenode").minimum_version == ssl.TLSVersion.TLSv1_2
    only_1_2 = ssl.create_default_context(cafile=str(ca.ca_file))
    only_1_2.maximum_version = ssl.TLSVersion.TLSv1_2
    with only_1_2.wrap_socket(socket.create_connection(("127.0.0.1", pair[0][0].port), 10),
                              server_hostname="127.0.0.1") as tls:
        assert tls.version() == "TLSv1.2"


def test_redirects_and_peer_blocks_use_https(pair):
    (first, second), tokens = pair
    alice = WebHdfs(first.url, ALICE, token=tokens[ALICE], verify=first.verify)
    created = alice.call("PUT", f"/user/{ALICE}/big.bin", "CREATE", overwrite=True)
    assert created.status_code == 307 and created.headers["Location"].startswith(f"https://{first.address}/")
    data = os.urandom(2 * BLOCK + 4321)
    alice.write(f"/user/{ALICE}/big.bin", data, overwrite=True)
    located = alice.json("GET", f"/user/{ALICE}/big.bin", "GETFILEBLOCKLOCATIONS")["BlockLocations"]["BlockLocation"]
    assert all(set(b["names"]) == {first.address, second.address} for b in located), located
    # The blocks reached the second namenode over https: it serves the file from its own disk.
    reader = WebHdfs(second.url, ALICE, token=tokens[ALICE], verify=second.verify)
    answer = reader.call("GET", f"/user/{ALICE}/big.bin", "OPEN", redirect=True)
    assert answer.status_code == 200 and answer.content == data


def test_hdfscli_and_fsspec_verify_the_server(pair, ca, monkeypatch):
    (server, _), tokens = pair
    session = VerifyingSession(str(ca.ca_file))
    hdfscli = TokenClient(server.url, tokens[ALICE], session=session)
    hdfscli.write(f"/user/{ALICE}/cli.txt", b"over TLS\n", overwrite=True)
    with hdfscli.read(f"/user/{ALICE}/cli.txt") as reader:
        assert reader.read() == b"over TLS\n"
    with pytest.raises(HdfsError):
        TokenClient(server.url, tokens[BOB], session=session).list(f"/user/{ALICE}")
    # fsspec sets its session's verify, which $REQUESTS_CA_BUNDLE overrides: a user of fsspec
    # points that variable at the deployment's CA (or leaves it unset).
    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    fs = WebHDFS("127.0.0.1", port=server.port, token=tokens[ALICE], use_https=True, session_verify=str(ca.ca_file))
    fs.pipe(f"/user/{ALICE}/fsspec.bin", b"\x00\x01" * 50_000)
    assert fs.cat(f"/user/{ALICE}/fsspec.bin") == b"\x00\x01" * 50_000
    with pytest.raises(requests.exceptions.SSLError):
        WebHDFS("127.0.0.1", port=server.port, token=tokens[ALICE], use_https=True).ls(f"/user/{ALICE}")


def test_spark_swebhdfs_with_a_truststore(pair, ca, tmp_path):
    """Hadoop's SWebHdfsFileSystem checks the namenode with the PKCS12 truststore its
    ssl-client.xml names, and sends the token filed for swebhdfs (SWEBHDFS delegation)."""
    (server, _), tokens = pair
    token_file = tmp_path / "alice.token"
    token_file.write_bytes(credentials_for(Token.from_url_string(tokens[ALICE]), [server.address]))
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "ssl-client.xml").write_text(ssl_client_xml(ca))
    env = dict(os.environ, HADOOP_TOKEN_FILE_LOCATION=str(token_file), SPARK_CONF_DIR=str(conf),
               HADOOP_CONF_DIR=str(conf))
    env.pop("HADOOP_USER_NAME", None)
    url = f"swebhdfs://{server.address}/user/{ALICE}/spark-table"
    done = subprocess.run([sys.executable, "-c", SPARK_JOB, url], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and "SUM 9900" in done.stdout, done.stderr[-4000:]
    listing = WebHdfs(server.url, ALICE, token=tokens[ALICE], verify=server.verify).listing(
        f"/user/{ALICE}/spark-table")
    assert listing and {entry["owner"] for entry in listing.values()} == {ALICE}

    (conf / "ssl-client.xml").unlink()      # without the truststore Java does not trust the namenode
    done = subprocess.run([sys.executable, "-c", SPARK_JOB, url], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode != 0 and "PKIX path building failed" in done.stderr, done.stderr[-3000:]
