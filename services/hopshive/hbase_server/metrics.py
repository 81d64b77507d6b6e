"""hopshive-hbase's Prometheus numbers, at http://<bind>:<hbase.metrics_port, by default the
Thrift port + 100>/metrics (no login asked: counts, never rows or table names).

Every Thrift call is counted once answered, per method and outcome (``ok``; ``error``: a
declared IDL exception such as IllegalArgument; ``internal``: a bug, logged with its
traceback), with its latency.  Open scanners, tables and the LMDB map's use are read when
scraped.  The server is one process: a registry of its own.
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram
from prometheus_client.core import GaugeMetricFamily

from ..core.metrics import LATENCY_BUCKETS, registry as metrics_registry

PREFIX = "hopshive_hbase"
OUTCOMES = ("ok", "error", "internal")


class HBaseMetrics:
    def __init__(self, handler, storage):
        self.registry = metrics_registry()
        self.calls = Counter(f"{PREFIX}_calls", "Thrift calls answered, per method and outcome (ok; error: the "
                             "call's declared exception; internal: a server bug).", ["method", "outcome"],
                             registry=self.registry)
        self.seconds = Histogram(f"{PREFIX}_call_seconds", "Time to answer a Thrift call, per method.", ["method"],
                                 buckets=LATENCY_BUCKETS, registry=self.registry)
        self.registry.register(_Now(handler, storage))

    def observe(self, method: str, outcome: str, seconds: float) -> None:
        """One answered call (wire.ErrorMapping calls this)."""
        self.calls.labels(method, outcome).inc()
        self.seconds.labels(method).observe(seconds)


class _Now:
    """Gauges read from the handler and the store at each scrape."""

    def __init__(self, handler, storage):
        self.handler, self.storage = handler, storage

    def collect(self):
        used, size = self.storage.usage()
        yield GaugeMetricFamily(f"{PREFIX}_scanners_open", "Scanners opened and neither closed nor expired.",
                                value=self.handler.open_scanners())
        yield GaugeMetricFamily(f"{PREFIX}_tables", "Tables in the store.", value=len(self.storage.table_names()))
        yield GaugeMetricFamily(f"{PREFIX}_store_used_bytes", "Bytes of the LMDB map in use.", value=used)
        yield GaugeMetricFamily(f"{PREFIX}_store_size_bytes", "The LMDB map's size (hbase.map_size_mb): the most "
                                "data the server can hold.", value=size)
