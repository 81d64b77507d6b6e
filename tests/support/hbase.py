"""Our HBase Thrift server (``python -m hopshive.hbase_server.server``) on a free port."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.support.mariadb import _free_port
from tests.support.process import ServiceProcess


class HBaseServerProcess(ServiceProcess):
    name = "hopshive-hbase"
    module = "hopshive.hbase_server.server"
    probe = "hopshive.hbase_server.probe"
    start_timeout = 30.0

    def __init__(self, base: Path):
        base.mkdir(parents=True, exist_ok=True)
        port = _free_port()
        self.data_dir = base / "data"
        config_path = base / "hbase.yaml"
        config_path.write_text(yaml.safe_dump({"log_level": "debug", "hbase": {
            "port": port, "data_dir": str(self.data_dir), "map_size_mb": 512, "stop_grace": 5.0}}))
        super().__init__(base, port, config_path)
