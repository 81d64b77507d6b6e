"""Deployed service instances, controlled the way the roles run them:
``hopshive-supervisorctl`` on hosts without systemd (roles/install), ``systemctl``
otherwise; on this machine, or inside one of our cluster containers (``docker exec``).
Used by the `destructive` scenarios only."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.support.polling import wait_until

SUPERVISORCTL = "/usr/local/bin/hopshive-supervisorctl"
DEADLINE = 60.0


def cannot_control(targets, reason: str) -> None:
    """A destructive scenario cannot act on its targets: skipped where they are not ours to
    control (another site's inventory, a single host), but a failure against our own
    container cluster when the run must reach its targets (HOPSHIVE_E2E_REQUIRED), so a
    cluster run can never pass by skipping what only a cluster shows."""
    if targets.containers and targets.required:
        pytest.fail(f"{reason} (the inventory names our containers and HOPSHIVE_E2E_REQUIRED is set)",
                    pytrace=False)
    pytest.skip(reason)


def run_on(container: str | None, *command: str, timeout: float = DEADLINE) -> subprocess.CompletedProcess:
    """Run a command on this machine, or inside ``container``."""
    prefix = ["docker", "exec", container] if container else []
    return subprocess.run([*prefix, *command], capture_output=True, text=True, timeout=timeout)


class Service:
    """One supervisord program or systemd unit, here or in ``container``."""

    def __init__(self, manager: str, name: str, container: str | None = None):
        self.manager, self.name, self.container = manager, name, container

    def __repr__(self) -> str:
        return f"{self.container or 'localhost'}:{self.manager}:{self.name}"

    def _run(self, *args: str, check: bool = False) -> subprocess.CompletedProcess:
        command = [SUPERVISORCTL, *args, self.name] if self.manager == "supervisord" \
            else ["systemctl", *args, self.name]
        done = run_on(self.container, *command)
        if check and done.returncode != 0:
            raise AssertionError(f"{' '.join(command)} failed ({done.returncode}): {done.stdout}{done.stderr}")
        return done

    def state(self) -> str:
        if self.manager == "supervisord":
            words = self._run("status").stdout.split()
            return words[1] if len(words) > 1 else "UNKNOWN"
        return self._run("is-active").stdout.strip().upper()

    def pid(self) -> int | None:
        if self.manager == "supervisord":
            out = self._run("pid").stdout.strip()
        else:
            out = self._run("show", "--property=MainPID", "--value").stdout.strip()
        return int(out) if out.isdigit() and int(out) > 0 else None

    def crash(self) -> int:
        """kill -9 of the service's whole process group (master and workers); returns the pid."""
        pid = wait_until(self.pid, DEADLINE, lambda _: f"{self} has no process to kill ({self.state()})")
        if self.container:   # one round trip: a kill meant to land mid-transaction must be quick
            run_on(self.container, "sh", "-c", f'/bin/kill -9 -- "-$(ps -o pgid= -p {pid} | tr -d " ")"')
        else:
            group = os.getpgid(pid)
            if group == os.getpgrp():
                raise AssertionError(f"{self} runs in the harness's own process group; refusing to kill it")
            os.killpg(group, signal.SIGKILL)
        wait_until(lambda: self.pid() != pid, DEADLINE, lambda _: f"{self} still shows pid {pid} after SIGKILL")
        return pid

    def stop(self) -> None:
        """Stop it and keep it stopped (the supervisor restarts a crashed service by itself,
        so this insists until the state stays down)."""
        def stopped() -> bool:
            self._run("stop")
            return self.state() in ("STOPPED", "INACTIVE", "FAILED")
        wait_until(stopped, DEADLINE, lambda _: f"{self} does not stay stopped ({self.state()})")

    def start(self) -> None:
        if self.state() not in ("RUNNING", "ACTIVE", "STARTING", "ACTIVATING"):
            self._run("start")
        wait_until(lambda: self.state() in ("RUNNING", "ACTIVE"), DEADLINE,
                   lambda _: f"{self} does not run ({self.state()})")


def controllable(container: str) -> bool:
    """Whether the harness can run commands in ``container`` (root, docker, the container up)."""
    return os.geteuid() == 0 and bool(shutil.which("docker")) and run_on(container, "true").returncode == 0


LOOPBACK = ("localhost", "127.0.0.1", "::1")


def manager_at(address: str, container: str | None) -> str | None:
    """How the services at ``address`` are run when the harness can control them: in
    ``container`` (one of ours) or on this machine; None for another machine's."""
    if container is None and address not in LOOPBACK:
        return None
    return manager(container)


def manager(container: str | None = None) -> str | None:
    """How services are run on this machine (or in ``container``), or None when the harness
    cannot control them."""
    if os.geteuid() != 0 or (container and not controllable(container)):
        return None
    installed = container or os.path.exists(SUPERVISORCTL)     # (a container says so by failing)
    if installed and run_on(container, SUPERVISORCTL, "pid").returncode == 0:
        return "supervisord"
    if run_on(container, "test", "-d", "/run/systemd/system").returncode == 0:
        return "systemd"
    return None


# The services that hold connections to the database (the roles' program and unit names).
DATABASE_CLIENTS = ("hopshive-namenode", "hopshive-metastore", "hopshive-cleaner", "hopshive-server2",
                    "hopshive-platform")


def running(container: str, how: str) -> list[str]:
    """The HopsHive programs (supervisord) or units (systemd) running in ``container``."""
    if how == "supervisord":
        listed = run_on(container, SUPERVISORCTL, "status").stdout.splitlines()
        return [line.split()[0] for line in listed if "RUNNING" in line.split()[1:2]]
    listed = run_on(container, "systemctl", "list-units", "--type=service", "--state=active", "--plain",
                    "--no-legend", "hopshive-*").stdout.splitlines()
    return [line.split()[0] for line in listed if line.strip()]


def restart_database_clients(containers) -> None:
    """Restart the HopsHive services in ``containers`` that use the database, so they connect
    to their first database node again; the containers in parallel (each restart waits for
    its services to be up).  Spark's daemons, ZooKeeper and the exporters have no database
    pool to move back, and restarting them too would cost minutes of JVM start-ups and a
    fresh Spark master election."""
    def restart(container: str) -> None:
        how = manager(container)
        chosen = [name for name in running(container, how) if name.startswith(DATABASE_CLIENTS)] if how else []
        if not chosen:
            return
        command = [SUPERVISORCTL, "restart"] if how == "supervisord" else ["systemctl", "restart"]
        done = run_on(container, *command, *chosen, timeout=2 * DEADLINE)
        if done.returncode != 0:
            raise AssertionError(f"restarting {chosen} in {container}: {done.stdout}{done.stderr}")

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(restart, containers))


