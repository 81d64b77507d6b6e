"""install: the hopshive account cannot log in, the virtualenv's tools run, the installed
source's checksum is recorded and supervisord runs (it answers hopshive-supervisorctl)."""

import re

testinfra_hosts = ["namenode"]


def test_service_account_cannot_log_in(host):
    shell = host.user("hopshive").shell
    assert shell == "/usr/sbin/nologin", f"expected shell /usr/sbin/nologin, got {shell}"


def test_installed_schema_tool_runs(node):
    node.tool("hopshive-schematool", "--help")


def test_installed_source_checksum_is_a_sha256(host):
    checksum = host.file("/opt/hopshive/.installed-checksum").content_string.strip()
    assert re.fullmatch(r"[0-9a-f]{64}", checksum), f"expected a sha256 hex digest, got {checksum!r}"


def test_supervisord_runs(node):
    pid = node.supervisorctl("pid")
    assert re.fullmatch(r"[0-9]+", pid), f"expected a pid from supervisorctl, got: {pid!r}"
