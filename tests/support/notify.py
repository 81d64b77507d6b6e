"""A socket standing where systemd's notification socket would be ($NOTIFY_SOCKET), to read
what a Type=notify service tells its manager (sd_notify(3))."""

from __future__ import annotations

import socket

import pytest


@pytest.fixture
def notify_socket(tmp_path, monkeypatch):
    path = tmp_path / "notify"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(path))
        sock.settimeout(60)
        monkeypatch.setenv("NOTIFY_SOCKET", str(path))
        yield sock
