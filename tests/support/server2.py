"""The platform API and server2 as real subprocesses for component tests (free loopback
ports, the test session's private MariaDB), and a small HTTP client of the platform."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import requests

from hopshive.core.tls import VerifyingSession, http_scheme, verify

from tests.support.mariadb import _free_port
from tests.support.service_process import ServiceProcess

API = "/hopsworks-api/api"
ADMIN = ("admin@hopshive.test", "admin-password-1")


class PlatformProcess(ServiceProcess):
    module = "hopshive.platform.server"

    def __init__(self, base: Path, database: dict, namenode_url: str, metastore_port: int, **platform):
        self.port = _free_port()
        settings = {"bind": "127.0.0.1", "port": self.port, "namenode_url": namenode_url,
                    "metastore_port": metastore_port, "hive_admin": "hive"}
        settings.update(platform)
        self.settings = settings
        super().__init__(base, {"log_level": "info", "database": dict(database), "platform": settings})

    def start(self):
        self.args = ("serve",)
        return super().start()

    @property
    def url(self) -> str:
        return f"{http_scheme(self.settings)}://127.0.0.1:{self.port}"

    @property
    def ca_file(self) -> str:
        """The CA its https is verified with ("" without TLS)."""
        return self.settings.get("tls_ca_file", "")

    def healthy(self) -> bool:
        try:
            return requests.get(self.url + "/health", timeout=2, verify=verify(self.ca_file)).status_code == 200
        except requests.RequestException:
            return False

    def cli(self, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", self.module, "--config", str(self.config_path), *args],
                              input=stdin, capture_output=True, text=True, timeout=120)

    def session(self, email: str, password: str) -> requests.Session:
        http = VerifyingSession(self.ca_file)
        response = http.post(self.url + API + "/auth/login", data={"email": email, "password": password}, timeout=30)
        assert response.status_code == 200, response.text
        return http


class Server2Process(ServiceProcess):
    module = "hopshive.server2.server"

    def __init__(self, base: Path, platform_url: str, metastore_port: int, namenode_address: str,
                 security: str = "token", **server2):
        """``security``: server2's mode; in token mode (its default) each engine carries the
        token the platform issued to its user's login."""
        self.port, self.metrics_port, self.namenode_address = _free_port(), _free_port(), namenode_address
        settings = {"bind": "127.0.0.1", "port": self.port, "metrics_port": self.metrics_port,
                    "platform_url": platform_url,
                    "metastore_uris": f"thrift://127.0.0.1:{metastore_port}",
                    "warehouse": f"webhdfs://{namenode_address}/user/hive/warehouse",
                    "default_fs": f"webhdfs://{namenode_address}", "work_dir": str(base / "engines"),
                    "driver_memory": "512m", "spark_master": "local[1]"}
        settings.update(server2)
        super().__init__(base, {"log_level": "info", "server2": settings,
                                "security": {"mode": security, "namenodes": [namenode_address]}})

    def healthy(self) -> bool:
        return subprocess.run([sys.executable, "-m", self.module, "--config", str(self.config_path), "--check"],
                              capture_output=True).returncode == 0


def beeline(host: str, port: int, database: str, user: str, password: str, sql: str,
            url_tail: str = "", options: tuple[str, ...] = (), heap: str = "256m",
            timeout: float = 180) -> subprocess.CompletedProcess:
    """beeline from the pyspark jars (Hive JDBC), as a user of any HiveServer2 endpoint runs it."""
    import pyspark
    jars = Path(pyspark.__file__).parent / "jars"
    return subprocess.run(
        ["java", f"-Xmx{heap}", "-cp", f"{jars}/*", "org.apache.hive.beeline.BeeLine",
         "-u", f"jdbc:hive2://{host}:{port}/{database}{url_tail}", "-n", user, "-p", password,
         "--outputformat=csv2", "--silent=true", *options, "-e", sql], capture_output=True, text=True,
        timeout=timeout)
