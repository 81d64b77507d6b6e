"""PySpark 4.3 (Hive 2.3.10 metastore client, WebHDFS) against the real hopshive-metastore
and hopshive-namenode processes, compared statement by statement with Spark's built-in
catalog on local disk (run once per module, beside the first store's session)."""

from __future__ import annotations

import pytest
import requests

from tests.support.metastore import invariant_violations, thrift_client
from tests.support.metastore_stack import metastore_stack
from tests.support.spark_extension import build_jar, session_args
from tests.support.spark_workload import PHASES, SparkProcess, assert_same_results

pytestmark = [pytest.mark.metastore, pytest.mark.spark]
TIMEOUT = 900


@pytest.fixture(scope="module", params=["mysql", "hbase"])
def stack(mariadb, tmp_path_factory, request):
    """The stack on each metastore store (the HBase store on our HBase Thrift server)."""
    base = tmp_path_factory.mktemp("spark-stack")
    with metastore_stack(mariadb, base, request.param) as servers:
        yield {"base": base, "db": servers.db, "namenode": servers.namenode, "metastore": servers.metastore}


class BuiltinCatalog:
    """Spark's built-in catalog on local disk running the workload: the reference both
    stores are compared with.  Its answers do not depend on the store, so it runs once,
    beside the first store's run."""

    def __init__(self, base):
        self.base = base
        self.spark = SparkProcess(["--catalog", "derby", "--derby", str(base / "derby"),
                                   "--warehouse", f"file://{base}/local-warehouse"], base / "spark-local.log")
        self.submitted = False
        self.answers = None

    def submit(self) -> None:
        if not self.submitted:
            self.spark.ready(TIMEOUT)
            self.spark.submit(PHASES, f"file://{self.base}/local-data/ext")
            self.submitted = True

    def results(self) -> dict:
        if self.answers is None:
            self.submit()
            self.answers = self.spark.result(TIMEOUT)
            self.spark.close()
        return self.answers


@pytest.fixture(scope="module")
def builtin(tmp_path_factory):
    reference = BuiltinCatalog(tmp_path_factory.mktemp("spark-builtin"))
    yield reference
    reference.spark.close()


@pytest.fixture(scope="module")
def workload(stack, builtin):
    base, nn = stack["base"], stack["namenode"]
    response = requests.put(f"{nn.url}/webhdfs/v1/data?op=MKDIRS&permission=777&user.name=hdfs", timeout=30)
    assert response.status_code == 200, response.text
    hive = SparkProcess(["--catalog", "hive", "--uris", f"thrift://127.0.0.1:{stack['metastore'].port}",
                         "--warehouse", f"webhdfs://{nn.address}/user/hive/warehouse",
                         *session_args(build_jar(base / "spark-extension"))], base / "spark-hive.log")
    try:
        builtin.submit()         # the first time, both sessions work side by side
        hive.ready(TIMEOUT)
        hive.submit(PHASES, f"webhdfs://{nn.address}/data/ext")
        return hive.result(TIMEOUT), builtin.results()
    finally:
        hive.close()


@pytest.mark.parametrize("phase", ["setup", "queries", "teardown"])
def test_same_results_as_the_builtin_catalog(workload, phase):
    assert_same_results(workload[0], workload[1], phase)


def test_overwrite_and_truncate_keep_the_table(workload):
    """Static and dynamic overwrites through KeepDirectoriesCommitProtocol and TRUNCATE TABLE
    through HopsHiveExtensions: the same rows and partitions as Spark on local disk, and the
    tables survive."""
    test_same_results_as_the_builtin_catalog(workload, "overwrite")


def test_workload_leaves_consistent_metadata(workload, stack):
    assert invariant_violations(stack["db"]) == {}     # the MariaDB store's (vacuous on HBase)
    with thrift_client(stack["metastore"].port) as hms:
        assert hms.get_all_databases() == ["default"]


def test_drop_database_cascade_leaves_no_directory(workload, stack):
    """DROP DATABASE ... CASCADE removed the database directories.  (Hive's overwrite moves
    old files to the client's trash, /user/<user>/.Trash/Current/user/hive/warehouse/...,
    which mirrors the warehouse path: ask for the warehouse paths themselves.)"""
    for name in ("w1", "w2"):
        response = requests.get(f"{stack['namenode'].url}/webhdfs/v1/user/hive/warehouse/{name}.db",
                                params={"op": "GETFILESTATUS", "user.name": "hdfs"}, timeout=30)
        assert response.status_code == 404, f"{name}.db survived DROP DATABASE CASCADE: {response.text}"
