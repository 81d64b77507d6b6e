"""The deployed metastore instances' Prometheus counters, each at its Thrift port + 100
(/metrics; roles/metastore metastore_metrics_port_offset), read so a scenario can assert
what a query fetched.  Clients such as Spark spread their calls over every instance of
hive.metastore.uris, so counts are summed over all of them and taken as a difference around
the work (``fetched``)."""

from __future__ import annotations

from tests.support import metastore_metrics as prom


def endpoint(instance: tuple) -> tuple:
    """(host, metrics port) of metastore instance ``(host, Thrift port)``."""
    return instance[0], instance[1] + prom.METRICS_PORT_OFFSET


def scrape(instances: list[tuple]) -> list[prom.Sample]:
    return prom.scrape_all([endpoint(instance) for instance in instances])


def fetched(instances: list[tuple], table: str):
    """``with fetched(metastores, "db.tbl") as got: <query>``; then ``got.total`` and
    ``got.by_method`` hold the partitions of the table the instances returned meanwhile."""
    return prom.fetched([endpoint(instance) for instance in instances], table)


def unavailable(instance: tuple) -> str | None:
    """None when the instance serves its counters, else why not."""
    host, port = endpoint(instance)
    try:
        prom.scrape(host, port, timeout=5.0)
        return None
    except Exception as exc:  # noqa: BLE001 -- any failure is the reason
        return f"/metrics at {host}:{port}: {type(exc).__name__}: {str(exc)[:200]}"
