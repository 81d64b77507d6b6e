"""The platform API over TLS (#24 item 4), beside a namenode and a metastore that serve TLS
too, all in token mode with certificates from one private CA: the platform provisions
projects over https and SASL-inside-TLS, verifying both; its own clients (`hopshive-platform
login --url https://…`, server2's PlatformAuthenticator, `check`) verify it with the CA."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import requests

from hopshive.core.tls import VerifyingSession
from hopshive.security.secrets import SecretManager
from hopshive.security.tokens import SWEBHDFS_KIND, read_credentials_file
from hopshive.server2.auth import PlatformAuthenticator
from hopshive.server2.exceptions import Server2Error
from tests.component.test_platform import PASSWORD, add_user
from tests.support.platform_fixtures import running_stack
from tests.support.tls import make_ca


@pytest.fixture(scope="module")
def ca(tmp_path_factory):
    return make_ca(tmp_path_factory.mktemp("ca"))


@pytest.fixture(scope="module")
def stack(mariadb, ca, tmp_path_factory):
    yield from running_stack(mariadb, tmp_path_factory.mktemp("tls-stack"), "token", ca=ca)


@pytest.fixture(scope="module")
def project(stack):
    platform = stack["platform"]
    add_user(platform, "tia@example.org")
    created = platform.cli("project", "create", "tls", "--owner", "tia@example.org")
    assert created.returncode == 0, created.stderr + platform.log_tail()
    return "tls"


def test_the_api_serves_https_only(stack, ca):
    platform = stack["platform"]
    assert platform.url.startswith("https://")
    assert requests.get(platform.url + "/health", verify=str(ca.ca_file), timeout=10).status_code == 200
    with pytest.raises(requests.exceptions.SSLError):
        requests.get(platform.url + "/health", timeout=10)
    with pytest.raises(requests.exceptions.ConnectionError):
        requests.get(f"http://127.0.0.1:{platform.port}/health", timeout=10)
    assert platform.cli("check").returncode == 0


def test_provisioning_reaches_the_namenode_and_metastore_over_tls(stack, project):
    """`project create` made the project's directory through the https namenode and its
    database through the TLS metastore."""
    namenode, db = stack["namenode"], stack["db"]
    token = SecretManager(db).issue("hdfs").url_string()
    listed = VerifyingSession(str(namenode.ca.ca_file)).get(
        f"{namenode.url}/webhdfs/v1/Projects/{project}", params={"op": "GETFILESTATUS", "delegation": token},
        timeout=30)
    assert listed.status_code == 200, listed.text
    with db.transaction(readonly=True) as tx:
        assert tx.query("SELECT NAME FROM metastore.DBS WHERE NAME=%s", (project,))


def login(platform, ca_file: str, path) -> subprocess.CompletedProcess:
    """`hopshive-platform login` as a user runs it, verifying with ``ca_file`` ("": the system's
    trust store)."""
    args = ["login", "--url", platform.url, "--email", "tia@example.org", "--password-stdin", "--project", "tls",
            "--namenode", "127.0.0.1:9870", "--file", str(path), "--ca-file", ca_file]
    env = {key: value for key, value in os.environ.items() if key != "HOPSHIVE_CA_FILE"}
    return subprocess.run([sys.executable, "-m", "hopshive.platform.server", *args], input=PASSWORD + "\n",
                          capture_output=True, text=True, timeout=120, env=env)


def test_login_verifies_the_platform(stack, project, ca, tmp_path):
    platform = stack["platform"]
    done = login(platform, str(ca.ca_file), tmp_path / "token")
    assert done.returncode == 0, done.stderr
    kinds = {t.kind for t in read_credentials_file((tmp_path / "token").read_bytes()).values()}
    assert SWEBHDFS_KIND in kinds
    refused = login(platform, "", tmp_path / "token2")           # the system's trust store: refused
    assert refused.returncode == 1 and "CERTIFICATE_VERIFY_FAILED" in refused.stderr, refused.stderr


def test_server2_verifies_the_platform(stack, project, ca):
    platform = stack["platform"]
    identity = PlatformAuthenticator(platform.url, ca_file=str(ca.ca_file)).authenticate("tia@example.org", PASSWORD)
    assert project in identity.projects
    with pytest.raises(Server2Error, match="cannot be reached"):
        PlatformAuthenticator(platform.url).authenticate("tia@example.org", PASSWORD)
