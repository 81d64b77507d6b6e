"""Monitoring of a deployed inventory (roles/monitoring): Prometheus scrapes every target of
the inventory and all of them are up; after each fault the right alerts fire in Prometheus
within their window and reach Alertmanager, and resolve once the fault is undone:

* every cleaner instance stopped: NoCleanerLeader, HopsHiveInstanceDown{job="cleaner"};
* a namenode stopped: HopsHiveInstanceDown{job="namenode"};
* a Galera node killed (the cluster inventory): GaleraClusterTooSmall and MariaDBDown.

Prometheus is the first host of the inventory's `monitoring` group, port 9089
(roles/monitoring), or $HOPSHIVE_PROMETHEUS_URL / $HOPSHIVE_ALERTMANAGER_URL.  An inventory
without a monitoring group skips these tests; an unreachable Prometheus skips them too, or
fails them with HOPSHIVE_E2E_REQUIRED=1.
"""

from __future__ import annotations

import pytest
import requests

from harness.support import services
from harness.support.galera import KILL as KILL_MARIADB
from harness.support.prometheus import ALERTMANAGER_PORT, SCRAPED, api, url, usable
from tests.support.polling import wait_until

FIRING = 180.0              # an alert's 1-minute window, plus scrapes, evaluation and Alertmanager's wait
RESOLVED = 180.0             # a Galera node rejoins (IST) before its size is whole again


@pytest.fixture(scope="module")
def prometheus(targets):
    return usable(targets)


@pytest.fixture(scope="module")
def alertmanager(targets, prometheus):
    return url(targets, "HOPSHIVE_ALERTMANAGER_URL", ALERTMANAGER_PORT)


def down_targets(prometheus: str) -> list[str]:
    """``job instance (error)`` of every active target that is not up."""
    return [f"{t['labels']['job']} {t['labels']['instance']} ({t.get('lastError') or t['health']})"
            for t in api(prometheus, "targets")["activeTargets"] if t["health"] != "up"]


def firing(prometheus: str) -> set[tuple[str, str]]:
    """(alertname, job) of the alerts firing now."""
    return {(a["labels"]["alertname"], a["labels"].get("job", "")) for a in api(prometheus, "alerts")["alerts"]
            if a["state"] == "firing"}


def failed_probes(prometheus: str) -> list[str]:
    """Instances of the HBase Thrift servers blackbox_exporter cannot connect to."""
    return [r["metric"]["instance"] for r in api(prometheus, "query", query='probe_success{job="hbase"}')["result"]
            if r["value"][1] != "1"]


def test_every_target_of_the_inventory_is_up(prometheus):
    jobs = {t["labels"]["job"] for t in api(prometheus, "targets")["activeTargets"]}
    assert {"node", "mysqld", "namenode", "metastore", "cleaner", "server2", "platform"} <= jobs, jobs
    wait_until(lambda: not down_targets(prometheus), SCRAPED,
               lambda _: f"targets not up: {down_targets(prometheus)}")
    if "hbase" in jobs:
        wait_until(lambda: not failed_probes(prometheus), SCRAPED,
                   lambda _: f"HBase Thrift servers refusing connections: {failed_probes(prometheus)}")


@pytest.fixture
def cleaners(prometheus, targets):
    """Every cleaner instance Prometheus scrapes, as services the harness controls; each is
    running again after the test."""
    found = []
    for target in api(prometheus, "targets")["activeTargets"]:
        if target["labels"]["job"] != "cleaner":
            continue
        address, _, port = target["labels"]["instance"].rpartition(":")
        container = targets.containers.get(address) or targets.containers.get(target["labels"].get("host", ""))
        how = services.manager(container)
        if how is None or (container is None and address not in ("localhost", "127.0.0.1", "::1")):
            services.cannot_control(targets, f"the harness cannot stop the cleaner {address}:{port} from here (it "
                                    "must run on this machine or in our cluster containers, as root)")
        found.append(services.cleaner(int(port), how, container))
    assert found, "Prometheus scrapes no cleaner"
    yield found
    for service in found:
        service.start()


def fires_then_resolves(prometheus: str, alertmanager: str, expected: set[tuple[str, str]], fault, undo,
                        what: str) -> None:
    """``fault()``: the ``expected`` (alertname, job) fire within FIRING and reach
    Alertmanager; ``undo()``: they resolve within RESOLVED (``undo`` runs whatever happens)."""
    # An earlier destructive scenario may have left one firing until its next evaluation.
    wait_until(lambda: not expected & firing(prometheus), RESOLVED,
               lambda _: f"firing before {what}: {sorted(firing(prometheus))}")
    try:
        fault()
        wait_until(lambda: expected <= firing(prometheus), FIRING,
                   lambda _: f"firing {FIRING:.0f} s after {what}: {sorted(firing(prometheus))}")
        received = requests.get(f"{alertmanager}/api/v2/alerts", timeout=30).json()
        assert {name for name, _ in expected} <= {a["labels"]["alertname"] for a in received}, received
    finally:
        undo()
    wait_until(lambda: not expected & firing(prometheus), RESOLVED,
               lambda _: f"still firing {RESOLVED:.0f} s after {what} was undone: {sorted(firing(prometheus))}")


@pytest.mark.destructive
def test_stopping_every_cleaner_fires_its_alerts_which_resolve_after(prometheus, alertmanager, cleaners):
    fires_then_resolves(prometheus, alertmanager, {("NoCleanerLeader", ""), ("HopsHiveInstanceDown", "cleaner")},
                        lambda: [service.stop() for service in cleaners],
                        lambda: [service.start() for service in cleaners], "stopping every cleaner")


@pytest.mark.destructive
def test_stopping_a_namenode_fires_instance_down_which_resolves_after(prometheus, alertmanager, targets):
    address = (targets.namenodes[0] if targets.namenodes else targets.authority).rpartition(":")[0]
    container = targets.containers.get(address)
    how = services.manager(container)
    if how is None or (container is None and address not in ("localhost", "127.0.0.1", "::1")):
        services.cannot_control(targets, f"the harness cannot stop the namenode on {address} from here")
    namenode = services.namenode(how, container)
    fires_then_resolves(prometheus, alertmanager, {("HopsHiveInstanceDown", "namenode")}, namenode.stop,
                        namenode.start, f"stopping the namenode on {address}")


@pytest.mark.destructive
def test_killing_a_galera_node_fires_cluster_too_small_which_resolves_after(prometheus, alertmanager, targets):
    """The last database node is killed (the services prefer the first) and started again."""
    address = targets.db_nodes[-1] if len(targets.db_nodes) > 1 else None
    container = targets.containers.get(address or "")
    if container is None or not services.controllable(container):
        services.cannot_control(targets, "needs a Galera cluster of our containers")

    def kill() -> None:
        services.run_on(container, "sh", "-c", KILL_MARIADB)
        if services.manager(container) == "systemd":   # mariadb.service restarts it within 5 s: keep it down
            services.run_on(container, "systemctl", "stop", "mariadb", timeout=120)

    def start() -> None:
        done = services.run_on(container, "service", "mariadb", "start", timeout=600)
        assert done.returncode == 0, f"starting mariadb on {container}: {done.stdout}{done.stderr}"
    fires_then_resolves(prometheus, alertmanager, {("GaleraClusterTooSmall", "mysqld"), ("MariaDBDown", "mysqld")},
                        kill, start, f"kill -9 of the database node {address}")
