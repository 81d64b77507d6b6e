"""install: the hopshive account cannot log in, the virtualenv's tools run, the installed
source's checksum is recorded; on a host without systemd supervisord runs (it answers
hopshive-supervisorctl), on a systemd host there is none and the services are units.
Shared by the default (systemd) and supervisor scenarios."""

import re

from conftest import SUPERVISORCTL

testinfra_hosts = ["namenode"]


def test_service_account_cannot_log_in(host):
    shell = host.user("hopshive").shell
    assert shell == "/usr/sbin/nologin", f"expected shell /usr/sbin/nologin, got {shell}"


def test_installed_schema_tool_runs(node):
    node.tool("hopshive-schematool", "--help")


def test_installed_source_checksum_is_a_sha256(host):
    checksum = host.file("/opt/hopshive/.installed-checksum").content_string.strip()
    assert re.fullmatch(r"[0-9a-f]{64}", checksum), f"expected a sha256 hex digest, got {checksum!r}"


def test_one_service_manager_runs_the_services(node, host):
    if node.manager == "supervisord":
        pid = host.check_output(f"{SUPERVISORCTL} pid")
        assert re.fullmatch(r"[0-9]+", pid), f"expected a pid from supervisorctl, got: {pid!r}"
    else:
        assert not host.file(SUPERVISORCTL).exists, f"a systemd host got a supervisord ({SUPERVISORCTL})"
        units = host.check_output("systemctl list-unit-files --plain --no-legend 'hopshive-*'")
        assert "hopshive-namenode.service" in units, f"expected the namenode's unit, got: {units!r}"
