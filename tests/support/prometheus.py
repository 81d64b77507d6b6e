"""Reading a service's Prometheus /metrics from outside, as Prometheus does: GET, then
prometheus_client's own text parser.  Nothing here imports a service."""

from __future__ import annotations

from dataclasses import dataclass

import requests
from prometheus_client.parser import text_string_to_metric_families


@dataclass(frozen=True)
class Sample:
    name: str
    labels: dict
    value: float


def scrape_url(url: str, timeout: float = 10.0, verify: str | bool = True) -> list[Sample]:
    """Every sample served at ``url`` (…/metrics).

    Raises:
        AssertionError: it does not answer 200 with Prometheus text.
    """
    response = requests.get(url, timeout=timeout, verify=verify)
    assert response.status_code == 200, f"{url} answered {response.status_code}: {response.text[:200]}"
    return [Sample(sample.name, dict(sample.labels), sample.value)
            for family in text_string_to_metric_families(response.text) for sample in family.samples]


def total(samples: list[Sample], name: str, **labels: str) -> float:
    """The sum of the samples called ``name`` whose labels include ``labels`` (0 when none:
    a counter nobody incremented yet is absent)."""
    return sum(s.value for s in samples
               if s.name == name and all(s.labels.get(key) == value for key, value in labels.items()))


def moved(before: list[Sample], after: list[Sample], name: str, **labels: str) -> float:
    """How far the samples ``name`` (with ``labels``) moved between two scrapes."""
    return total(after, name, **labels) - total(before, name, **labels)
