"""Monitoring of a deployed inventory (roles/monitoring): Prometheus scrapes every target of
the inventory and all of them are up; after each fault the right alerts fire in Prometheus
within their window and reach Alertmanager, and resolve once the fault is undone.  The faults
share one window (they are independent, and each alert waits out its own `for`):

* every cleaner instance stopped: NoCleanerLeader, HopsHiveInstanceDown{job="cleaner"};
* a namenode stopped: HopsHiveInstanceDown{job="namenode"};
* a Galera node killed (the cluster inventory): GaleraClusterTooSmall and MariaDBDown;
* a disk filled (a test disk of its own, harness/support/disks.py, mounted on the first
  database node): DiskAlmostFull for its mount point.

Prometheus is the first host of the inventory's `monitoring` group, port 9089
(roles/monitoring), or $HOPSHIVE_PROMETHEUS_URL / $HOPSHIVE_ALERTMANAGER_URL.  An inventory
without a monitoring group skips these tests; an unreachable Prometheus skips them too, or
fails them with HOPSHIVE_E2E_REQUIRED=1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pytest
import requests

from harness.support import disks, services
from harness.support.galera import KILL as KILL_MARIADB
from harness.support.prometheus import ALERTMANAGER_PORT, SCRAPED, api, url, usable
from tests.support.polling import wait_until

FIRING = 240.0              # the disk alert's 2-minute window, plus scrapes, evaluation and Alertmanager's wait
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


def alert_key(labels: dict) -> tuple[str, str]:
    """(alertname, where): where is a disk alert's mount point, any other alert's job."""
    return labels["alertname"], labels.get("mountpoint") or labels.get("job", "")


def firing(prometheus: str) -> set[tuple[str, str]]:
    """alert_key of the alerts firing now."""
    return {alert_key(a["labels"]) for a in api(prometheus, "alerts")["alerts"] if a["state"] == "firing"}


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


def uncontrollable(targets, reason: str) -> None:
    """A fault the harness cannot cause here: left out of the window (single host, another
    site's inventory), or the scenario fails on our own cluster (services.cannot_control)."""
    if targets.containers and targets.required:
        services.cannot_control(targets, reason)
    print(f"left out: {reason}")


@dataclass
class Fault:
    """What is done, the alert_key of the alerts it must fire, and how it is undone."""
    what: str
    alerts: set[tuple[str, str]]
    cause: Callable[[], object]
    undo: Callable[[], object]


def cleaners_stopped(prometheus: str, targets) -> Fault | None:
    """Every cleaner instance Prometheus scrapes, stopped."""
    found = []
    for target in api(prometheus, "targets")["activeTargets"]:
        if target["labels"]["job"] != "cleaner":
            continue
        address, _, port = target["labels"]["instance"].rpartition(":")
        container = targets.containers.get(address) or targets.containers.get(target["labels"].get("host", ""))
        how = services.manager_at(address, container)
        if how is None:
            return uncontrollable(targets, f"the harness cannot stop the cleaner {address}:{port} from here (it "
                                  "must run on this machine or in our cluster containers, as root)")
        found.append(services.cleaner(int(port), how, container))
    assert found, "Prometheus scrapes no cleaner"
    return Fault("stopping every cleaner", {("NoCleanerLeader", ""), ("HopsHiveInstanceDown", "cleaner")},
                 lambda: [service.stop() for service in found], lambda: [service.start() for service in found])


def namenode_stopped(targets) -> Fault | None:
    """The first namenode, stopped."""
    address = (targets.namenodes[0] if targets.namenodes else targets.authority).rpartition(":")[0]
    container = targets.containers.get(address)
    how = services.manager_at(address, container)
    if how is None:
        return uncontrollable(targets, f"the harness cannot stop the namenode on {address} from here")
    namenode = services.namenode(how, container)
    return Fault(f"stopping the namenode on {address}", {("HopsHiveInstanceDown", "namenode")},
                 namenode.stop, namenode.start)


def galera_node_killed(targets) -> Fault | None:
    """The last database node (the services prefer the first), killed, and kept down."""
    address = targets.db_nodes[-1] if len(targets.db_nodes) > 1 else None
    container = targets.containers.get(address or "")
    if container is None or not services.controllable(container):
        return uncontrollable(targets, "killing a Galera node needs a Galera cluster of our containers")

    def kill() -> None:
        services.run_on(container, "sh", "-c", KILL_MARIADB)
        if services.manager(container) == "systemd":   # mariadb.service restarts it within 5 s: keep it down
            services.run_on(container, "systemctl", "stop", "mariadb", timeout=120)

    def start() -> None:
        done = services.run_on(container, "service", "mariadb", "start", timeout=600)
        assert done.returncode == 0, f"starting mariadb on {container}: {done.stdout}{done.stderr}"
    return Fault(f"kill -9 of the database node {address}",
                 {("GaleraClusterTooSmall", "mysqld"), ("MariaDBDown", "mysqld")}, kill, start)


def disk_filled(targets) -> Fault | None:
    """A test disk of its own on the first database node (this machine on a single host),
    filled to all but a few MiB; undone by taking the disk away (its series ends)."""
    address = targets.db_nodes[0] if targets.db_nodes else targets.authority.rpartition(":")[0]
    container = targets.containers.get(address)
    problem = disks.usable()
    if problem is None and services.manager_at(address, container) is None:
        problem = f"the harness cannot mount a disk on {address} from here"
    if problem:
        return uncontrollable(targets, problem)
    disk = disks.TestDisk(container)

    def fill() -> None:
        disk.attach()
        disk.fill()
    return Fault(f"filling the test disk {disk!r}", {("DiskAlmostFull", disks.MOUNTPOINT)}, fill, disk.detach)


@pytest.mark.destructive
def test_each_fault_fires_its_alerts_which_resolve_once_undone(prometheus, alertmanager, targets):
    """The faults share one window (each alert's own ``for``, 1 or 2 minutes): every expected alert
    fires within FIRING of the faults and reaches Alertmanager, and resolves within RESOLVED
    of their undoing.  A missing alert is reported with the fault that should have fired it."""
    faults = [fault for fault in (cleaners_stopped(prometheus, targets), namenode_stopped(targets),
                                  galera_node_killed(targets), disk_filled(targets)) if fault]
    if not faults:
        pytest.skip("the harness can cause none of the faults here")
    expected = set().union(*(fault.alerts for fault in faults))

    def missing(alerts: set) -> list[str]:
        return [f"{fault.what}: {sorted(fault.alerts - alerts)}" for fault in faults if fault.alerts - alerts]

    # An earlier destructive scenario may have left one firing until its next evaluation.
    wait_until(lambda: not expected & firing(prometheus), RESOLVED,
               lambda _: f"firing before the faults: {sorted(expected & firing(prometheus))}")
    caused = []
    try:
        for fault in faults:
            caused.append(fault)
            fault.cause()
        wait_until(lambda: expected <= firing(prometheus), FIRING,
                   lambda _: f"not firing {FIRING:.0f} s after the faults: {missing(firing(prometheus))}")
        received = {alert_key(a["labels"]) for a in requests.get(f"{alertmanager}/api/v2/alerts", timeout=30).json()}
        assert not missing(received), f"not in Alertmanager: {missing(received)}"
    finally:
        for fault in reversed(caused):
            fault.undo()
    wait_until(lambda: not expected & firing(prometheus), RESOLVED,
               lambda _: f"still firing {RESOLVED:.0f} s after the faults were undone: "
                         f"{sorted(expected & firing(prometheus))}")
