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
    args = ("serve",)

    def __init__(self, base: Path, database: dict, namenode_url: str, metastore_port: int, **platform):
        self.port = _free_port()
        settings = {"bind": "127.0.0.1", "port": self.port, "namenode_url": namenode_url,
                    "metastore_port": metastore_port, "hive_admin": "hive"}
        settings.update(platform)
        self.settings = settings
        super().__init__(base, {"log_level": "info", "database": dict(database), "platform": settings})

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


def add_owners(platform: PlatformProcess, password: str, owners: dict[str, str]) -> None:
    """Platform users (e-mail -> the project each owns), made with the platform's CLI."""
    for email, project in owners.items():
        added = platform.cli("user", "add", "--email", email, "--password-stdin", stdin=password + "\n")
        assert added.returncode == 0, added.stderr
        made = platform.cli("project", "create", project, "--owner", email)
        assert made.returncode == 0, made.stderr


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
    """beeline from the pyspark jars (Hive JDBC), as a user of any HiveServer2 endpoint runs it;
    without ``sql``, ``options`` say what to run (``-f`` a script of beeline commands)."""
    import pyspark
    jars = Path(pyspark.__file__).parent / "jars"
    return subprocess.run(
        ["java", f"-Xmx{heap}", "-cp", f"{jars}/*", "org.apache.hive.beeline.BeeLine",
         "-u", f"jdbc:hive2://{host}:{port}/{database}{url_tail}", "-n", user, "-p", password,
         "--outputformat=csv2", "--silent=true", *options, *(("-e", sql) if sql else ())], capture_output=True, text=True,
        timeout=timeout)


def metadata(conn, call: str, **fields) -> tuple[list, list]:
    """A JDBC metadata call (``GetTables``, ``GetColumns``, ...) through a PyHive connection:
    the (name, type) of each result set column, and the rows, read with PyHive's cursor."""
    from TCLIService import ttypes
    request = getattr(ttypes, f"T{call}Req")(sessionHandle=conn.sessionHandle, **fields)
    response = getattr(conn.client, call)(request)
    if response.status.statusCode not in (ttypes.TStatusCode.SUCCESS_STATUS,
                                          ttypes.TStatusCode.SUCCESS_WITH_INFO_STATUS):
        raise RuntimeError(f"{call}: {response.status.errorMessage}")
    cursor = conn.cursor()
    cursor._operationHandle, cursor._state = response.operationHandle, cursor._STATE_RUNNING
    rows = cursor.fetchall()
    columns = [(name, type_code) for name, type_code, *_ in cursor.description]
    cursor.close()
    return columns, rows
