"""SIGHUP (``systemctl reload``; hopshive.core.reload) on real service processes: a renewed
certificate is served to new connections by every worker while a connection opened before
goes on working; a key that does not match its certificate, or a log level that is none, is
refused and the service serves on as before; the log level changes without a restart."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import ssl
import time
from pathlib import Path

import pytest
import requests
import yaml

from tests.support.hbase import HBaseServerProcess
from tests.support.metastore import MetastoreProcess, settings
from tests.support.metastore_fixtures import FAKE_NAMENODE
from tests.support.namenode import NamenodeServer
from tests.support.polling import wait_until
from tests.support import tls

CONNECTIONS = 12      # enough fresh connections that both workers answer some (the kernel spreads accepts)


@pytest.fixture(scope="module")
def cas(tmp_path_factory):
    """Two CAs, each with a server certificate for 127.0.0.1: the one served first, the renewal."""
    base = tmp_path_factory.mktemp("reload-ca")
    return tls.make_ca(base / "first"), tls.make_ca(base / "renewed")


def served_files(cas, directory: Path) -> tls.TestCA:
    """The first CA's certificate and key, copied to files the test replaces later."""
    first = cas[0]
    directory.mkdir(parents=True)
    shutil.copy(first.cert_file, directory / "server.pem")
    shutil.copy(first.key_file, directory / "server.key")
    return tls.TestCA(first.ca_file, directory / "server.pem", directory / "server.key", first.truststore)


def install(served: tls.TestCA, cert: tls.TestCA, key: tls.TestCA) -> None:
    shutil.copy(cert.cert_file, served.cert_file)
    shutil.copy(key.key_file, served.key_file)


def certificates_served(port: int) -> set[bytes]:
    """The DER certificates fresh connections to ``port`` are shown (not verified: which one is the question)."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    seen = set()
    for _ in range(CONNECTIONS):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            with context.wrap_socket(raw, server_hostname="127.0.0.1") as wrapped:
                seen.add(wrapped.getpeercert(binary_form=True))
    return seen


def der(ca: tls.TestCA) -> bytes:
    return ssl.PEM_cert_to_DER_cert(ca.cert_file.read_text())


def hang_up(process) -> None:
    process.process.send_signal(signal.SIGHUP)


def log_mentions(process, text: str, after: int) -> bool:
    return text in process.log_path.read_text(errors="replace")[after:]


def log_size(process) -> int:
    return len(process.log_path.read_text(errors="replace"))


def test_namenode_workers_serve_a_renewed_certificate_after_a_reload(db, cas, tmp_path):
    first, renewed = cas
    served = served_files(cas, tmp_path / "tls")
    namenode = NamenodeServer(tmp_path / "nn", db.config, workers=2, ca=served).start()
    try:
        assert certificates_served(namenode.port) == {der(first)}
        kept = requests.Session()
        assert kept.get(f"{namenode.url}/health", verify=str(first.ca_file), timeout=10).status_code == 200

        install(served, renewed, renewed)
        hang_up(namenode)
        wait_until(lambda: certificates_served(namenode.port) == {der(renewed)}, 30,
                   lambda seen: f"still served after the reload: {len(seen)} certificates\n{namenode.log_tail()}")
        assert kept.get(f"{namenode.url}/health", verify=str(first.ca_file), timeout=10).status_code == 200, \
            "the connection opened before the reload must keep its certificate"
        assert requests.get(f"{namenode.url}/health", verify=str(renewed.ca_file), timeout=10).status_code == 200

        mark = log_size(namenode)
        install(served, first, renewed)          # a key that does not match its certificate
        hang_up(namenode)
        wait_until(lambda: log_mentions(namenode, "reload refused", mark), 30, lambda _: namenode.log_tail())
        assert certificates_served(namenode.port) == {der(renewed)}
        assert requests.get(f"{namenode.url}/health", verify=str(renewed.ca_file), timeout=10).status_code == 200
    finally:
        assert namenode.stop() == 0, namenode.log_tail()


def test_metastore_workers_reload_their_own_certificate(db, cas, tmp_path):
    first, renewed = cas
    served = served_files(cas, tmp_path / "tls")
    config = settings(db.config, FAKE_NAMENODE, workers=2, metrics=False, **served.server_settings(),
                      tls_ca_file=str(first.ca_file))
    metastore = MetastoreProcess(tmp_path / "metastore", config).start()
    try:
        assert certificates_served(metastore.port) == {der(first)}
        install(served, renewed, renewed)
        hang_up(metastore)
        wait_until(lambda: certificates_served(metastore.port) == {der(renewed)}, 30,
                   lambda seen: f"still served after the reload: {len(seen)} certificates\n{metastore.log_tail()}")
    finally:
        assert metastore.stop() == 0, metastore.log_tail()


def test_the_log_level_changes_without_a_restart_and_a_bad_one_is_refused(tmp_path):
    hbase = HBaseServerProcess(tmp_path / "hbase").start()      # starts at debug
    try:
        pid = hbase.process.pid
        config = yaml.safe_load(hbase.config_path.read_text())

        def reload_with(level: str) -> int:
            """The file replaced whole (as Ansible writes it: a reload never reads half a
            file), then SIGHUP; returns where the log stood."""
            config["log_level"] = level
            written = hbase.config_path.with_suffix(".new")
            written.write_text(yaml.safe_dump(config))
            os.replace(written, hbase.config_path)
            mark = log_size(hbase)
            hang_up(hbase)
            return mark

        mark = reload_with("loud")
        wait_until(lambda: log_mentions(hbase, "reload refused", mark), 30, lambda _: hbase.log_tail())
        quiet = reload_with("warning")
        time.sleep(2)                           # handled apart, not merged with the next signal
        mark = reload_with("loud")              # its refusal is an error: it shows at warning
        wait_until(lambda: log_mentions(hbase, "reload refused", mark), 30, lambda _: hbase.log_tail())
        assert '"msg": "reloaded"' not in hbase.log_path.read_text(errors="replace")[quiet:mark], \
            "at warning, the reload's own info line must not be logged"
        mark = reload_with("info")
        wait_until(lambda: log_mentions(hbase, '"log_level": "info"', mark), 30, lambda _: hbase.log_tail())
        assert hbase.healthy() and hbase.process.pid == pid and hbase.process.poll() is None
    finally:
        assert hbase.stop() == 0, hbase.log_tail()
