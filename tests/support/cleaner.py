"""Running hopshive-cleaner against the private MariaDB: in-process (a thread) or as a
process that a test may kill."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from hopshive.cleaner.service import DEFAULTS, CleanerService
from hopshive.core.config import load_config
from hopshive.core.db import Database
from hopshive.metastore.fsck import find_orphans
from tests.support.polling import wait_until

ROLE_DEFAULTS = Path(__file__).resolve().parents[2] / "roles" / "mysql_cluster" / "defaults" / "main.yml"
ACCOUNT = "hops_cleaner"


def role_grants(account: str = ACCOUNT) -> dict[str, str]:
    """The account's grants as the mysql_cluster role gives them (object -> privileges)."""
    users = yaml.safe_load(ROLE_DEFAULTS.read_text())["mysql_cluster_users"]
    return next(user["priv"] for user in users if user["name"] == account)


def least_privilege(db: Database, database: dict, password: str = "cleaner-test-pw") -> dict:
    """Create the cleaner's account on the private MariaDB with exactly the role's grants
    (the schemas exist: table-level grants need their tables); returns the `database`
    section the cleaner then runs with."""
    with db.transaction() as tx:
        for host in ("localhost", "127.0.0.1"):
            tx.execute(f"CREATE USER IF NOT EXISTS '{ACCOUNT}'@'{host}' IDENTIFIED BY %s", (password,))
            tx.execute(f"REVOKE ALL PRIVILEGES, GRANT OPTION FROM '{ACCOUNT}'@'{host}'")
            for target, privileges in role_grants().items():
                tx.execute(f"GRANT {privileges} ON {target} TO '{ACCOUNT}'@'{host}'")
    return dict(database, user=ACCOUNT, password=password)


FAST = {"lease_seconds": 3.0, "renew_seconds": 0.3, "lease_margin_seconds": 1.0, "heartbeat_seconds": 0.5,
        "position_save_seconds": 1.0, "stop_grace_seconds": 10.0}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cleaner_config(database: dict, tmp_path: Path, instance: str, **cleaner) -> dict:
    """A fast-leasing configuration on ``database`` (give it ``least_privilege``'s section
    to run as the deployed account)."""
    config = load_config(DEFAULTS, environ={})
    config["database"] = dict(database)
    config["cleaner"].update(FAST, instance=instance, listen_port=free_port(), **cleaner)
    config["namespace"]["data_dir"] = str(tmp_path / f"cleaner-{instance}")
    config["log_level"] = "debug"
    return config


class InProcess:
    """A CleanerService running in a thread of the test process."""

    def __init__(self, config: dict):
        self.service = CleanerService(config)
        self.thread = threading.Thread(target=self.service.run, name="test-cleaner", daemon=True)

    def start(self) -> "InProcess":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.service.stopping.set()
        self.thread.join(30)
        assert not self.thread.is_alive(), "the cleaner did not stop"


class CleanerProcess:
    """`python -m hopshive.cleaner.cli run` with its own config file and log."""

    def __init__(self, config: dict, base: Path):
        self.config = config
        base.mkdir(parents=True, exist_ok=True)
        self.config_path = base / f"cleaner-{config['cleaner']['instance']}.yml"
        self.config_path.write_text(yaml.safe_dump(config))
        self.log_path = base / f"cleaner-{config['cleaner']['instance']}.log"
        self.process: subprocess.Popen | None = None

    @property
    def owner(self) -> str:
        return self.config["cleaner"]["instance"]

    def start(self) -> "CleanerProcess":
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        self.process = subprocess.Popen([sys.executable, "-m", "hopshive.cleaner.cli", "run", "--config",
                                         str(self.config_path)], stdout=subprocess.DEVNULL,
                                        stderr=open(self.log_path, "ab"), env=env)
        return self

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def terminate(self) -> int:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                return self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                raise
        return self.process.returncode

    def log_tail(self, size: int = 3000) -> str:
        return self.log_path.read_text(errors="replace")[-size:]


def lease_holder(db: Database, name: str = "cleaner") -> str | None:
    """The instance holding the unexpired lease, if any."""
    row = db.run(lambda tx: tx.query_one("SELECT OWNER FROM metastore.CLEANER_LEASE WHERE NAME=%s"
                                         " AND EXPIRES > NOW(3)", (name,)))
    return row[0] if row else None


def binlog_position(db: Database):
    """The server's binlog position now (after the caller's last commit)."""
    from hopshive.cleaner.positions import server_position
    return db.run(server_position)


def reached(db: Database, target, name: str = "cleaner") -> bool:
    """Whether the cleaner's stored position has reached ``target``: every transaction up to
    it has been handled."""
    from hopshive.cleaner.positions import load
    stored, _ = db.run(lambda tx: load(tx, name))
    return bool(stored) and stored.behind(target) == 0


def orphans(db) -> dict[str, int]:
    """Every finding fsck reports (with no grace period), by kind."""
    return db.run(lambda tx: find_orphans(tx, 0)).counts()


def wait_no_orphans(db, deadline: float = 30.0) -> float:
    """Poll until fsck finds nothing; returns the seconds it took."""
    started = time.monotonic()
    last: dict = {}

    def probe() -> bool:
        last.clear()
        last.update(orphans(db))
        return not last
    wait_until(probe, deadline, lambda _: f"orphans remain: {last}")
    return time.monotonic() - started


def wait_leader(db, deadline: float = 30.0, name: str = "cleaner") -> str:
    return wait_until(lambda: lease_holder(db, name), deadline, lambda _: "no instance took the lease")


def wait_tailing(db, deadline: float = 30.0) -> None:
    """Until the leader has stored a position (it is past its start and tailing)."""
    from hopshive.cleaner.positions import load
    wait_until(lambda: db.run(lambda tx: load(tx, "cleaner"))[0], deadline, lambda _: "no position stored")


@pytest.fixture
def account(db, mariadb) -> dict:
    """The `database` section of the cleaner's least-privilege account (the role's grants)."""
    return least_privilege(db, mariadb.config)


@pytest.fixture
def running(db, account, tmp_path):
    started: list[InProcess] = []

    def start(instance: str = "a", **sections) -> CleanerService:
        """An instance; keyword arguments are `cleaner` settings, or whole sections by name."""
        cleaner = {k: v for k, v in sections.items() if not isinstance(v, dict)}
        config = cleaner_config(account, tmp_path, instance, **cleaner)
        for name, section in sections.items():
            if isinstance(section, dict):
                config[name].update(section)
        runner = InProcess(config).start()
        started.append(runner)
        return runner.service
    yield start
    for runner in started:
        runner.stop()
