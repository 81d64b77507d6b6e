"""The metastore for component tests: in a thread of the test process (wire and consistency
tests, which may patch the store to inject failures) or as the real ``hopshive-metastore``
subprocess (Spark tests).  Thrift clients and the invariants live in tests.support.hms
(shared with the e2e harness) and are re-exported here."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
import threading
from pathlib import Path

from hopshive.core.config import load_config
from hopshive.core.service import listen
from hopshive.metastore.app import DEFAULTS, Metastore
from tests.support.hms import INVARIANTS, UNOWNED_SDS, thrift_client, violations  # noqa: F401 (re-exported)
from tests.support.mariadb import _free_port
from tests.support.service_process import ServiceProcess

SERVICE_USER = "hive"

def settings(database: dict, namenode_address: str, security: str = "simple", **metastore) -> dict:
    """A full metastore configuration for tests (namespace superusers as the namenode's).
    ``security`` is the metastore's security.mode: "simple" for the suites that say who
    they are with set_ugi; "token" (the service's default) for the authentication tests."""
    config = load_config(DEFAULTS, environ={})
    config["security"]["mode"] = security
    config["log_level"] = "debug" if os.environ.get("HOPSHIVE_TEST_DEBUG") else "info"
    config["database"] = dict(database)
    config["metastore"].update(
        warehouse=f"webhdfs://{namenode_address}/user/hive/warehouse",
        namespace_uris=[f"webhdfs://{namenode_address}", f"hdfs://{namenode_address}"],
        service_user=SERVICE_USER, lock_timeout=300.0, stop_grace=5.0)
    config["metastore"].update(metastore)
    config["namespace"]["superusers"] = ["hdfs", SERVICE_USER]
    return config

class InThreadMetastore:
    def __init__(self, config: dict):
        self.config = copy.deepcopy(config)
        self.sock = listen("127.0.0.1", 0)
        self.port = self.sock.getsockname()[1]
        self.config["metastore"]["port"] = self.port
        self.metastore = Metastore(self.config, self.sock)
        self.thread: threading.Thread | None = None

    @property
    def store(self):
        return self.metastore.store

    def start(self) -> "InThreadMetastore":
        self.metastore.bootstrap()
        self.thread = threading.Thread(target=self.metastore.serve, daemon=True, name="metastore")
        self.thread.start()
        return self

    def stop(self) -> None:
        self.metastore.stop(5.0)
        self.thread.join(10)


class MetastoreProcess(ServiceProcess):
    """``python -m hopshive.metastore.server --config FILE`` on a free port."""

    module = "hopshive.metastore.server"

    def __init__(self, base: Path, config: dict):
        self.port = _free_port()
        self.config = copy.deepcopy(config)
        self.config["metastore"]["port"] = self.port
        super().__init__(base, self.config, name="metastore")

    def healthy(self) -> bool:
        ms = self.config["metastore"]
        tls = ["--ca-file", ms["tls_ca_file"]] if ms.get("tls_cert_file") else []
        return subprocess.run([sys.executable, "-m", "hopshive.metastore.probe", "--port", str(self.port),
                               "--timeout", "2", *tls], capture_output=True).returncode == 0


def invariant_violations(database, owned: bool = True) -> dict:
    """What breaks the consistency invariants (empty when sound); see tests.support.hms."""
    with database.transaction() as tx:
        return violations(tx.query, owned)
