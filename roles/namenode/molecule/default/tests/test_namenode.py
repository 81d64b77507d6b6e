"""namenode: the namespace service runs, is healthy, its schema is this release's, and the
well-known directories exist with their owners and permissions."""

import pytest

from conftest import NAMENODE

testinfra_hosts = ["namenode"]


def test_service_runs_and_answers_health(node):
    node.assert_serving("hopshive-namenode", f"{NAMENODE}/health")


def test_hops_schema_is_this_release(node):
    node.tool("hopshive-schematool", "--config", "/etc/hopshive/schematool.yml",
              "validate", "--component", "hops")


@pytest.mark.parametrize(
    ("path", "owner", "permission"),
    [("/tmp", "hdfs", "1777"), ("/user", "hdfs", "755"), ("/user/hive/warehouse", "hive", "1777")],
)
def test_well_known_directory(node, path, owner, permission):
    response = node.webhdfs_status(path)
    assert response.status == 200, response
    status = response.json()["FileStatus"]
    assert (status["type"], status["owner"], status["permission"]) == ("DIRECTORY", owner, permission), status
