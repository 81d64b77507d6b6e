"""WebHDFS in token mode (#24): only a delegation token proves who calls.  Refusals
(anonymous, a bare user.name, forged, expired, cancelled tokens), project isolation with
tokens, the token operations, and real clients carrying tokens: HdfsCLI's TokenClient,
fsspec's ``token=`` and Hadoop's WebHdfsFileSystem inside Spark, fed by a credentials file
in HADOOP_TOKEN_FILE_LOCATION."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from dataclasses import replace

import pytest
import requests
from fsspec.implementations.webhdfs import WebHDFS
from hdfs import HdfsError, TokenClient

from hopshive.core.db import Database
from hopshive.security.secrets import SecretManager, TokenPolicy
from hopshive.security.tokens import WEBHDFS_KIND, Token, credentials_file
from tests.support.namenode import SUPERUSER, NamenodeServer
from tests.support.schemas import reset_schemas
from tests.support.webhdfs import WebHdfs, remote_exception

ALICE, BOB = "p1__alice", "p2__bob"
DENIED = "org.apache.hadoop.security.AccessControlException"
INVALID = "org.apache.hadoop.security.token.SecretManager$InvalidToken"
UNAUTHENTICATED = "java.lang.SecurityException"


@pytest.fixture(scope="module")
def secure(mariadb, tmp_path_factory):
    """A token-mode namenode, a secret manager on its database (the platform's side), and
    tokens for the superuser, alice and bob, each with a private home."""
    database = Database(mariadb.config)
    reset_schemas(database)
    server = NamenodeServer(tmp_path_factory.mktemp("secure-nn"), database.config, security="token").start()
    secrets = SecretManager(database, TokenPolicy(cache_seconds=0))
    tokens = {user: secrets.issue(user, renewer=user).url_string() for user in (SUPERUSER, ALICE, BOB)}
    admin = WebHdfs(server.url, SUPERUSER, token=tokens[SUPERUSER])
    admin.mkdirs("/user", permission="755")
    for user in (ALICE, BOB):
        admin.mkdirs(f"/user/{user}", permission="700")
        admin.chown(f"/user/{user}", user)
    yield server, secrets, tokens
    assert server.stop() == 0, server.log_tail()
    database.close()


def client(secure, user: str, **kwargs) -> WebHdfs:
    server, _, tokens = secure
    return WebHdfs(server.url, user, token=kwargs.pop("token", tokens[user]), **kwargs)


@pytest.mark.parametrize("auth", [{}, {"user.name": "hdfs"}, {"user.name": ALICE}])
def test_no_token_is_refused_with_401(secure, auth):
    response = requests.get(f"{secure[0].url}/webhdfs/v1/", params={"op": "LISTSTATUS", **auth}, timeout=10)
    assert "Authentication required" in remote_exception(response, 401, UNAUTHENTICATED)


def _flip(token: str, field: str) -> str:
    parsed = Token.from_url_string(token)
    raw = bytearray(getattr(parsed, field))
    raw[len(raw) // 2] ^= 0x01
    return replace(parsed, **{field: bytes(raw)}).url_string()


@pytest.mark.parametrize("bad", ["forged-password", "forged-identifier", "garbage", "owner-swapped"])
def test_bad_tokens_are_refused_with_403(secure, bad):
    token = secure[2][ALICE]
    if bad == "forged-password":
        token = _flip(token, "password")
    elif bad == "forged-identifier":
        token = _flip(token, "identifier")
    elif bad == "garbage":
        token = "not-a-token"
    else:   # alice's password on an identifier that names the superuser
        parsed = Token.from_url_string(token)
        token = replace(parsed, identifier=replace(parsed.decoded(), owner=SUPERUSER).to_bytes()).url_string()
    response = client(secure, ALICE, token=token).call("GET", "/", "LISTSTATUS")
    remote_exception(response, 403, INVALID)


def test_expired_and_cancelled_tokens_are_refused(secure, mariadb):
    server, secrets, _ = secure
    short = SecretManager(Database(mariadb.config), TokenPolicy(renew_interval=0.3, cache_seconds=0))
    expired = short.issue(ALICE).url_string()
    cancelled = secrets.issue(ALICE, renewer=ALICE)
    secrets.cancel(cancelled, ALICE)
    time.sleep(0.5)
    for token, words in ((expired, "expired"), (cancelled.url_string(), "cancelled")):
        response = client(secure, ALICE, token=token).call("GET", "/", "LISTSTATUS")
        assert words in remote_exception(response, 403, INVALID)


def test_a_token_speaks_for_its_owner_only(secure):
    alice, bob = client(secure, ALICE), client(secure, BOB)
    alice.write(f"/user/{ALICE}/secret.txt", b"alice only\n")
    assert alice.status(f"/user/{ALICE}/secret.txt")["owner"] == ALICE
    for op, method in (("LISTSTATUS", "GET"), ("GETCONTENTSUMMARY", "GET"), ("MKDIRS", "PUT")):
        remote_exception(bob.call(method, f"/user/{ALICE}/x" if op == "MKDIRS" else f"/user/{ALICE}", op), 403, DENIED)
    remote_exception(bob.call("GET", f"/user/{ALICE}/secret.txt", "OPEN"), 403, DENIED)
    remote_exception(bob.call("DELETE", f"/user/{ALICE}/secret.txt", "DELETE", recursive=True), 403, DENIED)
    # A name beside the token changes nothing; impersonation needs a proxy-user rule.
    response = bob.call("GET", f"/user/{ALICE}", "LISTSTATUS", **{"user.name": SUPERUSER})
    remote_exception(response, 403, DENIED)
    remote_exception(bob.call("GET", "/", "LISTSTATUS", doas=SUPERUSER), 403, DENIED)


def test_renew_and_cancel_as_hadoop_does(secure):
    server, secrets, _ = secure
    token = secrets.issue(ALICE, renewer=ALICE).url_string()
    alice, bob = client(secure, ALICE, token=token), client(secure, BOB)
    assert alice.json("PUT", "/", "RENEWDELEGATIONTOKEN", token=token)["long"] > 0
    remote_exception(bob.call("PUT", "/", "RENEWDELEGATIONTOKEN", token=token), 403, DENIED)
    remote_exception(bob.call("PUT", "/", "CANCELDELEGATIONTOKEN", token=token), 403, DENIED)
    remote_exception(alice.call("GET", "/", "GETDELEGATIONTOKEN"), 403, DENIED)
    assert alice.call("PUT", "/", "CANCELDELEGATIONTOKEN", token=token).status_code == 200
    remote_exception(alice.call("GET", "/", "LISTSTATUS"), 403, INVALID)


def test_hdfscli_token_client(secure):
    server, _, tokens = secure
    hdfscli = TokenClient(server.url, tokens[ALICE])
    hdfscli.write(f"/user/{ALICE}/cli.txt", b"through TokenClient\n", overwrite=True)
    with hdfscli.read(f"/user/{ALICE}/cli.txt") as reader:
        assert reader.read() == b"through TokenClient\n"
    assert hdfscli.status(f"/user/{ALICE}/cli.txt")["owner"] == ALICE
    with pytest.raises(HdfsError):
        TokenClient(server.url, tokens[BOB]).list(f"/user/{ALICE}")


def test_fsspec_with_token(secure):
    server, _, tokens = secure
    fs = WebHDFS("127.0.0.1", port=server.port, token=tokens[ALICE])
    fs.pipe(f"/user/{ALICE}/fsspec.bin", b"\x00\x01" * 1000)
    assert fs.cat(f"/user/{ALICE}/fsspec.bin") == b"\x00\x01" * 1000
    assert fs.info(f"/user/{ALICE}/fsspec.bin")["owner"] == ALICE
    with pytest.raises(PermissionError):
        WebHDFS("127.0.0.1", port=server.port, token=tokens[BOB]).ls(f"/user/{ALICE}")


SPARK_JOB = textwrap.dedent("""
    import sys
    from pyspark.sql import SparkSession
    url = sys.argv[1]
    spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
             .config("spark.sql.sources.ignoreDataLocality", "true").getOrCreate())
    spark.range(100).selectExpr("id", "id * 2 AS twice").write.mode("overwrite").parquet(url)
    print("SUM", spark.read.parquet(url).selectExpr("sum(twice)").first()[0])