def stop_all(container: str) -> None:
    """Stop every HopsHive service in ``container`` (what restore.yml also does first)."""
    how = manager(container)
    command = {"supervisord": [SUPERVISORCTL, "stop", "all"], "systemd": ["systemctl", "stop", "hopshive-*"]}
    if how:
        done = run_on(container, *command[how], timeout=2 * DEADLINE)
        if done.returncode != 0:
            raise AssertionError(f"stopping the services in {container}: {done.stdout}{done.stderr}")


def namenode(how: str, container: str | None = None) -> Service:
    """The namenode of a host (the same name under both managers, roles/namenode)."""
    return Service(how, "hopshive-namenode", container)


def metastore(port: int, how: str, container: str | None = None) -> Service:
    """The metastore instance on ``port`` (names from roles/metastore)."""
    return Service(how, f"hopshive-metastore-{port}" if how == "supervisord" else f"hopshive-metastore@{port}",
                   container)


def cleaner(port: int, how: str, container: str | None = None) -> Service:
    """The cleaner instance whose health port is ``port`` (names from roles/cleaner)."""
    return Service(how, f"hopshive-cleaner-{port}" if how == "supervisord" else f"hopshive-cleaner@{port}",
                   container)


def spark_daemon(daemon: str, how: str, container: str | None = None) -> Service:
    """A Spark standalone daemon (master, worker or history; names from roles/spark_cluster).
    A worker's executors run in its process group: crashing it takes them down too."""
    return Service(how, f"hopshive-spark-{daemon}" if how == "supervisord" else f"hopshive-spark@{daemon}",
                   container)


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it (e.g. a Python child and the JVM it started)."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                pending += [int(child) for child in task.read_text().split()]
    return found


def connections_to(endpoint: tuple[str, int], pids: list[int]) -> int:
    """Established TCP connections from the processes ``pids`` to ``(host, port)`` (e.g. a
    Spark session's metastore connection), matched by socket inode."""
    host, port = endpoint
    address = socket.inet_aton(socket.gethostbyname(host))[::-1].hex().upper()  # /proc/net/tcp's order
    sockets = set()
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").glob("*"):
            with contextlib.suppress(OSError):
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    sockets.add(target[8:-1])
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(FileNotFoundError), open(table) as handle:
            next(handle)
            for line in handle:
                fields = line.split()
                remote, state, inode = fields[2], fields[3], fields[9]
                remote_address, remote_port = remote.rsplit(":", 1)
                if state == "01" and int(remote_port, 16) == port and inode in sockets \
                        and remote_address.endswith(address):  # IPv4, or IPv4-mapped IPv6
                    count += 1
    return count
