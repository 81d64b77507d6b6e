"""Map-join partition pruning through server2: engines that load the HopsHive SQL extension
(as inventories/group_vars configures server2 on a spark host) prune a project user's star query
once the session sets spark.hopshive.mapJoinPruning.enabled=true, and do not before; the
metastore's /metrics (its Thrift port + 100) count the partitions fetched."""

from __future__ import annotations

import pytest
from pyhive import hive

from tests.support import mapjoin_workload as mj
from tests.support import metastore_metrics as prom
from tests.support.platform_fixtures import platform_stack  # noqa: F401 (fixture)
from tests.support.server2 import Server2Process
from tests.support.spark_extension import EXTENSIONS, build_jar

pytestmark = [pytest.mark.server2, pytest.mark.spark, pytest.mark.metastore]
EMAIL, PASSWORD, PROJECT = "mia@example.org", "mapjoin-test-password", "stars"


@pytest.fixture(scope="module")
def server2(platform_stack, tmp_path_factory):
    platform = platform_stack["platform"]
    added = platform.cli("user", "add", "--email", EMAIL, "--password-stdin", stdin=PASSWORD + "\n")
    assert added.returncode == 0, added.stderr
    made = platform.cli("project", "create", PROJECT, "--owner", EMAIL)
    assert made.returncode == 0, made.stderr
    jar = build_jar(tmp_path_factory.mktemp("spark-extension"))
    server = Server2Process(platform_stack["base"] / "server2", platform.url, platform_stack["metastore"].port,
                            platform_stack["namenode"].address,
                            spark_conf={"spark.sql.extensions": EXTENSIONS, "spark.driver.extraClassPath": str(jar)}
                            ).start()
    yield server
    assert server.stop() == 0, server.log_tail()


def test_a_query_through_server2_is_pruned_after_set(server2, platform_stack):
    endpoint = ("127.0.0.1", platform_stack["metastore"].port + prom.METRICS_PORT_OFFSET)
    with hive.connect(host="127.0.0.1", port=server2.port, username=EMAIL, password=PASSWORD, auth="CUSTOM",
                      database=PROJECT) as conn:
        answers = mj.through_server2(conn, lambda table: prom.fetched([endpoint], table), f"{PROJECT}.f")
    assert answers == mj.SERVER2_EXPECTED
