"""Database node failures on a Galera cluster (destructive: kills database servers).

* kill -9 of the node the services prefer (the first of the group) in the middle of a
  workload of metastore DDL (tables and partitions, each with its directory) and WebHDFS
  file writes: the workload carries on through the other nodes after Galera's suspect
  timeout, every acknowledged write is there, and the node, started again (by systemd
  itself, where it runs), rejoins Synced with the writes it missed;
* every node killed at once (a power cut): a deploy brings the cluster back from the most
  advanced node without a manual step, with every acknowledged write, and the services
  answer again by themselves.

After each: the metastore/namespace invariants.  Runs only where the database nodes are our
containers (inventories/cluster: ./scripts/cluster test).
"""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import pytest

from harness.support import identity, metastore as ms, services
from harness.support.galera import Node, cluster_nodes, reopen, wait_synced
from harness.support.workload import Workload, check_acknowledged
from tests.support.hms import database
from tests.support.polling import wait_until

pytestmark = [pytest.mark.destructive, pytest.mark.metastore]
REPOSITORY = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def nodes(targets) -> list[Node]:
    return cluster_nodes(targets)


@pytest.fixture
def restore(nodes, db, metastores, targets):
    """Every node running and Synced again after the test, and the deployment as it was: the
    services that use the database, which stay on the node they failed over to, restarted so
    that they use their first database node again (other scenarios lock rows on it and read
    its processlist); the harness's own connection reopened."""
    yield
    for node in nodes:
        if node.state() is None:
            node.start()
    wait_synced(nodes)
    reopen(db)
    services.restart_database_clients(set(targets.containers.values()))
    for instance in metastores:
        ms.wait_healthy(instance)


@pytest.fixture
def hdfs(targets):
    pytest.importorskip("hdfs")
    return identity.hdfs_client(targets.webhdfs_url, targets.user)


def test_a_killed_node_stalls_the_workload_only_for_the_suspect_timeout(
        nodes, restore, scratch, db, metastores, targets, hdfs):
    victim, survivor = nodes[0], nodes[1]
    name = f"{scratch.prefix}gk"
    with ms.client(metastores[0], targets.user) as client:
        client.create_database(database(name, f"{scratch.uri}/gk.db"))
    load = Workload(metastores, targets.user, name, hdfs, scratch.path)
    worker = threading.Thread(target=load.run)
    worker.start()
    try:
        wait_until(lambda: len(load.acked_at) >= 6, 60, lambda _: f"the workload does not start: {load.errors}")
        killed_at = time.monotonic()
        victim.kill()
        wait_until(lambda: load.acked_since(killed_at) >= 10, 120,
                   lambda _: f"the workload stopped after the kill of {victim.address}: {load.errors[-5:]}")
    finally:
        load.stop.set()
        worker.join(120)
    after = [t for t in load.acked_at if t > killed_at]
    gaps = [b - a for a, b in zip([killed_at] + after, after)]
    print(f"\nGalera failover: longest pause {max(gaps):.2f}s after kill -9 of {victim.address}; "
          f"{len(load.tables)} tables, {len(load.files)} files acknowledged; {len(load.errors)} failed calls")
    back_by_itself = services.manager(victim.container) == "systemd"   # mariadb.service restarts a killed server
    if not back_by_itself:
        assert victim.state() is None
    check_acknowledged(load, metastores[-1], hdfs)
    missed = survivor.count("SELECT COUNT(*) FROM metastore.TBLS t JOIN metastore.DBS d ON d.DB_ID = t.DB_ID "
                            "WHERE d.NAME = %s", name)
    assert missed >= len(load.tables)

    if not back_by_itself:
        victim.start()
    wait_synced(nodes)                  # the restarted node rejoins by IST, with the writes it missed
    assert victim.count("SELECT COUNT(*) FROM metastore.TBLS t JOIN metastore.DBS d ON d.DB_ID = t.DB_ID "
                        "WHERE d.NAME = %s", name) == missed
    reopen(db)
    assert ms.violations(db, scratch.uri) == {}


@pytest.mark.timeout(1800)  # the recovery deploy alone may take 900 s
def test_the_cluster_comes_back_after_every_node_died(nodes, restore, scratch, db, metastores, targets, hdfs,
                                                      request):
    name = f"{scratch.prefix}gall"
    with ms.client(metastores[0], targets.user) as client:
        client.create_database(database(name, f"{scratch.uri}/gall.db"))
    load = Workload(metastores, targets.user, name, hdfs, scratch.path)
    for i in range(6):
        load.step(i)
    assert not load.errors

    for node in nodes:
        node.kill()
    wait_until(lambda: all(node.state() is None for node in nodes), 30,
               lambda _: f"nodes still answer: {[(n.address, n.state()) for n in nodes]}")
    inventory = request.config.getoption("--inventory")
    deploy = subprocess.run([str(REPOSITORY / "scripts" / "deploy"), "-i", inventory, "--tags", "mysql_cluster"],
                            capture_output=True, text=True, timeout=900)
    assert deploy.returncode == 0, deploy.stdout[-3000:] + deploy.stderr[-2000:]
    wait_synced(nodes)
    reopen(db)
    for instance in metastores:
        ms.wait_healthy(instance, deadline=120)
    check_acknowledged(load, metastores[0], hdfs)
    load.step(100)                      # and the services write again
    assert not load.errors
    assert ms.violations(db, scratch.uri) == {}
