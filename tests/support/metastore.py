"""The metastore for component tests: in a thread of the test process (wire and consistency
tests, which may patch the store to inject failures) or as the real ``hopshive-metastore``
subprocess (Spark tests), plus Thrift clients of both IDL generations."""

from __future__ import annotations

import contextlib
import copy
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import yaml
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport import TSocket, TTransport

from hopshive.core.config import load_config
from hopshive.core.service import listen
from hopshive.metastore.app import DEFAULTS, Metastore
from tests.support.mariadb import _free_port
from tests.support.namenode import wait_until

SERVICE_USER = "hive"


def settings(database: dict, namenode_address: str, **metastore) -> dict:
    """A full metastore configuration for tests (namespace superusers as the namenode's)."""
    config = load_config(DEFAULTS, environ={})
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


class MetastoreProcess:
    """``python -m hopshive.metastore.server --config FILE`` on a free port."""

    def __init__(self, base: Path, config: dict):
        self.base = base
        base.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        self.config = copy.deepcopy(config)
        self.config["metastore"]["port"] = self.port
        self.config_path = base / "metastore.yaml"
        self.config_path.write_text(yaml.safe_dump(self.config))
        self.log_path = base / "metastore.log"
        self.process: subprocess.Popen | None = None

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except FileNotFoundError:
            return "(no log)"

    def _healthy(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"hopshive-metastore exited with {self.process.returncode}:\n{self.log_tail()}")
        return subprocess.run([sys.executable, "-m", "hopshive.metastore.probe", "--port", str(self.port),
                               "--timeout", "2"], capture_output=True).returncode == 0

    def start(self) -> "MetastoreProcess":
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen([sys.executable, "-m", "hopshive.metastore.server", "--config",
                                             str(self.config_path)], stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True)
        wait_until(self._healthy, 60, lambda _: f"metastore never became healthy:\n{self.log_tail()}")
        return self

    def stop(self, grace: float = 20.0) -> int:
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else 0
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(grace)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            raise AssertionError(f"hopshive-metastore ignored SIGTERM:\n{self.log_tail()}")


@contextlib.contextmanager
def thrift_client(port: int, hive2: bool = False, user: str | None = "alice", timeout: float = 30.0):
    """A Hive 3.1 (pymetastore) or Hive 2 (hmsclient, with fb303) client, after set_ugi."""
    if hive2:
        from hmsclient.genthrift.hive_metastore import ThriftHiveMetastore
    else:
        from pymetastore.hive_metastore import ThriftHiveMetastore
    sock = TSocket.TSocket("127.0.0.1", port)
    sock.setTimeout(int(timeout * 1000))
    transport = TTransport.TBufferedTransport(sock)
    transport.open()
    try:
        client = ThriftHiveMetastore.Client(TBinaryProtocolAccelerated(transport))
        if user:
            client.set_ugi(user, [])
        yield client
    finally:
        transport.close()


INVARIANTS = {
    "databases without their descriptor":
        "SELECT d.NAME FROM metastore.DBS d LEFT JOIN metastore.SDS s ON s.SD_ID=d.SD_ID WHERE s.SD_ID IS NULL",
    "tables without their descriptor":
        "SELECT t.TBL_NAME FROM metastore.TBLS t LEFT JOIN metastore.SDS s ON s.SD_ID=t.SD_ID WHERE s.SD_ID IS NULL",
    "partitions without their descriptor":
        "SELECT p.PART_NAME FROM metastore.PARTITIONS p LEFT JOIN metastore.SDS s ON s.SD_ID=p.SD_ID"
        " WHERE s.SD_ID IS NULL",
    "descriptors pointing at a missing inode":
        "SELECT s.SD_ID FROM metastore.SDS s LEFT JOIN hops.hdfs_inodes i ON i.partition_id=s.PARTITION_ID"
        " AND i.parent_id=s.PARENT_ID AND i.name=s.NAME WHERE s.PARTITION_ID IS NOT NULL AND i.id IS NULL",
    "partitions without key values":
        "SELECT p.PART_NAME FROM metastore.PARTITIONS p WHERE NOT EXISTS"
        " (SELECT 1 FROM metastore.PARTITION_KEY_VALS k WHERE k.PART_ID=p.PART_ID)",
}
UNOWNED_SDS = ("SELECT s.SD_ID, s.LOCATION FROM metastore.SDS s WHERE NOT EXISTS (SELECT 1 FROM metastore.DBS d"
               " WHERE d.SD_ID=s.SD_ID) AND NOT EXISTS (SELECT 1 FROM metastore.TBLS t WHERE t.SD_ID=s.SD_ID)"
               " AND NOT EXISTS (SELECT 1 FROM metastore.PARTITIONS p WHERE p.SD_ID=s.SD_ID)"
               " AND NOT EXISTS (SELECT 1 FROM metastore.IDXS x WHERE x.SD_ID=s.SD_ID)")


def invariant_violations(database, owned: bool = True) -> dict:
    """What breaks the consistency invariants (empty when sound).  ``owned``: also require
    that every descriptor has an owner -- true after metastore operations; after a directory
    was removed behind the metastore's back, unowned descriptors are fsck's to clean."""
    checks = dict(INVARIANTS, **({"descriptors owned by nothing": UNOWNED_SDS} if owned else {}))
    with database.transaction() as tx:
        found = {name: tx.query(sql) for name, sql in checks.items()}
    return {name: rows for name, rows in found.items() if rows}
