"""The deployment's Prometheus (roles/monitoring): the first host of the inventory's
`monitoring` group, port 9089, or $HOPSHIVE_PROMETHEUS_URL / $HOPSHIVE_ALERTMANAGER_URL.
Scenarios that read what the services report (targets up, alerts, builds) ask it."""

from __future__ import annotations

import os

import pytest
import requests

PROMETHEUS_PORT = 9089      # roles/monitoring monitoring_prometheus_port
ALERTMANAGER_PORT = 9093    # monitoring_alertmanager_port
SCRAPED = 90.0              # seconds for every target to have been scraped (interval 15 s) after a restart


def url(targets, variable: str = "HOPSHIVE_PROMETHEUS_URL", port: int = PROMETHEUS_PORT) -> str | None:
    """Prometheus' (or with ALERTMANAGER_PORT, Alertmanager's) base URL; None for an
    inventory without a monitoring group."""
    if os.environ.get(variable):
        return os.environ[variable].rstrip("/")
    if targets.source.startswith("inventory"):
        host = targets.group_hosts.get("monitoring")
        return f"http://{host}:{port}" if host else None
    return f"http://127.0.0.1:{port}"       # no inventory: this machine's deployment


def usable(targets) -> str:
    """Prometheus' base URL; skips without a monitoring group, and when it is unreachable
    skips (or fails, with HOPSHIVE_E2E_REQUIRED=1)."""
    base = url(targets)
    if base is None:
        pytest.skip(f"{targets.source} has no monitoring group")
    try:
        ready = requests.get(f"{base}/-/ready", timeout=5)
        problem = None if ready.status_code == 200 else f"answered {ready.status_code}"
    except requests.RequestException as exc:
        problem = f"{type(exc).__name__}: {exc}"
    if problem:
        reason = f"Prometheus at {base} is not usable: {problem}"
        if targets.required:
            pytest.fail(f"{reason} (HOPSHIVE_E2E_REQUIRED is set)", pytrace=False)
        pytest.skip(reason)
    return base


def api(base: str, path: str, **params):
    """The `data` of an HTTP API answer (path after /api/v1/)."""
    response = requests.get(f"{base}/api/v1/{path}", params=params, timeout=30)
    assert response.status_code == 200, f"{path} {params}: {response.status_code} {response.text[:200]}"
    return response.json()["data"]