""")


def test_spark_uses_the_token_file(secure, tmp_path):
    """Hadoop's WebHdfsFileSystem takes the token for the namenode's address from the UGI's
    credentials (HADOOP_TOKEN_FILE_LOCATION) and sends it as delegation=; the files it
    writes belong to the token's owner, not to the OS user running Spark."""
    server, _, tokens = secure
    token = Token.from_url_string(tokens[ALICE])
    path = tmp_path / "alice.token"
    path.write_bytes(credentials_file({server.address: token.labelled(WEBHDFS_KIND, server.address)}))
    conf = tmp_path / "spark-conf"
    conf.mkdir()
    env = dict(os.environ, HADOOP_TOKEN_FILE_LOCATION=str(path), SPARK_CONF_DIR=str(conf))
    env.pop("HADOOP_USER_NAME", None)
    url = f"webhdfs://{server.address}/user/{ALICE}/spark-table"
    done = subprocess.run([sys.executable, "-c", SPARK_JOB, url], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and "SUM 9900" in done.stdout, done.stderr[-4000:]
    listing = client(secure, ALICE).listing(f"/user/{ALICE}/spark-table")
    assert listing and {entry["owner"] for entry in listing.values()} == {ALICE}

    env.pop("HADOOP_TOKEN_FILE_LOCATION")    # the same job with no token gets nowhere
    done = subprocess.run([sys.executable, "-c", SPARK_JOB, url], env=env, capture_output=True, text=True,
                          timeout=300)
    causes = [line for line in done.stderr.splitlines() if "Exception" in line and not line.strip().startswith("at ")]
    # Hadoop's client reports a 401 as AccessControlException: Unauthorized.
    assert done.returncode != 0 and any("AccessControlException: Unauthorized" in line for line in causes), causes


def dfs(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hopshive.cli.dfs", *args], capture_output=True, text=True,
                          timeout=60, env=dict(os.environ, **(env or {})))


def test_operator_mints_a_token_and_the_shell_uses_it(secure, tmp_path):
    """`hopshive-dfs token` (root on a namenode host) signs through the namenode's database
    account; the shell then proves itself with $HOPSHIVE_TOKEN or the credentials file."""
    server = secure[0]
    client(secure, ALICE).write(f"/user/{ALICE}/secret.txt", b"alice only\n", overwrite=True)
    minted = dfs("--namenode", server.url, "--user", ALICE, "token", "--config", str(server.config_path),
                 "--file", str(tmp_path / "alice.token"))
    assert minted.returncode == 0, minted.stderr
    assert Token.from_url_string(minted.stdout.strip()).decoded().owner == ALICE
    assert (tmp_path / "alice.token").stat().st_mode & 0o777 == 0o600
    listed = dfs("--namenode", server.url, "-ls", f"/user/{ALICE}", env={"HOPSHIVE_TOKEN": minted.stdout.strip()})
    assert listed.returncode == 0 and "secret.txt" in listed.stdout, listed.stderr
    from_file = dfs("--namenode", server.url, "-cat", f"/user/{ALICE}/secret.txt",
                    env={"HADOOP_TOKEN_FILE_LOCATION": str(tmp_path / "alice.token")})
    assert from_file.returncode == 0 and from_file.stdout == "alice only\n", from_file.stderr
    (tmp_path / "empty.token").write_bytes(credentials_file({}))     # no token: only a name to send
    refused = dfs("--namenode", server.url, "--user", SUPERUSER, "-ls", "/",
                  env={"HADOOP_TOKEN_FILE_LOCATION": str(tmp_path / "empty.token")})
    assert refused.returncode == 1 and "Authentication required" in refused.stderr, refused.stderr
