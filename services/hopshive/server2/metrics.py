"""server2's Prometheus numbers, at http://<bind>:<server2.metrics_port, by default the
Thrift port + 100>/metrics (no login asked: counts, never statements or names).

Operations run on an engine are counted once done, per kind (``execute`` for SQL, the
metadata calls by name) and outcome, before the client can learn the outcome; rows are
counted as FetchResults sends them.  Sessions, engines and running operations are read from
the live registries when scraped.  server2 is one process: a registry of its own.
"""

from __future__ import annotations

from prometheus_client import Counter
from prometheus_client.core import GaugeMetricFamily

from ..core.metrics import registry as metrics_registry
from .engines import Engines
from .operations import CANCELED, ERROR, FINISHED, RUNNING, Operation, Registry

PREFIX = "hopshive_server2"
OUTCOMES = {FINISHED: "finished", ERROR: "failed", CANCELED: "cancelled"}


class Server2Metrics:
    def __init__(self, registry: Registry, engines: Engines):
        self.registry = metrics_registry()
        self.queries = Counter(f"{PREFIX}_queries", "Operations run on a Spark engine, once done, per kind "
                               "(execute: a SQL statement; else the metadata call) and outcome (finished, failed, "
                               "cancelled).", ["kind", "outcome"], registry=self.registry)
        for outcome in OUTCOMES.values():      # the statement series exist from the start, at 0
            self.queries.labels("execute", outcome)
        self.rows = Counter(f"{PREFIX}_rows_served", "Result rows sent to clients (FetchResults).",
                            registry=self.registry)
        self.registry.register(_Now(registry, engines))

    def done(self, operation: Operation) -> None:
        self.queries.labels(operation.request[0], OUTCOMES.get(operation.state, "failed")).inc()


class _Now:
    """Gauges read from the session registry and the engine pool at each scrape."""

    def __init__(self, registry: Registry, engines: Engines):
        self.sessions, self.engines = registry, engines

    def collect(self):
        with self.sessions.lock:
            sessions = len(self.sessions.sessions)
            running = sum(1 for o in self.sessions.operations.values() if o.state == RUNNING)
        with self.engines.lock:
            engines = len(self.engines.engines)
        yield GaugeMetricFamily(f"{PREFIX}_sessions", "Open client sessions.", value=sessions)
        yield GaugeMetricFamily(f"{PREFIX}_engines", "Spark engines started and not stopped (one per project "
                                "user).", value=engines)
        yield GaugeMetricFamily(f"{PREFIX}_queries_running", "Operations waiting for their engine's answer.",
                                value=running)
