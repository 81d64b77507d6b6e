"""What a Spark query fetches from the metastore, read from the metastore's /metrics: PySpark
4.3 (Hive 2.3 client) on the real hopshive-metastore (two workers) and hopshive-namenode,
running the workload of tests.support.metastore_metrics (the harness runs it on the
deployment: harness/test_metastore_metrics.py)."""

from __future__ import annotations

import pytest
import requests

from hopshive.core.db import Database
from tests.support import metastore_metrics as metrics
from tests.support.mariadb import _free_port
from tests.support.metastore import MetastoreProcess, settings
from tests.support.namenode import NamenodeServer
from tests.support.schemas import reset_schemas
from tests.support.spark_workload import SparkProcess

pytestmark = [pytest.mark.metastore, pytest.mark.spark]
TIMEOUT = 600


@pytest.fixture(scope="module")
def stack(mariadb, tmp_path_factory):
    """(Spark session, metrics endpoint) with the six-partition table made through Spark."""
    base = tmp_path_factory.mktemp("metrics-spark")
    database = Database(mariadb.config)
    reset_schemas(database)
    namenode = NamenodeServer(base / "namenode", mariadb.config, workers=1).start()
    config = settings(mariadb.config, namenode.address, workers=2, metrics_port=_free_port())
    metastore = MetastoreProcess(base / "metastore", config).start()
    spark = SparkProcess(["--catalog", "hive", "--uris", f"thrift://127.0.0.1:{metastore.port}",
                          "--warehouse", f"webhdfs://{namenode.address}/user/hive/warehouse"], base / "spark.log")
    try:
        created = spark.run({"setup": metrics.SPARK_SETUP}, timeout=TIMEOUT)["setup"]
        assert all(not isinstance(answer, dict) for answer in created.values()), created
        yield spark, ("127.0.0.1", config["metastore"]["metrics_port"])
    finally:
        spark.close()
        code = metastore.stop()
        namenode.stop()
        database.close()
    assert code == 0, metastore.log_tail()


@pytest.mark.parametrize("query, rows, fetched", metrics.SPARK_QUERIES)
def test_a_query_fetches_the_partitions_its_predicate_selects(stack, query, rows, fetched):
    spark, endpoint = stack
    with metrics.fetched([endpoint], metrics.SPARK_TABLE) as got:
        answer = spark.run({"q": [query]}, timeout=TIMEOUT)["q"][query]
    assert (answer, got.by_method) == (rows, fetched)


def test_metrics_answer_while_spark_holds_connections(stack):
    """The exporter runs beside the Thrift workers: a scrape during a session is served."""
    _, (host, port) = stack
    response = requests.get(f"http://{host}:{port}/metrics", timeout=5)
    assert response.status_code == 200 and "hopshive_metastore_calls_total" in response.text
