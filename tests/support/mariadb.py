"""A private MariaDB server for component tests: own data dir, socket and port.

Tests never touch the deployed server; each session boots its own mariadbd from the Debian
packages (ROW binlog with full metadata and GTIDs, like production) and throws it away.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class MariaDBServer:
    def __init__(self, base: Path):
        self.base = base
        self.datadir = base / "data"
        self.socket = str(base / "mysqld.sock")
        self.port = _free_port()
        self.process: subprocess.Popen | None = None

    @property
    def config(self) -> dict:
        """A `database` config section for the services, as root over the socket."""
        return {"host": "127.0.0.1", "port": self.port, "user": "root", "password": "",
                "unix_socket": self.socket, "pool_size": 8, "connect_timeout": 5,
                "wsrep_sync_wait": False}

    def start(self) -> "MariaDBServer":
        for binary in ("mariadb-install-db", "mariadbd"):
            if not shutil.which(binary) and not Path("/usr/sbin", binary).exists():
                raise RuntimeError(f"{binary} not found: install the mariadb-server package")
        self.base.mkdir(parents=True, exist_ok=True)
        subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={self.datadir}",
                        "--auth-root-authentication-method=normal", "--skip-test-db", "--user=root"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # Its own temporary directory: something on a shared host clears /tmp now and then,
        # and MariaDB fails a query whose internal temporary table vanished ("Error on delete
        # of '/tmp/#sql-temptable-…'").
        (self.base / "tmp").mkdir(exist_ok=True)
        log = open(self.base / "mysqld.log", "wb")
        self.process = subprocess.Popen(
            ["/usr/sbin/mariadbd", "--no-defaults", f"--datadir={self.datadir}", f"--socket={self.socket}",
             f"--port={self.port}", "--bind-address=127.0.0.1", "--user=root",
             "--log-bin=mysql-bin", "--server-id=1", "--binlog-format=ROW", "--binlog-row-metadata=FULL",
             "--innodb-buffer-pool-size=256M", "--innodb-flush-log-at-trx-commit=2",
             "--max-connections=500", "--skip-name-resolve", f"--pid-file={self.base / 'mysqld.pid'}",
             f"--tmpdir={self.base / 'tmp'}"],
            stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while not os.path.exists(self.socket):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"mariadbd did not start: {(self.base / 'mysqld.log').read_text()[-2000:]}")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
