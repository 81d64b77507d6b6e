"""Prometheus plumbing every service shares: where /metrics is served, the latency buckets,
counters summed over forked workers, and the text a scrape gets.

Services with forked workers (metastore, namenode) keep their counters in prometheus_client's
multiprocess files, one directory per instance (``use_directory``, called before the fork),
so whichever process answers /metrics serves the sum and counters survive a worker's
restart.  Single-process services (server2, platform) use a registry of their own.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from socketserver import BaseServer

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest, multiprocess, \
    start_http_server, values

from .build import BuildInfo

METRICS_PORT_OFFSET = 100        # a Thrift service's default metrics port: its port + 100 (9183 for 9083)
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
CONTENT_TYPE = CONTENT_TYPE_LATEST


def metrics_port(settings: dict, section: str) -> int | None:
    """The port a Thrift service (its config ``section``) serves /metrics on, or None when
    ``metrics`` is off: ``metrics_port``, or when empty the service's port + 100.

    Raises:
        ValueError: metrics_port is neither empty nor a port number.
    """
    if not settings["metrics"]:
        return None
    port = settings["metrics_port"]
    if port is None or port == "":
        return int(settings["port"]) + METRICS_PORT_OFFSET
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        raise ValueError(f"{section}.metrics_port must be a port number or empty, not {port!r}")
    return port


def use_directory(service: str) -> str:
    """Keep this process's (and its forked workers') counters in a fresh multiprocess
    directory; returns it.  prometheus_client chooses how it stores values when it is
    imported (from $PROMETHEUS_MULTIPROC_DIR), before the service knows its directory, so
    the choice is made again here; only counters made afterwards use it."""
    directory = tempfile.mkdtemp(prefix=f"hopshive-{service}-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = directory
    values.ValueClass = values.MultiProcessValue()
    return directory


def registry() -> CollectorRegistry:
    """A registry of a service's own, serving the build it runs (hopshive.core.build)."""
    made = CollectorRegistry()
    made.register(BuildInfo())
    return made


def summed(directory: str) -> CollectorRegistry:
    """A registry that reads the sum of every worker's counters in ``directory``."""
    made = registry()
    multiprocess.MultiProcessCollector(made, path=directory)
    return made


def render(registry: CollectorRegistry) -> bytes:
    """The Prometheus text of ``registry`` (served with CONTENT_TYPE)."""
    return generate_latest(registry)


def serve(host: str, port: int, registry: CollectorRegistry) -> BaseServer:
    """Serve ``registry`` at http://host:port/metrics from a daemon thread of this process.

    Raises:
        OSError: the port cannot be bound.
    """
    server, _thread = start_http_server(port, addr=host, registry=registry)
    return server


def stop(server: BaseServer | None, directory: str | None = None) -> None:
    """Stop serving and remove the counters' directory."""
    if server is not None:
        server.shutdown()
        server.server_close()
    if directory is not None:
        shutil.rmtree(directory, ignore_errors=True)
