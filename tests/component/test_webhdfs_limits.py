"""The namenode bounds slow and numerous clients: a connection that trickles its request head
in (slowloris) is closed after the idle timeout, and connections beyond the cap are answered
503 with Retry-After at once, while the clients already connected are served."""

from __future__ import annotations

import socket
import time

import pytest
import requests

from tests.support.namenode import NamenodeServer

IDLE_TIMEOUT = 2.0


@pytest.fixture
def bounded(db, tmp_path):
    server = NamenodeServer(tmp_path / "namenode", db.config, workers=1, idle_timeout=IDLE_TIMEOUT,
                            max_connections=3).start()
    yield server
    assert server.stop() == 0, server.log_tail()


def status_url(server) -> str:
    return f"{server.url}/webhdfs/v1/?op=GETFILESTATUS&user.name=hdfs"


def test_a_slowloris_connection_is_closed(bounded):
    with socket.create_connection(("127.0.0.1", bounded.port), timeout=30) as sock:
        sock.sendall(b"GET /webhdfs/v1/?op=GETFILESTATUS HTTP/1.1\r\nHost: x\r\n")
        started = time.monotonic()
        closed_after = None
        for i in range(12):             # a header line every 0.5 s, never the blank line
            time.sleep(0.5)
            try:
                sock.sendall(b"X-Slow-%d: 1\r\n" % i)
                sock.settimeout(0.01)
                if sock.recv(1) == b"":
                    closed_after = time.monotonic() - started
                    break
            except socket.timeout:
                continue
            except (BrokenPipeError, ConnectionResetError):
                closed_after = time.monotonic() - started
                break
            finally:
                sock.settimeout(30)
    assert closed_after is not None, "a trickled request head kept its connection for 6 s"
    assert closed_after < IDLE_TIMEOUT + 2
    assert requests.get(status_url(bounded), timeout=10).status_code == 200


def test_connections_beyond_the_cap_get_503_with_retry_after(bounded):
    held = [socket.create_connection(("127.0.0.1", bounded.port), timeout=10) for _ in range(3)]
    try:
        time.sleep(0.2)
        response = requests.get(status_url(bounded), timeout=10)
        assert response.status_code == 503, response.text
        assert response.headers["Retry-After"] == "1"
        assert response.json()["RemoteException"]["exception"] == "RetriableException"
    finally:
        for sock in held:
            sock.close()
    time.sleep(0.2)
    assert requests.get(status_url(bounded), timeout=10).status_code == 200
