"""The database nodes of a Galera cluster of our containers: each one's state as it reports
it, a server killed with SIGKILL and started again, and waiting until all are Synced."""

from __future__ import annotations

from dataclasses import dataclass

import pymysql

from tests.support.polling import wait_until

from . import services

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


def cluster_nodes(targets) -> list[Node]:
    """Every database node, when they are a Galera cluster of our containers that the harness
    controls (else the scenario cannot run: services.cannot_control)."""
    addresses = targets.db_nodes
    if len(addresses) < 3 or any(address not in targets.containers for address in addresses) \
            or not all(services.controllable(targets.containers[address]) for address in addresses):
        services.cannot_control(targets, f"the database nodes {addresses} are not a Galera cluster of our containers "
                                "that the harness controls (inventories/cluster, harness as root)")
    settings = {k: v for k, v in targets.db.items() if k != "unix_socket"}
    return [Node(address, targets.containers[address], settings) for address in addresses]
