"""Running hopshive-cleaner against the private MariaDB: in-process (a thread) or as a
process that a test may kill."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import yaml

from hopshive.cleaner.service import DEFAULTS, CleanerService
from hopshive.core.config import load_config
from hopshive.core.db import Database

FAST = {"lease_seconds": 3.0, "renew_seconds": 0.3, "lease_margin_seconds": 1.0, "heartbeat_seconds": 0.5,
        "position_save_seconds": 1.0, "stop_grace_seconds": 10.0}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cleaner_config(database: dict, tmp_path: Path, instance: str, **cleaner) -> dict:
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
