"""Our HBase Thrift server (``python -m hopshive.hbase_server.server``) on a free port."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.mariadb import _free_port
from tests.support.service_process import ServiceProcess


class HBaseServerProcess(ServiceProcess):
    module = "hopshive.hbase_server.server"

    def __init__(self, base: Path):
        self.port = _free_port()
        self.metrics_port = _free_port()
        self.data_dir = base / "data"
        super().__init__(base, {"log_level": "debug", "hbase": {
            "port": self.port, "metrics_port": self.metrics_port, "data_dir": str(self.data_dir),
            "map_size_mb": 512, "stop_grace": 5.0}},
            start_deadline=30.0, name="hopshive-hbase")

    def healthy(self) -> bool:
        return subprocess.run([sys.executable, "-m", "hopshive.hbase_server.probe", "--port", str(self.port),
                               "--timeout", "2"], capture_output=True).returncode == 0

    def stop(self, grace: float = 20.0) -> int:
        return super().stop(grace)
