"""Map-join partition pruning (services/spark MapJoinPruning, issue 11): PySpark 4.3 with the
HopsHive extension on the real hopshive-metastore and hopshive-namenode.  Every query returns
the same rows with spark.hopshive.mapJoinPruning.enabled off and on; with it on, the
metastore's /metrics show that the fact table's partitions fetched are exactly the matching
ones (or, for the cases the rule must leave alone, exactly what Spark fetches without it)."""

from __future__ import annotations

import pytest

from hopshive.core.db import Database
from tests.support import mapjoin_workload as mj
from tests.support.mariadb import _free_port
from tests.support.metastore import MetastoreProcess, settings
from tests.support.namenode import NamenodeServer
from tests.support.schemas import reset_schemas
from tests.support.spark_extension import build_jar, session_args
from tests.support.spark_workload import SparkProcess

pytestmark = [pytest.mark.metastore, pytest.mark.spark]
TIMEOUT = 600


@pytest.fixture(scope="module")
def stack(mariadb, tmp_path_factory):
    """(Spark session with the extension, metrics endpoint) with the star schema made through Spark."""
    base = tmp_path_factory.mktemp("mapjoin")
    database = Database(mariadb.config)
    reset_schemas(database)
    namenode = NamenodeServer(base / "namenode", mariadb.config, workers=1).start()
    config = settings(mariadb.config, namenode.address, workers=2, metrics_port=_free_port())
    metastore = MetastoreProcess(base / "metastore", config).start()
    spark = SparkProcess(["--catalog", "hive", "--uris", f"thrift://127.0.0.1:{metastore.port}",
                          "--warehouse", f"webhdfs://{namenode.address}/user/hive/warehouse",
                          *session_args(build_jar(base / "spark-extension"))], base / "spark.log")
    try:
        created = spark.run({"setup": mj.SETUP}, timeout=TIMEOUT)["setup"]
        assert all(not isinstance(answer, dict) for answer in created.values()), created
        yield spark, [("127.0.0.1", config["metastore"]["metrics_port"])]
    finally:
        spark.close()
        code = metastore.stop()
        namenode.stop()
        database.close()
    assert code == 0, metastore.log_tail()


@pytest.mark.parametrize("case", mj.PRUNED, ids=lambda case: case.name)
def test_pruned_query_fetches_only_the_partitions_its_keys_reach(stack, case):
    """Including an empty key set, which fetches nothing and returns no rows."""
    spark, endpoints = stack
    mj.check_pruned(mj.run(spark, endpoints, case, timeout=TIMEOUT), case)


@pytest.mark.parametrize("case", mj.LEFT_ALONE, ids=lambda case: case.name)
def test_query_the_rule_cannot_prune_is_left_alone(stack, case):
    spark, endpoints = stack
    mj.check_left_alone(mj.run(spark, endpoints, case, timeout=TIMEOUT), case)


def test_failing_dimension_fails_the_query_with_sparks_error(stack):
    spark, endpoints = stack
    run = mj.run(spark, endpoints, mj.Case("failing", mj.FAILING, None), timeout=TIMEOUT)
    assert isinstance(run.on, dict) and isinstance(run.off, dict), (run.on, run.off)
    assert "CAST_INVALID_INPUT" in run.on["message"], run.on
    assert run.on["error"] == run.off["error"]


def test_explain_shows_the_pruning_and_the_dimension_is_scanned_once(stack):
    spark, _ = stack
    on, off = (mj.explain(spark, mj.STAR, enabled) for enabled in (True, False))
    assert "mapjoin_pruning(ds IN 2 values -> 6 partitions)" in on
    assert "mapjoin_pruning" not in off
    physical = on.split("== Physical Plan ==")[1]
    assert "LocalTableScan" in physical and "mj.dd" not in physical, physical
    assert "mj.dd" in off.split("== Physical Plan ==")[1]


def test_partitioned_dimension_keys_come_from_the_metastore(stack):
    """The dimension's data is not run ahead of the query: it is still scanned by the join."""
    spark, _ = stack
    case = next(c for c in mj.PRUNED if c.name == "partitioned-dimension")
    physical = mj.explain(spark, case.query, True).split("== Physical Plan ==")[1]
    assert "mapjoin_pruning(ds IN 2 values -> 6 partitions)" in physical
    assert "mj.dp" in physical, physical
