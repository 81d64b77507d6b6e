"""The platform provisioning projects on a namenode and a metastore in token mode (#24): it
proves who it acts as with tokens it mints itself -- the namespace superuser's on WebHDFS
(``delegation=``), the Hive admin's over SASL DIGEST-MD5 on the metastore -- where a name
alone is refused.  The test looks at the namespace as an operator would, with tokens."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import requests
from thrift.Thrift import TApplicationException
from thrift.transport.TTransport import TTransportException

from hopshive.platform.exceptions import ProvisioningFailed
from hopshive.platform.provision import Metastore, Namespace, ServiceTokens
from hopshive.security.secrets import SecretManager, TokenPolicy
from tests.component.test_platform import PASSWORD, Status, add_user, check_project_lifecycle
from tests.support.mariadb import _free_port
from tests.support.metastore import thrift_client
from tests.support.platform_fixtures import secure_platform_stack  # noqa: F401 (fixture)
from tests.support.polling import wait_until
from tests.support.server2 import ADMIN, API

pytestmark = pytest.mark.platform
SERVICE_TOKEN_MS = 600 * 1000       # the fixture's platform.service_token_lifetime


@pytest.fixture(scope="module")
def stack(secure_platform_stack):
    return secure_platform_stack


@pytest.fixture(scope="module")
def operator(stack):
    """A secret manager on the stack's database: an operator's ``hopshive-dfs token``."""
    return SecretManager(stack["db"], TokenPolicy(cache_seconds=0))


@pytest.fixture(scope="module")
def status(stack, operator) -> Status:
    """GETFILESTATUS as a user, proven with a token (one per user)."""
    url, tokens = stack["namenode"].url, {}

    def look(path: str, user: str = "hdfs") -> requests.Response:
        if user not in tokens:
            tokens[user] = operator.issue(user).url_string()
        return requests.get(f"{url}/webhdfs/v1{path}", params={"op": "GETFILESTATUS", "delegation": tokens[user]},
                            timeout=30)
    return look


def service_tokens(db) -> dict[str, int]:
    """How many tokens the platform minted for itself, per account (its lifetime tells them
    from the operator's)."""
    with db.transaction() as tx:
        rows = tx.query("SELECT owner, COUNT(*) FROM hops.hdfs_delegation_tokens WHERE max_date - issue_date = %s"
                        " GROUP BY owner", (SERVICE_TOKEN_MS,))
    return {owner: count for owner, count in rows}


def test_names_alone_are_refused(stack):
    """The stack really is in token mode: what provisioning sent before is refused."""
    refused = requests.get(f"{stack['namenode'].url}/webhdfs/v1/", params={"op": "LISTSTATUS", "user.name": "hdfs"},
                           timeout=30)
    assert refused.status_code == 401, refused.text
    with pytest.raises(TApplicationException, match="accepts only SASL"):
        with thrift_client(stack["metastore"].port, user="hive") as client:
            client.get_database("default")


def test_project_lifecycle_with_tokens(stack, status):
    """create, add-member, remove-member, delete through the CLI (a process per command, so
    each mints its own two tokens), checked as the operator sees the namespace."""
    check_project_lifecycle(stack["platform"], stack["db"], status, name="vault")
    assert set(service_tokens(stack["db"])) == {"hdfs", "hive"}


def test_the_api_mints_once_and_reuses_its_tokens(stack, status):
    """Through the running API: one superuser and one Hive admin token serve every step of a
    project's life (cached, not minted per call), and they live the configured 10 minutes."""
    platform, db = stack["platform"], stack["db"]
    add_user(platform, "kim@example.org")
    add_user(platform, "lou@example.org")
    admin = platform.session(*ADMIN)
    before = service_tokens(db)
    made = admin.post(platform.url + API + "/admin/projects", json={"name": "ledger", "owner": "kim@example.org"},
                      timeout=60)
    assert made.status_code == 201, made.text + platform.log_tail()
    assert status("/user/hive/warehouse/ledger.db").json()["FileStatus"]["owner"] == "ledger__kim"
    joined = admin.post(platform.url + API + "/admin/projects/ledger/members", json={"email": "lou@example.org"},
                        timeout=60)
    assert joined.status_code == 200, joined.text
    assert status("/user/ledger__lou").json()["FileStatus"]["owner"] == "ledger__lou"
    left = admin.delete(platform.url + API + "/admin/projects/ledger/members/lou@example.org", timeout=60)
    assert left.status_code == 200, left.text
    assert status("/user/ledger__lou").status_code == 404
    gone = admin.delete(platform.url + API + "/admin/projects/ledger", timeout=60)
    assert gone.status_code == 200, gone.text
    assert [status(path).status_code for path in ("/Projects/ledger", "/user/hive/warehouse/ledger.db",
                                                 "/user/ledger__kim")] == [404, 404, 404]
    after = service_tokens(db)
    assert {user: after.get(user, 0) - before.get(user, 0) for user in ("hdfs", "hive")} == {"hdfs": 1, "hive": 1}


def test_a_cancelled_service_token_is_replaced(stack, operator):
    """A service token cancelled behind the platform's back (its owner may) is refused by
    the namenode and the metastore; provisioning then mints another and goes on."""
    namenode, metastore = stack["namenode"], stack["metastore"]
    tokens = ServiceTokens(SecretManager(stack["db"], TokenPolicy(cache_seconds=0)), 600)
    namespace = Namespace(namenode.url, "hdfs", tokens)
    hive = Metastore("127.0.0.1", metastore.port, "hive", tokens)
    namespace.ensure_directory("/Projects", "755")
    assert hive.database_location("default").endswith("/user/hive/warehouse")
    old_hdfs, old_hive = tokens.get("hdfs"), tokens.get("hive")
    operator.cancel(old_hdfs, "hdfs")
    operator.cancel(old_hive, "hive")

    def namenode_refuses() -> bool:     # the namenode may believe a cancelled token for cache_seconds
        return requests.get(f"{namenode.url}/webhdfs/v1/", params={"op": "LISTSTATUS", "delegation":
                                                                   old_hdfs.url_string()}, timeout=30).status_code == 403

    def metastore_refuses() -> bool:
        try:
            with thrift_client(metastore.port, user=None, token=(old_hive.identifier, old_hive.password)) as client:
                client.get_database("default")
        except TTransportException:
            return True
        return False
    wait_until(namenode_refuses, 30, lambda _: "the namenode still believes a cancelled token")
    wait_until(metastore_refuses, 30, lambda _: "the metastore still believes a cancelled token")
    namespace.ensure_directory("/Projects", "755")
    assert hive.database_location("default").endswith("/user/hive/warehouse")
    assert tokens.get("hdfs") != old_hdfs and tokens.get("hive") != old_hive


def test_service_tokens_are_re_minted_half_way(stack):
    """The same token until half its lifetime has passed, a new one after; each lives exactly
    its lifetime, has no renewer and is for the account asked for."""
    secrets = SecretManager(stack["db"])
    tokens = ServiceTokens(secrets, 4)
    first = tokens.get("hdfs")
    assert tokens.get("hdfs") == first and tokens.get("hive") != first
    identifier = secrets.verify(first)
    assert (identifier.owner, identifier.renewer, identifier.max_date - identifier.issue_date) == ("hdfs", "", 4000)
    wait_until(lambda: tokens.get("hdfs") != first, 10, lambda _: "the token was not re-minted after half its life")
    assert secrets.verify(tokens.get("hdfs")).owner == "hdfs"
    with pytest.raises(ValueError, match="lifetime must be more than 0 and at most max_lifetime"):
        secrets.issue("hdfs", lifetime=8 * 86400)


def test_provisioning_moves_past_an_instance_that_cannot_be_reached(stack):
    """Several namenodes and metastore hosts (a cluster's platform is given them all): one that
    cannot be reached (restarting, lost) is passed over, and the calls after go straight to
    the one that answered; when none can be reached, the error names each."""
    tokens = ServiceTokens(SecretManager(stack["db"]), 600)
    down = f"http://127.0.0.1:{_free_port()}"
    namespace = Namespace(f"{down},{stack['namenode'].url}", "hdfs", tokens, timeout=5)
    namespace.ensure_directory("/Projects", "755")
    assert namespace.namenodes.instances[namespace.namenodes.first] == stack["namenode"].url
    port = stack["metastore"].port
    hive = Metastore(["127.0.0.2", "127.0.0.1"], port, "hive", tokens, timeout=5)    # nothing on 127.0.0.2
    assert hive.database_location("default").endswith("/user/hive/warehouse")
    assert hive.metastores.instances[hive.metastores.first] == "127.0.0.1"
    with pytest.raises(ProvisioningFailed, match=f"the namenode at {down} cannot be reached.*; the namenode at "
                       f"http://127.0.0.1:\\d+ cannot be reached"):
        Namespace([down, f"http://127.0.0.1:{_free_port()}"], "hdfs", tokens, timeout=5).ensure_directory("/", "755")
    with pytest.raises(ValueError, match="no address in ' , '"):
        Namespace(" , ", "hdfs", tokens)


def test_unreachable_services_and_bad_settings_are_told_clearly(stack):
    tokens = ServiceTokens(SecretManager(stack["db"]), 600)
    port = _free_port()
    with pytest.raises(ProvisioningFailed, match=f"the namenode at http://127.0.0.1:{port} cannot be reached"):
        Namespace(f"http://127.0.0.1:{port}", "hdfs", tokens, timeout=5).ensure_directory("/Projects", "755")
    with pytest.raises(ProvisioningFailed, match=f"the metastore at 127.0.0.1:{port} cannot be reached"):
        Metastore("127.0.0.1", port, "hive", tokens, timeout=5).database_location("default")
    with pytest.raises(ValueError, match="service_token_lifetime must be more than 0"):
        ServiceTokens(SecretManager(stack["db"]), 0)
    config = stack["platform"].config_path
    for value, words in (("0", "must be more than 0 and at most security.max_lifetime"),
                         ("999999999", "at most security.max_lifetime (604800 s)"),
                         ("soon", "must be a number of seconds, not 'soon'")):
        checked = subprocess.run([sys.executable, "-m", "hopshive.platform.server", "--config", str(config),
                                  "check-config"], capture_output=True, text=True, timeout=60,
                                 env=dict(os.environ, HOPSHIVE_PLATFORM__SERVICE_TOKEN_LIFETIME=value))
        assert checked.returncode == 2 and words in checked.stderr, (value, checked.stderr)


@pytest.mark.server2
@pytest.mark.spark
def test_server2_engines_act_with_their_users_token(stack, status):
    """server2 in token mode on services that believe only tokens: the engine carries the
    token the platform issued to the member's login (a file in the engine's own directory,
    0600), its files belong to the project user, and the token file goes when the engine
    stops."""
    import tempfile
    from pathlib import Path

    from pyhive import hive

    from tests.support.server2 import Server2Process

    platform = stack["platform"]
    add_user(platform, "sara@example.org")
    assert platform.cli("project", "create", "sigma", "--owner", "sara@example.org").returncode == 0
    work = Path(tempfile.mkdtemp(prefix="s2-"))     # short: engine sockets live there (AF_UNIX paths)
    server = Server2Process(stack["base"] / "server2", platform.url, stack["metastore"].port,
                            stack["namenode"].address, work_dir=str(work)).start()
    try:
        with hive.connect(host="127.0.0.1", port=server.port, username="sara@example.org", password=PASSWORD,
                          auth="CUSTOM", database="sigma") as conn:
            cursor = conn.cursor()
            cursor.execute("CREATE TABLE t (id INT) STORED AS PARQUET")
            cursor.execute("INSERT INTO t VALUES (1), (2)")
            cursor.execute("SELECT current_user(), SUM(id) FROM t")
            assert cursor.fetchall() == [("sigma__sara", 3)]
            token_files = list(work.glob("*/token"))
            assert len(token_files) == 1 and token_files[0].stat().st_mode & 0o777 == 0o600
        table = status("/user/hive/warehouse/sigma.db/t", "sigma__sara")
        assert table.status_code == 200 and table.json()["FileStatus"]["owner"] == "sigma__sara", table.text
    finally:
        assert server.stop(60) == 0, server.log_tail()
    assert not list(work.glob("*/token"))
