"""A real Prometheus (Debian's package) for component tests: a subprocess on a free loopback
port scraping the jobs a test names every second, with the console templates and rules of
roles/monitoring, its data in a temporary directory."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import requests
import yaml

from tests.support.mariadb import _free_port
from tests.support.polling import wait_until

MONITORING = Path(__file__).resolve().parents[2] / "roles" / "monitoring" / "files"


def binary(name: str) -> str:
    """A Debian package's program; a missing one fails the test with what to install (as
    mariadb-server for the MariaDB fixture), never skips it."""
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} not found: install Debian's prometheus package (the monitoring role does)")
    return path


class PrometheusServer:
    def __init__(self, base: Path, jobs: dict[str, list[tuple[str, str]]]):
        """``jobs``: job name -> [(host label, host:port)] scraped at /metrics."""
        self.base, self.port = base, _free_port()
        base.mkdir(parents=True, exist_ok=True)
        config = {"global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                  "rule_files": [str(MONITORING / "alerts.yml")],
                  "scrape_configs": [{"job_name": job, "static_configs": [
                      {"targets": [address], "labels": {"host": host}} for host, address in targets]}
                      for job, targets in jobs.items()]}
        (base / "prometheus.yml").write_text(yaml.safe_dump(config))
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_tail(self, chars: int = 3000) -> str:
        return (self.base / "prometheus.log").read_text(errors="replace")[-chars:]

    def start(self) -> "PrometheusServer":
        with open(self.base / "prometheus.log", "ab") as log:
            self.process = subprocess.Popen(
                [binary("prometheus"), f"--config.file={self.base / 'prometheus.yml'}",
                 f"--storage.tsdb.path={self.base / 'data'}", f"--web.listen-address=127.0.0.1:{self.port}",
                 f"--web.console.templates={MONITORING / 'consoles'}",
                 f"--web.console.libraries={MONITORING / 'consoles'}"],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        wait_until(self._ready, 60, lambda _: f"Prometheus never became ready:\n{self.log_tail()}")
        return self

    def _ready(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"prometheus exited with {self.process.returncode}:\n{self.log_tail()}")
        try:
            return requests.get(f"{self.url}/-/ready", timeout=2).status_code == 200
        except requests.RequestException:
            return False

    def query(self, promql: str) -> list[dict]:
        answer = requests.get(f"{self.url}/api/v1/query", params={"query": promql}, timeout=10)
        assert answer.status_code == 200, answer.text
        return answer.json()["data"]["result"]

    def stop(self) -> int:
        self.process.terminate()
        return self.process.wait(30)
