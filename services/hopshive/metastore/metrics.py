"""Prometheus counters of the Thrift calls: calls, latency and errors per method, and the
partitions each read returned (what a query really fetched from the metastore).

The Thrift processor counts every call in one place (``CallMetrics.observe``).  The serving
workers are forked processes, so their counters live in prometheus_client's multiprocess
files in one directory per instance (hopshive.core.metrics), and the master process serves
the sum at ``http://<bind>:<metrics port>/metrics``: counters survive a worker's restart and
no worker's port is ever in question.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram

from ..core.metrics import LATENCY_BUCKETS
from .api import api

PREFIX = "hopshive_metastore"


def _partition_list(value) -> list:
    """The partitions a call's result carries: a Partition, a list of them, PartitionSpecs
    or a result struct holding either."""
    if isinstance(value, api.Partition):
        return [value]
    if isinstance(value, api.PartitionSpec):
        composed = value.partitionList or value.sharedSDPartitionSpec
        return list(composed.partitions or []) if composed else []
    if isinstance(value, list):
        if value and isinstance(value[0], api.Partition):
            return value
        return [part for item in value for part in _partition_list(item)]
    for attribute in ("partitions", "partitionSpec"):
        inner = getattr(value, attribute, None)
        if inner is not None:
            return _partition_list(inner)
    return []


def _table_of(value, partitions: list) -> str:
    """``db.table`` of the returned partitions (one call reads one table)."""
    first = value[0] if isinstance(value, list) and value else value
    holder = first if isinstance(first, api.PartitionSpec) else partitions[0]
    return f"{holder.dbName}.{holder.tableName}"


def partitions_returned(value) -> tuple[str, int] | None:
    """(``db.table``, how many partitions) a read call's result carries; None for none."""
    partitions = _partition_list(value)
    if not partitions:
        return None
    return _table_of(value, partitions), len(partitions)


class CallMetrics:
    """The counters one metastore keeps, in their own registry (several metastores may run
    in one test process)."""

    def __init__(self, registry: CollectorRegistry | None = None):
        self.registry = registry or CollectorRegistry()
        self.calls = Counter(f"{PREFIX}_calls", "Thrift calls served, per method.", ["method"],
                             registry=self.registry)
        self.seconds = Histogram(f"{PREFIX}_call_seconds", "Time to run a Thrift call and encode its "
                                 "reply (reading the request and sending the reply excluded), per method.", ["method"],
                                 buckets=LATENCY_BUCKETS, registry=self.registry)
        self.errors = Counter(f"{PREFIX}_call_errors", "Thrift calls that answered an exception, per "
                              "method and the exception type the client received.", ["method", "exception"],
                              registry=self.registry)
        self.partitions = Counter(f"{PREFIX}_partitions_returned", "Partitions returned by read calls "
                                  "(get_*), per method and table (db.table).", ["method", "table"],
                                  registry=self.registry)

    def observe(self, method: str, seconds: float, value=None, error: str | None = None) -> None:
        """Count one call: its time, the exception class its reply carried (if any), and
        for reads (``get_*``) the partitions in ``value``."""
        self.calls.labels(method).inc()
        self.seconds.labels(method).observe(seconds)
        if error is not None:
            self.errors.labels(method, error).inc()
        elif method.startswith("get_") and value is not None:
            returned = partitions_returned(value)
            if returned is not None:
                self.partitions.labels(method, returned[0]).inc(returned[1])
