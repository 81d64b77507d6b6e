"""Reading a metastore's Prometheus counters from outside, as a monitoring system would:
GET http://host:port/metrics, parsed with prometheus_client's own text parser.  Shared by
the component tests and the e2e harness (nothing here imports the service).

Endpoints are (host, metrics port) pairs; where a client spreads its calls over several
instances, counts are summed over all of them."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from tests.support.prometheus import Sample, scrape_url, total

PREFIX = "hopshive_metastore"
METRICS_PORT_OFFSET = 100     # an instance's default metrics port: its Thrift port + 100


# A Spark workload whose partition fetches are known (notes/facts.md): a predicate on the
# partition keys that Spark pushes down fetches exactly the matching partitions through
# get_partitions_by_filter; a query without one fetches them all.  Database w1 may be
# prefixed (tests.support.spark_workload.localize).
SPARK_TABLE = "w1.facts"
SPARK_SETUP = [
    "CREATE DATABASE w1",
    f"CREATE TABLE {SPARK_TABLE} (v INT, ds STRING, region STRING) USING parquet PARTITIONED BY (ds, region)",
    (f"INSERT INTO {SPARK_TABLE} VALUES (1, '2024-01-01', 'eu'), (2, '2024-01-01', 'us'), (3, '2024-01-02', 'eu'),"
     " (4, '2024-01-02', 'us'), (5, '2024-01-03', 'eu'), (6, '2024-01-03', 'us')"),
]
# (query, its rows, partitions fetched per read method)
SPARK_QUERIES = [
    (f"SELECT sum(v) FROM {SPARK_TABLE} WHERE ds = '2024-01-02'", [["7"]], {"get_partitions_by_filter": 2}),
    (f"SELECT sum(v) FROM {SPARK_TABLE} WHERE region IN ('eu')", [["9"]], {"get_partitions_by_filter": 3}),
    (f"SELECT sum(v) FROM {SPARK_TABLE} WHERE ds = '2024-01-09'", [["None"]], {}),
    (f"SELECT sum(v) FROM {SPARK_TABLE}", [["21"]], {"get_partitions": 6}),
]


def scrape(host: str, port: int, timeout: float = 10.0) -> list[Sample]:
    """Every sample the instance serves at /metrics.

    Raises:
        AssertionError: /metrics does not answer 200 with Prometheus text.
    """
    return scrape_url(f"http://{host}:{port}/metrics", timeout)


def partitions_returned(samples: list[Sample], **labels: str) -> int:
    """Partitions the metastore's read calls returned (labels: method, table=db.table)."""
    return int(total(samples, f"{PREFIX}_partitions_returned_total", **labels))


def calls(samples: list[Sample], method: str) -> int:
    return int(total(samples, f"{PREFIX}_calls_total", method=method))


def errors(samples: list[Sample], method: str, exception: str | None = None) -> int:
    labels = {"method": method} if exception is None else {"method": method, "exception": exception}
    return int(total(samples, f"{PREFIX}_call_errors_total", **labels))


def latency_count(samples: list[Sample], method: str) -> int:
    """How many calls of ``method`` the latency histogram observed."""
    return int(total(samples, f"{PREFIX}_call_seconds_count", method=method))


def scrape_all(endpoints: list[tuple]) -> list[Sample]:
    """Every sample of every endpoint ``(host, metrics port)``, together."""
    return [sample for host, port in endpoints for sample in scrape(host, port)]


@dataclass
class Fetched:
    """Partitions of one table the metastore returned while a ``fetched`` block ran, per
    read method (filled in when the block ends)."""
    table: str
    by_method: dict = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.by_method.values())


def _by_method(samples: list[Sample], table: str) -> dict[str, int]:
    counted: dict[str, int] = {}
    for sample in samples:
        if sample.name == f"{PREFIX}_partitions_returned_total" and sample.labels.get("table") == table:
            counted[sample.labels["method"]] = counted.get(sample.labels["method"], 0) + int(sample.value)
    return counted


@contextlib.contextmanager
def fetched(endpoints: list[tuple], table: str):
    """``with fetched(endpoints, "db.tbl") as got: <query>``, then ``got.total`` and
    ``got.by_method``: the partitions of ``table`` the metastore returned meanwhile."""
    result = Fetched(table)
    before = _by_method(scrape_all(endpoints), table)
    yield result
    after = _by_method(scrape_all(endpoints), table)
    result.by_method = {method: count - before.get(method, 0) for method, count in after.items()
                        if count != before.get(method, 0)}
