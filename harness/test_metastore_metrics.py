"""The deployed metastore instances count what they serve at /metrics (their Thrift port +
100): each instance's read calls move partitions_returned by exactly the partitions they
returned, a rejected filter counts as a MetaException, and a Spark query on the deployed
Spark configuration fetches only the partitions its predicate selects -- the measure the
map-join pruning scenarios use to assert what a query fetched (harness/support/metrics.py)."""

from __future__ import annotations

import pytest
from pymetastore.hive_metastore import ttypes as api

from harness.support import metastore as ms
from harness.support import metrics
from tests.support import metastore_metrics as prom
from tests.support.hms import database, partition, table
from tests.support.spark_workload import localize

pytestmark = pytest.mark.metastore
TIMEOUT = 900
DAYS = ("2024-01-01", "2024-01-02", "2024-01-03")
REGIONS = ("eu", "us", "ap")


@pytest.fixture
def events(counted_metastores, scratch, targets) -> tuple[str, str]:
    """(database, table) of a table with 9 partitions (ds x region) in the scenario's directory."""
    name = f"{scratch.prefix}m"
    with ms.client(counted_metastores[0], targets.user) as hive:
        hive.create_database(database(name, f"{scratch.uri}/m.db"))
        events = table(name, "events", parts=("ds string", "region string"), owner=targets.user)
        hive.create_table(events)
        hive.add_partitions([partition(events, (day, region)) for day in DAYS for region in REGIONS])
    return name, "events"


def test_each_instance_counts_the_partitions_its_reads_returned(counted_metastores, events, targets):
    db_name, tbl_name = events
    for instance in counted_metastores:
        with ms.client(instance, targets.user) as hive, metrics.fetched([instance], f"{db_name}.{tbl_name}") as got:
            returned = {
                "get_partitions_by_filter": len(hive.get_partitions_by_filter(db_name, tbl_name, 'ds = "2024-01-02"', -1)),
                "get_partitions_by_names": len(hive.get_partitions_by_names(
                    db_name, tbl_name, ["ds=2024-01-01/region=eu", "ds=2024-01-03/region=ap"])),
                "get_partitions": len(hive.get_partitions(db_name, tbl_name, -1)),
            }
        assert returned == {"get_partitions_by_filter": 3, "get_partitions_by_names": 2, "get_partitions": 9}
        assert got.by_method == returned, f"instance {instance[0]}:{instance[1]}"


def test_a_rejected_filter_counts_as_a_meta_exception(counted_metastores, events, targets):
    db_name, tbl_name = events
    for instance in counted_metastores:
        before = metrics.scrape([instance])
        with ms.client(instance, targets.user) as hive, pytest.raises(api.MetaException):
            hive.get_partitions_by_filter(db_name, tbl_name, 'ds = = "x"', -1)
        after = metrics.scrape([instance])
        assert (prom.errors(after, "get_partitions_by_filter", "MetaException")
                - prom.errors(before, "get_partitions_by_filter", "MetaException")) == 1, f"instance {instance}"


@pytest.fixture(scope="module")
def spark_facts(hive_spark, counted_metastores, targets, run_id, db):
    """The six-partition table of tests.support.metastore_metrics, made by the deployed
    Spark session in a database of this module's own; returns its db.table name."""
    prefix = f"hh_{run_id}_metrics_"
    started = ms.now(db)
    ms.drop_databases(counted_metastores[0], targets.user, prefix)
    created = hive_spark.run({"setup": prom.SPARK_SETUP}, prefix=prefix, timeout=TIMEOUT)["setup"]
    assert all(not isinstance(answer, dict) for answer in created.values()), created
    yield prefix, localize(prom.SPARK_TABLE, prefix)
    ms.drop_databases(counted_metastores[0], targets.user, prefix)
    ms.sweep_orphans(targets.db, started)


@pytest.mark.spark
@pytest.mark.parametrize("query, rows, fetched", prom.SPARK_QUERIES)
def test_a_spark_query_fetches_the_partitions_its_predicate_selects(hive_spark, spark_facts, counted_metastores,
                                                                     query, rows, fetched):
    prefix, facts = spark_facts
    with metrics.fetched(counted_metastores, facts) as got:
        answer = hive_spark.run({"q": [query]}, prefix=prefix, timeout=TIMEOUT)["q"][query]
    assert (answer, got.by_method) == (rows, fetched)
