"""mysql_cluster (Galera): every node runs with the wsrep settings the cleaner and the cluster
rely on and is Synced in a cluster of the group's size; every node holds the same rows (after
the side effect's crash, including the row acknowledged while the first node was down); a write
on the first node is read on the third; a node killed with -9 rejoins and sees the write it
missed.  Re-runnable alone (`molecule verify -s galera`): each run writes rows of its own."""

import time

import pytest

testinfra_hosts = ["mysql_cluster"]

GCOMM_PORT = 4567
IST_PORT = 4568
# side_effect.yml writes this row while the first node is down, then the marker on every node.
ACKNOWLEDGED_NOTE = "written-after-db1-died"
ACKNOWLEDGED_MARKER = "/root/galera-verify-acknowledged"
# The read waits until the node has applied every write the cluster committed before it.
SYNC_WAIT = "SET SESSION wsrep_sync_wait = 1; "
# mysqld_safe first, so it does not start the server again.
KILL_SERVER = """set -e
pid_safe=$(pidof -x mysqld_safe || true)
[ -z "$pid_safe" ] || kill -9 $pid_safe
kill -9 $(pidof mariadbd)"""
REJOIN_SECONDS = 120


@pytest.fixture
def members(inventory):
    """The group's nodes in inventory order (the first one bootstrapped the cluster)."""
    return inventory.nodes("mysql_cluster")


@pytest.fixture
def marks_table(members):
    """The table the checks write to (side_effect.yml too), created through the first node."""
    members[0].sql(
        "CREATE DATABASE IF NOT EXISTS galera_verify;"
        " CREATE TABLE IF NOT EXISTS galera_verify.marks"
        " (id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(64) NOT NULL, node VARCHAR(64) NOT NULL)"
    )


def wsrep_state(node):
    """(cluster size, local state), e.g. (3, 'Synced'); fails while the server does not answer."""
    status = dict(
        node.sql("SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_cluster_size', 'wsrep_local_state_comment')")
    )
    return int(status["wsrep_cluster_size"]), status["wsrep_local_state_comment"]


def assert_synced(node, size):
    state = wsrep_state(node)
    assert state == (size, "Synced"), f"{node.name}: expected (wsrep_cluster_size, state) {(size, 'Synced')}, got {state}"


def write_mark(node, purpose):
    """A new row written through `node`; returns its note (unique to this run)."""
    note = f"verify-{time.time_ns()}-{purpose}"
    node.sql(f"INSERT INTO galera_verify.marks (note, node) VALUES ('{note}', '{node.name}')")
    return note


def test_replication_settings(node, members):
    wsrep_on, gtid_mode, log_slave_updates, binlog_format, cluster_address, node_address, provider_options = node.sql(
        "SELECT @@wsrep_on, @@wsrep_gtid_mode, @@log_slave_updates, @@binlog_format,"
        " @@wsrep_cluster_address, @@wsrep_node_address, @@wsrep_provider_options"
    )[0]
    seen_ist = [option.strip() for option in provider_options.split(";") if "ist.recv_addr" in option]
    assert (
        (wsrep_on, gtid_mode, log_slave_updates, binlog_format) == ("1", "1", "1", "ROW")
        and len(cluster_address.split(",")) == len(members)
        and f"{node_address}:{GCOMM_PORT}" in cluster_address
        and f"ist.recv_addr = {node_address}:{IST_PORT};" in provider_options
    ), (
        f"{node.name}: expected wsrep_on=1 wsrep_gtid_mode=1 log_slave_updates=1 binlog_format=ROW, a cluster"
        f" address listing {len(members)} nodes with this one, and ist.recv_addr = <node address>:{IST_PORT},"
        f" got: {[wsrep_on, gtid_mode, log_slave_updates, binlog_format, cluster_address, node_address]}"
        f" and {seen_ist}"
    )


def test_synced_in_a_cluster_of_the_group_size(node, members):
    assert_synced(node, len(members))


def test_every_node_holds_the_same_rows(members, marks_table):
    rows = {
        member.name: tuple(member.sql(
            SYNC_WAIT + f"SELECT COUNT(*), COALESCE(SUM(note = '{ACKNOWLEDGED_NOTE}'), 0) FROM galera_verify.marks"
        )[0])
        for member in members
    }
    assert len(set(rows.values())) == 1, (
        f"expected the same row counts on every node, got (rows, {ACKNOWLEDGED_NOTE} rows) {rows}"
    )
    # After the crash: a bootstrap from the node that was behind would lose this row on every
    # node alike, which the check above cannot see.
    if members[0].host.file(ACKNOWLEDGED_MARKER).exists:
        assert all(int(acknowledged) >= 1 for _, acknowledged in rows.values()), (
            f"expected the row {ACKNOWLEDGED_NOTE!r}, acknowledged before the crash, on every node,"
            f" got (rows, such rows) {rows}"
        )


def test_write_on_the_first_node_is_read_on_the_third(members, marks_table):
    first, third = members[0], members[2]
    note = write_mark(first, "cross-node")
    read = third.sql(SYNC_WAIT + f"SELECT node FROM galera_verify.marks WHERE note = '{note}'")
    assert read == [[first.name]], f"expected the row written on {first.name}, got {read}"


def test_node_killed_with_sigkill_rejoins_and_sees_the_write_it_missed(members, marks_table, eventually):
    first, second = members[0], members[1]
    second.host.check_output(KILL_SERVER)
    # Commits once the cluster has evicted the dead node (or it is already back).
    missed = write_mark(first, "missed")
    if second.manager != "systemd":
        # What ansible.builtin.service does on a host without systemd: the init script.
        # With systemd, mariadb.service (Restart=on-abnormal) starts it again by itself.
        second.host.check_output("service mariadb start")

    eventually(lambda: assert_synced(second, len(members)), REJOIN_SECONDS)
    caught_up = second.sql(SYNC_WAIT + f"SELECT COUNT(*) FROM galera_verify.marks WHERE note = '{missed}'")
    assert caught_up == [["1"]], f"expected the row written while {second.name} was down, got count {caught_up}"
