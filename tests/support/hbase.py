"""Our HBase Thrift server (``python -m hopshive.hbase_server.server``) on a free port."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import yaml

from tests.support.mariadb import _free_port
from tests.support.polling import wait_until


class HBaseServerProcess:
    def __init__(self, base: Path):
        self.base = base
        base.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        self.data_dir = base / "data"
        self.config_path = base / "hbase.yaml"
        self.config_path.write_text(yaml.safe_dump({"log_level": "debug", "hbase": {
            "port": self.port, "data_dir": str(self.data_dir), "map_size_mb": 512, "stop_grace": 5.0}}))
        self.log_path = base / "hbase.log"
        self.process: subprocess.Popen | None = None

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except FileNotFoundError:
            return "(no log)"

    def _healthy(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"hopshive-hbase exited with {self.process.returncode}:\n{self.log_tail()}")
        return subprocess.run([sys.executable, "-m", "hopshive.hbase_server.probe", "--port", str(self.port),
                               "--timeout", "2"], capture_output=True).returncode == 0

    def start(self) -> "HBaseServerProcess":
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen([sys.executable, "-m", "hopshive.hbase_server.server", "--config",
                                             str(self.config_path)], stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True)
        wait_until(self._healthy, 30, lambda _: f"hopshive-hbase never became healthy:\n{self.log_tail()}")
        return self

    def kill(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self, grace: float = 15.0) -> int:
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else 0
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(grace)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            raise AssertionError(f"hopshive-hbase ignored SIGTERM:\n{self.log_tail()}")
