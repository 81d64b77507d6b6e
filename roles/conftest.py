"""Fixtures shared by the molecule scenarios' testinfra tests (roles/*/molecule/*/tests/).

Molecule's testinfra verifier runs pytest in the scenario directory against the scenario's
containers (`host`, one parametrisation per inventory host the module's `testinfra_hosts`
selects).  The containers have no init system, so services run under supervisord.
"""

import json
import shlex
import time
from dataclasses import dataclass

import pytest
import testinfra
import testinfra.utils.ansible_runner

SUPERVISORCTL = "/usr/local/bin/hopshive-supervisorctl"
VENV_BIN = "/opt/hopshive/venv/bin"


@dataclass
class Response:
    status: int
    body: str

    def json(self):
        return json.loads(self.body)


class Node:
    """What the scenarios ask of one container: services, HTTP, SQL, our CLIs."""

    def __init__(self, host):
        self.host = host
        self.name = host.backend.get_hostname()

    def assert_running(self, program):
        status = self.host.run(f"{SUPERVISORCTL} status {shlex.quote(program)}").stdout
        assert "RUNNING" in status, f"{self.name}: expected {program} RUNNING, got: {status!r}"

    def http(self, url):
        """A GET with curl inside the container (the services listen on its loopback)."""
        out = self.host.check_output(shlex.join(["curl", "-sS", "-w", "\n%{http_code}", url]))
        body, _, status = out.rpartition("\n")
        return Response(int(status), body)

    def sql(self, statement):
        """Rows (lists of strings) of `statement` run by root over the local socket."""
        out = self.host.check_output(
            shlex.join(["mariadb", "--batch", "--skip-column-names", "-e", statement])
        )
        return [line.split("\t") for line in out.splitlines()]

    def tool(self, *args):
        """The output of one of our CLIs from the deployed virtualenv; fails on a non-zero exit."""
        return self.host.check_output(shlex.join([f"{VENV_BIN}/{args[0]}", *args[1:]]))

    def variable(self, name):
        """An inventory variable of this host, templated as a play sees it (vault, defaults)."""
        return self.host.ansible("debug", f"var={name}")[name]


class Inventory:
    """The scenario's inventory, for checks that span containers (run once, not per host)."""

    def __init__(self, path):
        self.path = path

    def node(self, name):
        return Node(testinfra.get_host(f"ansible://{name}", ansible_inventory=self.path))

    def nodes(self, group):
        """The group's hosts sorted by name (the scenarios name them in the plays' order)."""
        names = testinfra.utils.ansible_runner.AnsibleRunner.get_runner(self.path).get_hosts(group)
        return [self.node(name) for name in names]


@pytest.fixture
def node(host):
    return Node(host)


@pytest.fixture
def inventory(pytestconfig):
    return Inventory(pytestconfig.option.ansible_inventory)


def _eventually(check, seconds, interval=1.0):
    """`check()`'s result once it passes (returns without an AssertionError), tried every
    `interval` seconds; after `seconds`, its last AssertionError (the last state seen)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return check()
        except AssertionError:
            if time.monotonic() >= deadline:
                raise
        time.sleep(interval)


@pytest.fixture
def eventually():
    """A bounded wait for checks that pass only after a while: `eventually(check, seconds)`."""
    return _eventually
