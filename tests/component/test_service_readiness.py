"""Type=notify readiness of real service processes: each tells the service manager READY=1
only once its port accepts connections, so ``systemctl start``/``restart`` return when the
service can be used (with Type=simple they returned at fork, and the next client was
refused).  A socket in the test stands where systemd's notification socket would be."""

from __future__ import annotations

import socket

import pytest
import yaml

from hopshive.core.db import Database
from tests.support.hbase import HBaseServerProcess
from tests.support.metastore import MetastoreProcess, settings
from tests.support.metastore_fixtures import FAKE_NAMENODE
from tests.support.notify import notify_socket  # noqa: F401 -- a fixture
from tests.support.schemas import reset_schemas

pytestmark = pytest.mark.metastore


def hbase_server(tmp_path, request):
    return HBaseServerProcess(tmp_path / "hbase")


def metastore(tmp_path, request):
    """Forked workers behind one socket: the master reports readiness."""
    mariadb = request.getfixturevalue("mariadb")
    reset_schemas(Database(mariadb.config))
    return MetastoreProcess(tmp_path / "metastore", settings(mariadb.config, FAKE_NAMENODE, workers=2))


@pytest.mark.parametrize("make", [hbase_server, metastore])
def test_ready_is_sent_once_the_port_accepts_connections(make, tmp_path, request):
    service = make(tmp_path, request)
    # Only now: MariaDB (which the metastore's maker may start) speaks sd_notify too.
    manager = request.getfixturevalue("notify_socket")
    service.spawn()
    try:
        assert manager.recv(64) == b"READY=1", service.log_tail()
        with socket.create_connection(("127.0.0.1", service.port), timeout=5):
            pass                                    # no retry: refused here would be a failure
        assert service.healthy(), service.log_tail()
    finally:
        assert service.stop() == 0, service.log_tail()


def test_a_service_that_cannot_start_never_says_ready(notify_socket, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        service = HBaseServerProcess(tmp_path / "hbase")
        config = yaml.safe_load(service.config_path.read_text())
        config["hbase"]["port"] = taken.getsockname()[1]
        service.config_path.write_text(yaml.safe_dump(config))
        service.spawn()
        assert service.process.wait(30) == 1, service.log_tail()
    notify_socket.settimeout(0.5)
    with pytest.raises(socket.timeout):
        notify_socket.recv(64)
