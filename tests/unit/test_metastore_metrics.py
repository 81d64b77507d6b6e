"""What the metastore's counters read from a call's result, and where /metrics is served
(no servers; the counters over the wire: tests/component/test_metastore_metrics.py)."""

from __future__ import annotations

import pytest
from prometheus_client import generate_latest

from hopshive.metastore.api import api
from hopshive.core.metrics import metrics_port
from hopshive.metastore.metrics import CallMetrics, partitions_returned


def _partitions(count: int, table: str = "events") -> list:
    return [api.Partition(values=[str(i)], dbName="db", tableName=table) for i in range(count)]


@pytest.mark.parametrize("value, expected", [
    (_partitions(3), ("db.events", 3)),
    (_partitions(1)[0], ("db.events", 1)),
    ([], None),
    (["ds=1", "ds=2"], None),                                  # names are not partitions
    (api.PartitionsByExprResult(partitions=_partitions(2), hasUnknownPartitions=False), ("db.events", 2)),
    ([api.PartitionSpec(dbName="db", tableName="t", partitionList=api.PartitionListComposingSpec(_partitions(4))),
      api.PartitionSpec(dbName="db", tableName="t", sharedSDPartitionSpec=api.PartitionSpecWithSharedSD(
          partitions=[api.PartitionWithoutSD(values=["x"])] * 2))], ("db.t", 6)),
    (api.Table(tableName="t", dbName="db"), None),
])
def test_partitions_returned_reads_every_shape_of_result(value, expected):
    assert partitions_returned(value) == expected


@pytest.mark.parametrize("settings, expected", [
    ({"port": 9083, "metrics": True, "metrics_port": None}, 9183),
    ({"port": 9085, "metrics": True, "metrics_port": ""}, 9185),
    ({"port": 9083, "metrics": True, "metrics_port": 9500}, 9500),
    ({"port": 9083, "metrics": False, "metrics_port": 9500}, None),
])
def test_metrics_port_defaults_to_the_thrift_port_plus_100(settings, expected):
    assert metrics_port(settings, "metastore") == expected


@pytest.mark.parametrize("bad", ["9183", 0, 70000, True, 91.5])
def test_a_bad_metrics_port_is_refused_with_its_value(bad):
    with pytest.raises(ValueError, match="metastore.metrics_port"):
        metrics_port({"port": 9083, "metrics": True, "metrics_port": bad}, "metastore")


def test_only_reads_count_partitions_and_errors_name_the_exception():
    counters = CallMetrics()
    counters.observe("get_partitions", 0.01, _partitions(5))
    counters.observe("add_partitions_req", 0.01, api.AddPartitionsResult(partitions=_partitions(7)))
    counters.observe("get_partitions_by_filter", 0.002, None, "MetaException")
    text = generate_latest(counters.registry).decode()
    assert 'hopshive_metastore_partitions_returned_total{method="get_partitions",table="db.events"} 5.0' in text
    assert 'method="add_partitions_req",table' not in text
    assert ('hopshive_metastore_call_errors_total{exception="MetaException",method="get_partitions_by_filter"} 1.0'
            in text)
    assert 'hopshive_metastore_calls_total{method="add_partitions_req"} 1.0' in text
