"""configure: the namespace service's and the schema tool's configuration files have their
owners and modes, and the namespace service accepts its file."""

import pytest

testinfra_hosts = ["namenode"]


@pytest.mark.parametrize(
    ("path", "expected"),
    [("/etc/hopshive/namenode.yml", "root:hopshive 0640"), ("/etc/hopshive/schematool.yml", "root:root 0600")],
)
def test_configuration_file_owner_and_mode(host, path, expected):
    config = host.file(path)
    actual = f"{config.user}:{config.group} {config.mode:04o}" if config.exists else "missing"
    assert actual == expected, f"{path}: expected {expected}, got {actual}"


def test_namespace_service_accepts_its_file(node):
    node.tool("hopshive-namenode", "--config", "/etc/hopshive/namenode.yml", "--check-config")
