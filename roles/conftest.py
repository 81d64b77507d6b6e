"""Fixtures shared by the molecule scenarios' testinfra tests (roles/*/molecule/*/tests/).

Molecule's testinfra verifier runs pytest in the scenario directory against the scenario's
containers (`host`, one parametrisation per inventory host the module's `testinfra_hosts`
selects).  The containers boot systemd as PID 1, as real hosts do (install's `supervisor`
scenario boots none, so there services run under the install role's supervisord); the checks
control services through whichever manager the container has.
"""

import contextlib
import functools
import json
import shlex
import time
from dataclasses import dataclass
from typing import NamedTuple

import pytest
import testinfra
import testinfra.utils.ansible_runner
import yaml

SUPERVISORCTL = "/usr/local/bin/hopshive-supervisorctl"
VENV_BIN = "/opt/hopshive/venv/bin"
PLATFORM_CONFIG = "/etc/hopshive/platform.yml"
CA_FILE = "/etc/hopshive/tls/ca.pem"           # the deployment's CA (hopshive_tls_ca_file)
NAMENODE = "https://127.0.0.1:9870"            # TLS is on in every inventory (hopshive_tls)


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

    @functools.cached_property
    def manager(self):
        """'systemd' when the container booted it (the roles then installed units), otherwise
        'supervisord' (the install role's, on hosts with no init)."""
        return "systemd" if self.host.file("/run/systemd/system").is_directory else "supervisord"

    def service(self, name, instance=None):
        """What the host's manager calls a service: the roles name an instance's supervisord
        program `<name>-<instance>` and its systemd unit `<name>@<instance>`."""
        if instance is None:
            return name
        return f"{name}@{instance}" if self.manager == "systemd" else f"{name}-{instance}"

    def control(self, action, service):
        """`systemctl ACTION SERVICE` or `hopshive-supervisorctl ACTION SERVICE` (start, stop,
        restart); fails loudly on a non-zero exit."""
        manager = ["systemctl"] if self.manager == "systemd" else [SUPERVISORCTL]
        self.host.check_output(shlex.join([*manager, action, service]))

    def pid(self, service):
        """The main process id of a running service, as its manager reports it."""
        if self.manager == "systemd":
            pid = self.host.check_output(shlex.join(["systemctl", "show", "--property=MainPID", "--value", service]))
        else:
            pid = self.host.check_output(shlex.join([SUPERVISORCTL, "pid", service]))
        assert pid.strip().isdigit() and int(pid) > 0, f"{self.name}: {service} has no process (pid {pid!r})"
        return pid.strip()

    def assert_running(self, service):
        # Both managers' status commands exit non-zero for a stopped service: read the output.
        if self.manager == "systemd":
            status = self.host.run(shlex.join(["systemctl", "is-active", service])).stdout.strip()
            expected = "active"
        else:
            status = self.host.run(shlex.join([SUPERVISORCTL, "status", service])).stdout
            status, expected = ("RUNNING" if "RUNNING" in status else status), "RUNNING"
        assert status == expected, f"{self.name}: expected {service} {expected}, got: {status!r}"

    def assert_serving(self, service, health_url):
        """`service` running under the host's manager and its `health_url` (/health) answering
        200: the first check of every scenario whose service has a /health endpoint."""
        self.assert_running(service)
        response = self.http(health_url)
        assert response.status == 200, f"{self.name}: expected 200 from {health_url}, got {response}"

    def http(self, url, method="GET", form=None):
        """One request with curl inside the container (the services listen on its loopback),
        an https one verified with the deployment's CA; `form` is sent URL-encoded, as a
        browser posts a login form."""
        command = ["curl", "-sS", "-X", method, "-w", "\n%{http_code}", url]
        if url.startswith("https:"):
            command += ["--cacert", CA_FILE]
        for name, value in (form or {}).items():
            command += ["--data-urlencode", f"{name}={value}"]
        out = self.host.check_output(shlex.join(command))
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

    def webhdfs_status(self, path, user="hdfs"):
        """GETFILESTATUS of ``path`` as ``user``, proven by a token minted on the host the way
        an operator gets one (``hopshive-dfs token``): the namenode believes nothing else."""
        token = self.tool("hopshive-dfs", "--user", user, "token").strip()
        return self.http(f"{NAMENODE}/webhdfs/v1{path}?op=GETFILESTATUS&delegation={token}")

    def effective_config(self, program, path):
        """The configuration `program` runs with when given `path`: its `--check-config`
        output (YAML, defaults merged in, the database password masked)."""
        return yaml.safe_load(self.tool(program, "--check-config", "--config", path))

    @contextlib.contextmanager
    def platform_project(self, name, owner):
        """A platform project made with the operator CLI for the `with` block and deleted after
        it; one an interrupted run left behind is deleted first, so a check can run again."""
        cli = [f"{VENV_BIN}/hopshive-platform", "--config", PLATFORM_CONFIG, "project"]
        self.host.run(shlex.join([*cli, "delete", name]))  # fails when there is none: fine
        self.host.check_output(shlex.join([*cli, "create", name, "--owner", owner]))
        try:
            yield
        finally:
            self.host.check_output(shlex.join([*cli, "delete", name]))

    def variable(self, name):
        """An inventory variable of this host, templated as a play sees it (vault, defaults)."""
        return self.host.ansible("debug", f"var={name}")[name]


class Inventory:
    """The scenario's inventory, for checks that span containers (run once, not per host)."""

    def __init__(self, path):
        self.path = path

    def node(self, name):
        # A scenario whose hosts' ansible_host is their network address (the ensemble's, the
        # cluster's) names the container in ansible_docker_host, which testinfra does not read.
        variables = testinfra.utils.ansible_runner.AnsibleRunner.get_runner(self.path).get_variables(name)
        container = variables.get("ansible_docker_host")
        url = f"docker://{container}" if container else f"ansible://{name}"
        return Node(testinfra.get_host(url, ansible_inventory=self.path))

    def nodes(self, group):
        """The group's hosts sorted by name (the scenarios name them in the plays' order)."""
        names = testinfra.utils.ansible_runner.AnsibleRunner.get_runner(self.path).get_hosts(group)
        return [self.node(name) for name in names]


@pytest.fixture
def node(host):
    return Node(host)


class PlatformAdmin(NamedTuple):
    email: str
    password: str


@pytest.fixture
def platform_admin(node):
    """The first platform administrator as the inventory defines it (platform_admin_email and
    platform_admin_password, which takes vault_hopshive_platform_admin_password when set), so
    the checks log in with what this deployment set, never a password of their own."""
    return PlatformAdmin(node.variable("platform_admin_email"), node.variable("platform_admin_password"))


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
