"""Whole nodes killed and started again (destructive: ``docker kill``, then ``docker start``,
a power cut and a reboot of one host): a Galera node, a namenode host (namenode,
metastores, cleaner, Spark daemons) and the SQL host (server2, platform), in turn, while
metastore DDL and WebHDFS writes keep going.

Each node comes back by itself, with no deploy and no operator: systemd starts what the
roles enabled, a Galera node rejoins by IST, the namenode and the metastores answer again;
and every write acknowledged before, during or after is there, with the metastore/namespace
invariants holding.  Runs only on our container cluster, whose nodes boot systemd
(inventories/cluster: ./scripts/cluster test).
"""

from __future__ import annotations

import socket
import subprocess
import time

import pytest

from harness.support import identity, metastore as ms, services, webhdfs
from harness.support.galera import cluster_nodes, reopen, wait_synced
from harness.support.workload import Running, Workload, check_acknowledged
from tests.support.hms import database
from tests.support.polling import wait_until

pytestmark = [pytest.mark.destructive, pytest.mark.metastore]
BOOT_DEADLINE = 180.0


def victim(targets, kind: str) -> str:
    """The address of the node of ``kind`` to kill: the last of its group, so the services'
    preferred database node and the harness's own WebHDFS endpoint stay up."""
    if kind == "galera":
        return targets.db_nodes[-1] if targets.db_nodes else ""
    if kind == "namenode":
        return targets.namenodes[-1].rsplit(":", 1)[0] if targets.namenodes else ""
    return targets.group_hosts.get("server2", "")


def booted(container: str) -> bool:
    """systemd has started everything enabled, and no HopsHive unit has failed."""
    state = services.run_on(container, "systemctl", "is-system-running").stdout.strip()
    failed = services.run_on(container, "systemctl", "list-units", "--failed", "--plain", "--no-legend",
                             "hopshive-*", "mariadb*").stdout.strip()
    assert not failed, f"{container}: failed units after the reboot:\n{failed}"
    return state in ("running", "degraded")


def answers(address: str, port: int) -> bool:
    try:
        socket.create_connection((address, port), timeout=2).close()
        return True
    except OSError:
        return False


@pytest.fixture
def hdfs(targets):
    pytest.importorskip("hdfs")
    return identity.hdfs_client(targets.webhdfs_url, targets.user)


@pytest.mark.parametrize("kind", ["galera", "namenode", "sql"])
def test_a_killed_node_comes_back_by_itself(kind, targets, scratch, db, metastores, hdfs):
    nodes = cluster_nodes(targets)
    address = victim(targets, kind)
    container = targets.containers.get(address)
    if container is None or services.manager(container) != "systemd":
        services.cannot_control(targets, f"no {kind} node of ours that boots systemd (got {address or 'none'})")
    name = f"{scratch.prefix}{kind}"
    with ms.client(metastores[0], targets.user) as client:
        client.create_database(database(name, f"{scratch.uri}/{kind}.db"))

    with Running(Workload(metastores, targets.user, name, hdfs, scratch.path)) as load:
        wait_until(lambda: len(load.acked_at) >= 6, 60, lambda _: f"the workload does not start: {load.errors}")
        killed_at = time.monotonic()
        subprocess.run(["docker", "kill", container], check=True, capture_output=True)
        subprocess.run(["docker", "start", container], check=True, capture_output=True)
        wait_until(lambda: booted(container), BOOT_DEADLINE, lambda _: f"{container} does not finish booting")
        if kind == "galera":
            wait_synced(nodes, BOOT_DEADLINE)
        elif kind == "namenode":
            endpoint = next(n for n in targets.namenodes if n.startswith(f"{address}:"))
            wait_until(lambda: webhdfs.healthy(targets.namenode_url(endpoint)), BOOT_DEADLINE,
                       lambda _: f"the namenode on {address} does not answer /health")
            for instance in [m for m in metastores if m[0] == address]:
                ms.wait_healthy(instance, BOOT_DEADLINE)
        else:
            wait_until(lambda: answers(address, 10000), BOOT_DEADLINE, lambda _: f"server2 on {address} does not answer")
        back_at = time.monotonic()
        wait_until(lambda: load.acked_since(back_at) >= 6, 120,
                   lambda _: f"the workload does not go on after {container} came back: {load.errors[-5:]}")

    print(f"\n{kind} node {container}: back by itself {back_at - killed_at:.1f}s after docker kill; "
          f"{len(load.tables)} tables, {len(load.files)} files acknowledged; {len(load.errors)} failed calls")
    reopen(db)
    check_acknowledged(load, metastores[0], hdfs)
    assert ms.violations(db, scratch.uri) == {}
