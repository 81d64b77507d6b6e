"""metastore: both instances (Thrift ports 9083 and 9084) run, answer
get_database('default') and count it at /metrics (Thrift port + 100), read their own
/etc/hopshive/metastore-<port>.yml, the metastore schema is this release's, and a change of
configuration restarts both through the role's rolling-restart handler."""

import json
import subprocess

import pytest

testinfra_hosts = ["metastore"]

PORTS = [9083, 9084]


def probe(node, port):
    """get_database('default') through Thrift, authenticated by a token of the Hive admin
    minted on the host (the metastore believes nothing else); fails unless it answers."""
    node.tool("hopshive-dfs", "--user", "hive", "token", "--file", "/root/.hopshive-molecule-token")
    node.tool("python", "-m", "hopshive.metastore.probe", "--host", "127.0.0.1", "--port", str(port),
              "--token-file", "/root/.hopshive-molecule-token")


def apply_metastore_role(inventory, node, tmp_path, **extra_vars):
    """The metastore role on `node` as a deploy runs it (handlers included), with `extra_vars`."""
    playbook = tmp_path / "metastore.yml"
    playbook.write_text(json.dumps([{"name": "Apply the metastore role", "hosts": "metastore",
                                     "gather_facts": True, "roles": ["metastore"]}]))
    run = subprocess.run(
        ["ansible-playbook", "-i", inventory.path, "--limit", node.name,
         "--extra-vars", json.dumps(extra_vars), str(playbook)],
        capture_output=True, text=True, check=False)
    assert run.returncode == 0, (
        f"expected the metastore role to apply, got exit {run.returncode}:\n{run.stdout}{run.stderr}")


@pytest.mark.parametrize("port", PORTS)
def test_instance_runs(node, port):
    node.assert_running(node.service("hopshive-metastore", port))


@pytest.mark.parametrize("port", PORTS)
def test_instance_answers_through_thrift(node, port):
    probe(node, port)


@pytest.mark.parametrize("port", PORTS)
def test_metrics_count_get_database_calls(node, port):
    probe(node, port)
    response = node.http(f"http://127.0.0.1:{port + 100}/metrics")
    series = ['hopshive_metastore_calls_total{method="get_database"}',
              "hopshive_metastore_call_seconds_bucket"]
    assert response.status == 200 and all(name in response.body for name in series), (
        f"expected 200 with {series} at port {port + 100}, got {response.status}: {response.body[:600]}")


def test_metastore_schema_is_this_release(node):
    node.tool("hopshive-schematool", "--config", "/etc/hopshive/schematool.yml",
              "validate", "--component", "metastore")


@pytest.mark.parametrize("port", PORTS)
def test_instance_reads_its_own_configuration(node, port):
    config = node.effective_config("hopshive-metastore", f"/etc/hopshive/metastore-{port}.yml")
    metastore = config["metastore"]
    actual = {
        "port": metastore["port"],
        "metrics_port": metastore["metrics_port"],
        "database user": config["database"]["user"],
        "superusers": config["namespace"]["superusers"],
        "storage_authorization": metastore["storage_authorization"],
        "admin_users": metastore["admin_users"],
        "security": config["security"]["mode"],
        "warehouse": metastore["warehouse"],
    }
    expected = {
        "port": port,
        "metrics_port": port + 100,
        "database user": "hops_metastore",
        # The Hive admin is no namespace superuser (1a956e6; the old verify.yml still expected hive).
        "superusers": ["hdfs", "root"],
        "storage_authorization": True,
        "admin_users": ["hive"],
        "security": "simple",       # until the inventories' clients carry tokens (issue 24)
        "warehouse": "webhdfs://127.0.0.1:9870/user/hive/warehouse",
    }
    assert actual == expected, f"effective configuration: {config}"


def test_configuration_change_restarts_every_instance(node, inventory, tmp_path):
    before = {port: node.pid(node.service("hopshive-metastore", port)) for port in PORTS}
    try:
        apply_metastore_role(inventory, node, tmp_path, metastore_read_timeout=599)
        after = {port: node.pid(node.service("hopshive-metastore", port)) for port in PORTS}
    finally:
        apply_metastore_role(inventory, node, tmp_path)
    assert not set(before.values()) & set(after.values()), (
        f"expected new process ids, got before {before}, after {after}")
