"""sd_notify(3) datagrams: what a Type=notify unit's service sends, and silence outside systemd."""

import socket

from hopshive.core.systemd import notify, ready
from tests.support.notify import notify_socket  # noqa: F401 -- a fixture


def test_ready_sends_ready_1(notify_socket):
    assert ready() is True
    assert notify_socket.recv(64) == b"READY=1"


def test_an_abstract_socket_name_is_understood(monkeypatch):
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0hopshive-notify-test")
        sock.settimeout(5)
        monkeypatch.setenv("NOTIFY_SOCKET", "@hopshive-notify-test")
        assert notify("STATUS=serving") is True
        assert sock.recv(64) == b"STATUS=serving"


def test_nothing_is_sent_without_a_service_manager(monkeypatch):
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    assert ready() is False


def test_a_socket_that_is_gone_is_logged_not_raised(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("NOTIFY_SOCKET", str(tmp_path / "nobody-listens"))
    assert ready() is False
    assert "cannot notify the service manager" in caplog.text
