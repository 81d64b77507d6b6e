"""A namenode's Prometheus numbers, at /metrics on its WebHDFS port (no token asked, as for
/health: counts, never names).

Every WebHDFS request is counted and timed in one place (``WebHdfs.answer``), per op and
status class.  The workers are forked, so the counters live in the instance's multiprocess
directory (hopshive.core.metrics) and whichever worker answers the scrape serves the sum.
Block health, live holders and the block directory's disk are read when scraped: an
operator sees now, not the last replication round.
"""

from __future__ import annotations

import shutil

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily

from ..core.metrics import LATENCY_BUCKETS, summed
from ..namespace.namespace import Namespace
from ..namespace.replication import block_health

PREFIX = "hopshive_namenode"
OTHER_OP = "other"      # the op label of requests naming no known operation (bounded labels)


class NamenodeMetrics:
    """The counters of one namenode and the registry /metrics renders."""

    def __init__(self, namespace: Namespace, directory: str):
        """``directory``: the instance's multiprocess directory, made before the fork."""
        own = CollectorRegistry()     # unread: the values live in the directory's files
        self.operations = Counter(f"{PREFIX}_operations", "WebHDFS requests answered, per op and status class "
                                  "(2xx, 3xx, 4xx, 5xx).", ["op", "status"], registry=own)
        self.seconds = Histogram(f"{PREFIX}_operation_seconds", "Time to answer a WebHDFS request (a streamed "
                                 "one: to its last byte), per op.", ["op"], buckets=LATENCY_BUCKETS, registry=own)
        self.registry = summed(directory)
        self.registry.register(_Health(namespace))

    def observe(self, op: str, seconds: float, status: int) -> None:
        """Count one request: ``op`` a known operation's name, or OTHER_OP."""
        self.operations.labels(op, f"{status // 100}xx").inc()
        self.seconds.labels(op).observe(seconds)


class _Health:
    """Gauges read from the database and the disk at each scrape."""

    def __init__(self, namespace: Namespace):
        self.ns = namespace

    def collect(self):
        holders = self.ns.holders
        under, missing = self.ns.db.run(lambda tx: block_health(tx, holders), readonly=True)
        yield GaugeMetricFamily(f"{PREFIX}_under_replicated_blocks", "Closed blocks with fewer sound replicas "
                                "than their file's replication (and at least one).", value=under)
        yield GaugeMetricFamily(f"{PREFIX}_missing_blocks", "Closed blocks without a sound replica on a "
                                "holder seen within holder_timeout.", value=missing)
        yield GaugeMetricFamily(f"{PREFIX}_live_holders", "Namenodes holding blocks that heartbeated within "
                                "dead_after, this one included.", value=len(holders.live(fresh=True)))
        disk = shutil.disk_usage(self.ns.blocks.root)
        yield GaugeMetricFamily(f"{PREFIX}_block_dir_size_bytes", "Size of the file system holding the block "
                                "directory.", value=disk.total)
        yield GaugeMetricFamily(f"{PREFIX}_block_dir_free_bytes", "Bytes free (to this service's account) on "
                                "the file system holding the block directory.", value=disk.free)
