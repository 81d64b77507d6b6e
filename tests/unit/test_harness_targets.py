"""The harness reads its targets from the repository's own inventories: the single host's
defaults, and the container cluster's addresses and accounts."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.support import targets

pytestmark = pytest.mark.unit
INVENTORIES = Path(__file__).resolve().parents[2] / "inventories"


def test_local_inventory_points_at_this_host():
    found = targets.load(str(INVENTORIES / "local"), environ={})
    assert found.webhdfs_url == "https://127.0.0.1:9870"
    assert found.metastores == (("127.0.0.1", 9083), ("127.0.0.1", 9084))
    assert found.hbase_metastores == (("127.0.0.1", 9085),)
    assert found.server2 == ("127.0.0.1", 10000)
    assert found.platform_url == "https://127.0.0.1:8181"
    assert found.platform_admin == targets.DEFAULT_PLATFORM_ADMIN
    assert found.containers == {} and found.nameservice is None
    # TLS is on in every inventory: the CA the deployment made for this one.
    assert found.tls and found.ca_file == str(INVENTORIES / "local" / ".tls" / "ca.pem")
    assert found.uri("/x") == "swebhdfs://127.0.0.1:9870/x"
    assert found.group_hosts["cleaner"] == found.group_hosts["metastore"] == "127.0.0.1"


def test_cluster_inventory_names_every_node():
    found = targets.load(str(INVENTORIES / "cluster"), environ={})
    assert len(found.db_nodes) == 3 and len(found.namenodes) == 2 and found.nameservice == "hopshive"
    assert {host for host, _ in found.metastores} == {address.split(":")[0] for address in found.namenodes}
    assert found.hbase_metastores == tuple((host, 9085) for host, _ in found.metastores)
    sql1 = found.server2[0]
    assert found.server2 == (sql1, 10000) and found.platform_url == f"https://{sql1}:8181"
    assert found.tls and found.webhdfs_url.startswith("https://") and found.uri("/x").startswith("swebhdfs://")
    assert found.ca_file == str(INVENTORIES / "cluster" / ".tls" / "ca.pem")
    assert found.containers[sql1] == "hopshive-sql1"
    assert found.containers[found.group_hosts["cleaner"]] == "hopshive-nn1"   # its tier's first host
    assert found.db["password"] == "dev-only-cluster-admin-pw"


def test_environment_overrides_the_inventory():
    found = targets.load(str(INVENTORIES / "cluster"), environ={
        "HOPSHIVE_SERVER2": "10.0.0.5:10001", "HOPSHIVE_PLATFORM_URL": "http://10.0.0.5:8181/",
        "HOPSHIVE_PLATFORM_ADMIN": "root@site.example", "HOPSHIVE_PLATFORM_ADMIN_PASSWORD": "s3cret"})
    assert found.server2 == ("10.0.0.5", 10001)
    assert found.platform_url == "http://10.0.0.5:8181"
    assert found.platform_admin == ("root@site.example", "s3cret")


def test_tls_from_the_environment():
    found = targets.load(None, environ={"HOPSHIVE_TLS": "1", "HOPSHIVE_CA_FILE": "/site/ca.pem"})
    assert found.webhdfs_url == "https://127.0.0.1:9870" and found.platform_url == "https://127.0.0.1:8181"
    assert found.ca_file == "/site/ca.pem" and found.scheme == "swebhdfs"


def test_spark_cluster_hosts_come_from_their_groups():
    # Empty on the single host (the Spark cluster scenarios skip there); the container cluster
    # and the multinode example name their masters and workers.
    assert targets.load(str(INVENTORIES / "local"), environ={}).spark_masters == ()
    cluster = targets.load(str(INVENTORIES / "cluster"), environ={})
    assert cluster.spark_masters == cluster.spark_workers == ("172.30.80.21", "172.30.80.22")
    found = targets.load(str(INVENTORIES / "multinode"), environ={})
    assert found.spark_masters == found.spark_workers == ("192.0.2.21", "192.0.2.22")
    assert found.spark_master_port == 7077
