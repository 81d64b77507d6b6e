"""A real hopshive-namenode for component tests: a subprocess on a free port, against the
test session's private MariaDB, with its own block directory.

The server runs in its own process group, so a test can kill -9 the master and its
workers at once (a crash) and start it again on the same port and data directory.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import requests
import yaml

from tests.support.mariadb import _free_port
from tests.support.polling import wait_until

START_DEADLINE = 60.0
STOP_GRACE = 20.0
PROXY_USER = "svc"
SUPERUSER = "hdfs"


class NamenodeServer:
    """``hopshive-namenode --config FILE`` with test settings; ``url`` is its base URL."""

    def __init__(self, base: Path, database: dict, workers: int = 2, security: str = "simple", ca=None,
                 **namenode):
        """``ca``: a tests.support.tls.TestCA to serve swebhdfs:// (https) with."""
        self.base = base
        self.ca = ca
        self.port = _free_port()
        self.data_dir = base / "data"
        self.log_path = base / "namenode.log"
        self.config_path = base / "namenode.yaml"
        self.process: subprocess.Popen | None = None
        settings = {
            "bind": "127.0.0.1", "port": self.port, "advertised_address": f"127.0.0.1:{self.port}",
            "workers": workers, "data_dir": str(self.data_dir), "superusers": [SUPERUSER],
            "proxy_users": {PROXY_USER: {"users": "*", "hosts": "*", "groups": "*"}},
            "heartbeat_interval": 0.5, "shutdown_timeout": 5.0,
        }
        if ca is not None:
            settings.update(ca.server_settings(), tls_ca_file=str(ca.ca_file))
        settings.update(namenode)
        base.mkdir(parents=True, exist_ok=True)
        # security "simple" (user.name believed) is what the suites written before tokens
        # existed still use; tests/component/test_webhdfs_tokens.py runs "token" (#24).
        self.config_path.write_text(yaml.safe_dump({"log_level": "info", "database": dict(database),
                                                    "namenode": settings, "security": {"mode": security}}))

    @property
    def url(self) -> str:
        return f"{'https' if self.ca else 'http'}://127.0.0.1:{self.port}"

    @property
    def verify(self) -> str | bool:
        """requests' ``verify=`` for this server: its CA when it serves TLS."""
        return str(self.ca.ca_file) if self.ca else True

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except FileNotFoundError:
            return "(no log)"

    def _health(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"hopshive-namenode exited with {self.process.returncode}:\n{self.log_tail()}")
        try:
            return requests.get(self.url + "/health", timeout=2, verify=self.verify).status_code == 200
        except requests.RequestException:
            return False

    def start(self) -> "NamenodeServer":
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "hopshive.webhdfs.server", "--config", str(self.config_path)],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        wait_until(self._health, START_DEADLINE,
                   lambda _: f"{self.url}/health never answered 200; log tail:\n{self.log_tail()}")
        return self

    def _group_gone(self) -> bool:
        try:
            os.killpg(self.process.pid, 0)
        except ProcessLookupError:
            return True
        return False

    def stop(self, grace: float = STOP_GRACE) -> int:
        """SIGTERM, and insist that the master and every worker exit within ``grace``."""
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else 0
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(grace)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"hopshive-namenode ignored SIGTERM for {grace}s; log tail:\n{self.log_tail()}")
        wait_until(self._group_gone, grace, lambda _: "workers outlived the master after SIGTERM")
        return code

    def kill(self) -> None:
        """kill -9 of the whole process group (master and workers): a crash."""
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(STOP_GRACE)
        wait_until(self._group_gone, STOP_GRACE, lambda _: "processes survived SIGKILL")

    def restart(self, crash: bool = False) -> "NamenodeServer":
        self.kill() if crash else self.stop()
        return self.start()
