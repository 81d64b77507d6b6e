"""cleaner: both instances (health ports 9190 and 9191) run and answer
/health, one of them leads (as `hopshive-cleaner status` shows an operator: no flags, root's
PATH), the leader removes metadata orphaned straight in MariaDB, and stopping the leader
hands the lease to the other instance."""

import json
import shlex

import pytest

testinfra_hosts = ["cleaner"]

PORTS = [9190, 9191]
WAIT_SECONDS = 20


def cleaner_cli(node, *args):
    """hopshive-cleaner as an operator runs it (the name on root's PATH); fails on a non-zero exit."""
    return node.host.check_output(shlex.join(["hopshive-cleaner", *args]))


def leader(node, eventually):
    """The instance holding the lease, once one does (`status` exits 1 while none does)."""
    status = eventually(lambda: cleaner_cli(node, "status", "--json"), seconds=WAIT_SECONDS)
    return json.loads(status)["leader"]


def service(node, instance):
    """The service of an instance named <host>:<port>."""
    return node.service("hopshive-cleaner", instance.rpartition(":")[2])


@pytest.mark.parametrize("port", PORTS)
def test_instance_runs_and_answers_health(node, port):
    node.assert_serving(node.service("hopshive-cleaner", port), f"http://127.0.0.1:{port}/health")


@pytest.mark.parametrize("port", PORTS)
def test_operator_health_command_answers(node, port):
    cleaner_cli(node, "health", "--config", f"/etc/hopshive/cleaner-{port}.yml")


def test_one_instance_leads(node, eventually):
    instances = [f"{node.name}:{port}" for port in PORTS]
    current = leader(node, eventually)
    assert current in instances, f"expected one of {instances} to lead, got {current}"


def test_leader_removes_orphaned_column_descriptor(node, eventually):
    # Written behind the metastore's back: the descriptor's only storage descriptor deleted.
    [[descriptor]] = node.sql(
        "INSERT INTO metastore.CDS () VALUES (); SET @cd = LAST_INSERT_ID(); "
        "INSERT INTO metastore.SDS (CD_ID, LOCATION) VALUES (@cd, 'molecule-orphan'); "
        "DELETE FROM metastore.SDS WHERE CD_ID = @cd; SELECT @cd")

    def removed():
        count = node.sql(f"SELECT COUNT(*) FROM metastore.CDS WHERE CD_ID = {descriptor}")
        assert count == [["0"]], f"expected column descriptor {descriptor} removed, got count {count}"

    eventually(removed, seconds=WAIT_SECONDS)


def test_stopping_the_leader_hands_the_lease_over(node, eventually):
    stopped = leader(node, eventually)
    node.control("stop", service(node, stopped))
    try:
        successor = leader(node, eventually)
    finally:
        node.control("start", service(node, stopped))
    assert successor != stopped, f"expected a new leader after stopping {stopped}, got {successor}"
