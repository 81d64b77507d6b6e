"""The platform API and server2 as real subprocesses for component tests (free loopback
ports, the test session's private MariaDB), and a small HTTP client of the platform."""

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

API = "/hopsworks-api/api"
ADMIN = ("admin@hopshive.test", "admin-password-1")


class ServiceProcess:
    """``python -m MODULE [ARGS] --config FILE`` in its own process group."""

    module = ""
    args: tuple = ()

    def __init__(self, base: Path, config: dict, start_deadline: float = 60.0):
        self.base = base
        base.mkdir(parents=True, exist_ok=True)
        self.config_path = base / "config.yaml"
        self.config_path.write_text(yaml.safe_dump(config))
        self.log_path = base / "service.log"
        self.start_deadline = start_deadline
        self.process: subprocess.Popen | None = None

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except FileNotFoundError:
            return "(no log)"

    def healthy(self) -> bool:
        raise NotImplementedError

    def _probe(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"{self.module} exited with {self.process.returncode}:\n{self.log_tail()}")
        return self.healthy()

    def start(self):
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", self.module, "--config", str(self.config_path), *self.args],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        wait_until(self._probe, self.start_deadline, lambda _: f"{self.module} never became healthy:\n{self.log_tail()}")
        return self

    def stop(self, grace: float = 30.0) -> int:
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else 0
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(grace)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            raise AssertionError(f"{self.module} ignored SIGTERM:\n{self.log_tail()}")


class PlatformProcess(ServiceProcess):
    module = "hopshive.platform.server"

    def __init__(self, base: Path, database: dict, namenode_url: str, metastore_port: int, **platform):
        self.port = _free_port()
        settings = {"bind": "127.0.0.1", "port": self.port, "namenode_url": namenode_url,
                    "metastore_port": metastore_port, "hive_admin": "hive"}
        settings.update(platform)
        super().__init__(base, {"log_level": "info", "database": dict(database), "platform": settings})

    def start(self):
        self.args = ("serve",)
        return super().start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def healthy(self) -> bool:
        try:
            return requests.get(self.url + "/health", timeout=2).status_code == 200
        except requests.RequestException:
            return False

    def cli(self, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", self.module, "--config", str(self.config_path), *args],
                              input=stdin, capture_output=True, text=True, timeout=120)

    def session(self, email: str, password: str) -> requests.Session:
        http = requests.Session()
        response = http.post(self.url + API + "/auth/login", data={"email": email, "password": password}, timeout=30)
        assert response.status_code == 200, response.text
        return http


class Server2Process(ServiceProcess):
    module = "hopshive.server2.server"

    def __init__(self, base: Path, platform_url: str, metastore_port: int, namenode_address: str, **server2):
        self.port = _free_port()
        settings = {"bind": "127.0.0.1", "port": self.port, "platform_url": platform_url,
                    "metastore_uris": f"thrift://127.0.0.1:{metastore_port}",
                    "warehouse": f"webhdfs://{namenode_address}/user/hive/warehouse",
                    "default_fs": f"webhdfs://{namenode_address}", "work_dir": str(base / "engines"),
                    "driver_memory": "512m", "spark_master": "local[1]"}
        settings.update(server2)
        super().__init__(base, {"log_level": "info", "server2": settings})

    def healthy(self) -> bool:
        return subprocess.run([sys.executable, "-m", self.module, "--config", str(self.config_path), "--check"],
                              capture_output=True).returncode == 0
