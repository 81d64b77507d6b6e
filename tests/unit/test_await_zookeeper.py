"""roles/spark_cluster/files/await-zookeeper: a Spark master starts only once a ZooKeeper
server serves, and then becomes the given command (same process)."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "roles/spark_cluster/files/await-zookeeper"
NOT_SERVING = b"This ZooKeeper instance is not currently serving requests\n"
FOLLOWER = b"Zookeeper version: 3.8.0\nLatency min/avg/max: 0/0.0/0\nMode: follower\nNode count: 5\n"


class FakeZooKeeper:
    """Answers srvr with whatever `answer` holds now, as a ZooKeeper server does (the reply,
    then the connection closes)."""

    def __init__(self, answer: bytes):
        self.answer = answer
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = "127.0.0.1:%d" % self.listener.getsockname()[1]
        self.asked = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            with connection:
                if connection.recv(4) == b"srvr":
                    self.asked += 1
                    connection.sendall(self.answer)

    def close(self):
        self.listener.close()


@pytest.fixture
def zookeeper():
    server = FakeZooKeeper(NOT_SERVING)
    yield server
    server.close()


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(SCRIPT), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_without_servers_the_command_runs_at_once():
    done = start("--servers=", "--", sys.executable, "-c", "print('started')")
    out, _ = done.communicate(timeout=30)
    assert (done.returncode, out) == (0, "started\n")


def test_the_command_waits_until_a_server_serves(zookeeper):
    closed = socket.create_server(("127.0.0.1", 0))
    unreachable = "127.0.0.1:%d" % closed.getsockname()[1]
    closed.close()
    process = start(f"--servers={unreachable},{zookeeper.address}", "--every=0.1", "--",
                    sys.executable, "-c", "import os; print('started', os.getpid())")
    deadline = time.monotonic() + 30
    while zookeeper.asked < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert zookeeper.asked >= 3 and process.poll() is None, "started while no server served"
    zookeeper.answer = FOLLOWER
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert out == f"started {process.pid}\n", "the command must replace the wrapper (same pid)"
    assert "no ZooKeeper server" in err


def test_a_missing_command_is_a_usage_error():
    done = start("--servers=127.0.0.1:1")
    _, err = done.communicate(timeout=30)
    assert done.returncode == 2 and "no command to run" in err
