"""zookeeper: a three-server ensemble serves with one leader; what one server wrote the
others read; losing the leader elects another among the two left, which keep serving, and
the stopped server rejoins as a follower.  Re-runnable alone (molecule verify)."""

import shlex
import time

import pytest

testinfra_hosts = ["zookeeper"]

SERVICE = "hopshive-zookeeper"
CLI = "/usr/share/zookeeper/bin/zkCli.sh -server 127.0.0.1:2181"
ELECTION_SECONDS = 60


@pytest.fixture
def servers(inventory):
    return inventory.nodes("zookeeper")


def mode(node):
    """leader, follower or standalone (srvr), or None while the server does not serve."""
    done = node.host.run("python3 -c " + shlex.quote(
        "import socket; s = socket.create_connection(('127.0.0.1', 2181), 3); s.sendall(b'srvr');"
        "print(b''.join(iter(lambda: s.recv(4096), b'')).decode())"))
    lines = [line for line in done.stdout.splitlines() if line.startswith("Mode: ")]
    return lines[0].split()[1] if done.rc == 0 and lines else None


def modes(nodes):
    return sorted(mode(node) or "down" for node in nodes)


def cli(node, *command):
    """One zkCli.sh command through the server of ``node``; its output."""
    done = node.host.run(f"{CLI} {shlex.join(command)} 2>&1")
    assert done.rc == 0, f"{node.name}: zkCli {command}: {done.stdout}"
    return done.stdout


def test_one_leader_two_followers(servers, eventually):
    def settled():
        assert modes(servers) == ["follower", "follower", "leader"]
    eventually(settled, ELECTION_SECONDS)


def test_what_one_server_writes_the_others_read(servers):
    path, value = f"/molecule-{time.time_ns()}", "written-through-the-first"
    cli(servers[0], "create", path, value)
    assert value in cli(servers[2], "get", path)
    assert value in cli(servers[1], "get", path)


def test_losing_the_leader_elects_another_and_the_server_rejoins(servers, eventually):
    leader = next(node for node in servers if mode(node) == "leader")
    rest = [node for node in servers if node is not leader]
    before = f"/molecule-{time.time_ns()}-before"
    cli(rest[0], "create", before, "kept")
    leader.control("stop", SERVICE)
    try:
        def elected():
            assert modes(rest) == ["follower", "leader"]
        eventually(elected, ELECTION_SECONDS)
        assert "kept" in cli(rest[1], "get", before)
        after = f"/molecule-{time.time_ns()}-after"
        cli(rest[1], "create", after, "written-with-one-server-down")
    finally:
        leader.control("start", SERVICE)

    def rejoined():
        assert mode(leader) == "follower" and modes(servers) == ["follower", "follower", "leader"]
    eventually(rejoined, ELECTION_SECONDS)
    assert "written-with-one-server-down" in cli(leader, "get", after)
