"""Database node failures on a Galera cluster (destructive: kills database servers).

* kill -9 of the node the services prefer (the first of the group) in the middle of a
  workload of metastore DDL (tables and partitions, each with its directory) and WebHDFS
  file writes: the workload carries on through the other nodes after Galera's suspect
  timeout, every acknowledged write is there, and the node, started again, rejoins Synced
  with the writes it missed;
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
from dataclasses import dataclass, field
from pathlib import Path

import pymysql
import pytest

from harness.support import identity, metastore as ms, services
from tests.support.hms import database, partition, table
from tests.support.polling import wait_until

pytestmark = [pytest.mark.destructive, pytest.mark.metastore]
REPOSITORY = Path(__file__).resolve().parents[1]
PARTITIONS = 3
KILL = "pid=$(pidof -x mysqld_safe) && kill -9 $pid; kill -9 $(pidof mariadbd)"


@dataclass(frozen=True)
class Node:
    """One Galera node: its address and the container it runs in."""
    address: str
    container: str
    settings: dict

    def kill(self) -> None:
        """SIGKILL the server (mysqld_safe first, so that it does not respawn it)."""
        services.run_on(self.container, "sh", "-c", KILL)

    def start(self) -> None:
        done = services.run_on(self.container, "service", "mariadb", "start", timeout=600)
        assert done.returncode == 0, f"starting mariadb on {self.container}: {done.stdout}{done.stderr}"

    def state(self) -> tuple[int, str] | None:
        """(cluster size, local state) as this node reports them, or None when it does not answer."""
        try:
            connection = pymysql.connect(**{**self.settings, "host": self.address}, connect_timeout=2)
        except pymysql.MySQLError:
            return None
        with connection, connection.cursor() as cursor:
            cursor.execute("SHOW STATUS WHERE Variable_name IN ('wsrep_cluster_size', 'wsrep_local_state_comment')")
            found = dict(cursor.fetchall())
        return int(found.get("wsrep_cluster_size", 0)), found.get("wsrep_local_state_comment", "")

    def count(self, sql: str, *args) -> int:
        """A count read on this node after it has applied every earlier write of the cluster."""
        with pymysql.connect(**{**self.settings, "host": self.address}) as connection, connection.cursor() as cursor:
            cursor.execute("SET SESSION wsrep_sync_wait = 1")
            cursor.execute(sql, args)
            return cursor.fetchone()[0]


def reopen(connection) -> None:
    """Reconnect the harness's own session connection if its node died under it."""
    try:
        connection.ping()
    except pymysql.MySQLError:
        connection.connect()


def wait_synced(nodes: list[Node], deadline: float = 180.0) -> None:
    expected = (len(nodes), "Synced")
    wait_until(lambda: all(node.state() == expected for node in nodes), deadline,
               lambda _: f"not every node is {expected}: {[(n.address, n.state()) for n in nodes]}")


@pytest.fixture(scope="module")
def nodes(targets) -> list[Node]:
    addresses = targets.db_nodes
    if len(addresses) < 3 or any(address not in targets.containers for address in addresses) \
            or not all(services.controllable(targets.containers[address]) for address in addresses):
        services.cannot_control(targets, f"the database nodes {addresses} are not a Galera cluster of our containers "
                    "that the harness controls (inventories/cluster, harness as root)")
    settings = {k: v for k, v in targets.db.items() if k != "unix_socket"}
    return [Node(address, targets.containers[address], settings) for address in addresses]


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


@dataclass
class Workload:
    """Metastore DDL and WebHDFS writes in a loop, recording what was acknowledged and when."""
    metastores: list
    user: str
    database: str
    hdfs: object
    path: str
    tables: dict = field(default_factory=dict)      # table name -> partitions acknowledged
    files: dict = field(default_factory=dict)       # path -> content, acknowledged writes
    acked_at: list = field(default_factory=list)    # monotonic time of every acknowledgement
    errors: list = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def _ack(self) -> None:
        self.acked_at.append(time.monotonic())

    def step(self, i: int) -> None:
        instance = self.metastores[i % len(self.metastores)]
        name = f"t{i}"
        try:
            with ms.client(instance, self.user, timeout=60) as client:
                created = table(self.database, name, parts=("p int",), owner=self.user)
                client.create_table(created)
                self.tables[name] = 0
                self._ack()
                client.add_partitions([partition(created, [str(p)]) for p in range(PARTITIONS)])
                self.tables[name] = PARTITIONS
                self._ack()
        except Exception as exc:  # noqa: BLE001 -- unacknowledged work may fail while a node dies
            self.errors.append(f"{name}: {type(exc).__name__}: {str(exc)[:200]}")
        content = f"file {i}\n".encode() * 10
        try:
            self.hdfs.write(f"{self.path}/f{i}", content, overwrite=False)
            self.files[f"{self.path}/f{i}"] = content
            self._ack()
        except Exception as exc:  # noqa: BLE001
            self.errors.append(f"f{i}: {type(exc).__name__}: {str(exc)[:200]}")

    def run(self) -> None:
        i = 0
        while not self.stop.is_set():
            self.step(i)
            i += 1

    def acked_since(self, moment: float) -> int:
        return sum(1 for t in self.acked_at if t > moment)


def check_acknowledged(load: Workload, metastore: tuple, hdfs) -> None:
    """Every acknowledged table has its partitions, every acknowledged file its bytes."""
    with ms.client(metastore, load.user) as client:
        for name, partitions in load.tables.items():
            assert len(client.get_partition_names(load.database, name, -1)) >= partitions, name
    for path, content in load.files.items():
        with hdfs.read(path) as reader:
            assert reader.read() == content, path


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
    assert victim.state() is None
    check_acknowledged(load, metastores[-1], hdfs)
    missed = survivor.count("SELECT COUNT(*) FROM metastore.TBLS t JOIN metastore.DBS d ON d.DB_ID = t.DB_ID "
                            "WHERE d.NAME = %s", name)
    assert missed >= len(load.tables)

    victim.start()
    wait_synced(nodes)
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
