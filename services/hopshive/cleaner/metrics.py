"""The cleaner's counters, rendered as Prometheus text (``/metrics``).

The lag from a binlog event to its cleanup is a histogram, so that Prometheus can tell its
p99 (roles/monitoring alerts when it passes 5 s)."""

from __future__ import annotations

import threading
import time

from ..core.metrics import registry
from ..core.metrics import render as render_registry

PREFIX = "hopshive_cleaner"
LAG_BUCKETS = (0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 30.0, 60.0, 300.0)   # seconds; the server's clock has 1 s steps


class Metrics:
    def __init__(self):
        self._lock = threading.Lock()
        self._build = registry()       # hopshive_build_info, rendered after the counters
        self.events_read = 0
        self.transactions = 0
        self.found: dict[str, int] = {}
        self.removed: dict[str, int] = {}
        self.lag_last = 0.0
        self.lag_max = 0.0
        self.lag_sum = 0.0
        self.lag_count = 0
        self.lag_buckets = [0] * len(LAG_BUCKETS)     # events at or below each bound (cumulative)
        self.last_sweep_at = 0.0
        self.last_sweep_seconds = 0.0
        self.sweeps = 0
        self.leader = False
        self.epoch = 0
        self.position = ""
        self.errors = 0

    def count(self, table: dict[str, int], kind: str, n: int) -> None:
        if n:
            with self._lock:
                table[kind] = table.get(kind, 0) + n

    def lag(self, seconds: float) -> None:
        """Time from a binlog event (its commit, by the server's clock) to its cleanup."""
        with self._lock:
            self.lag_last = seconds
            self.lag_max = max(self.lag_max, seconds)
            self.lag_sum += seconds
            self.lag_count += 1
            for index, bound in enumerate(LAG_BUCKETS):
                if seconds <= bound:
                    self.lag_buckets[index] += 1

    def sweep(self, started: float) -> None:
        with self._lock:
            self.last_sweep_at = time.time()
            self.last_sweep_seconds = self.last_sweep_at - started
            self.sweeps += 1

    def render(self) -> str:
        with self._lock:
            lines = [
                f"# HELP {PREFIX}_leader 1 while this instance holds the lease and acts",
                f"# TYPE {PREFIX}_leader gauge", f"{PREFIX}_leader {int(self.leader)}",
                f"# TYPE {PREFIX}_lease_epoch gauge", f"{PREFIX}_lease_epoch {self.epoch}",
                f"# HELP {PREFIX}_binlog_events_total row events read from the binlog",
                f"# TYPE {PREFIX}_binlog_events_total counter", f"{PREFIX}_binlog_events_total {self.events_read}",
                f"# TYPE {PREFIX}_binlog_transactions_total counter",
                f"{PREFIX}_binlog_transactions_total {self.transactions}",
                f"# HELP {PREFIX}_orphans_found_total orphans found, per kind",
                f"# TYPE {PREFIX}_orphans_found_total counter",
                *(f'{PREFIX}_orphans_found_total{{kind="{k}"}} {v}' for k, v in sorted(self.found.items())),
                f"# HELP {PREFIX}_orphans_removed_total orphans removed, per kind",
                f"# TYPE {PREFIX}_orphans_removed_total counter",
                *(f'{PREFIX}_orphans_removed_total{{kind="{k}"}} {v}' for k, v in sorted(self.removed.items())),
                f"# HELP {PREFIX}_lag_seconds binlog event (server commit time, 1 s resolution) to cleaned",
                f"# TYPE {PREFIX}_lag_seconds histogram",
                *(f'{PREFIX}_lag_seconds_bucket{{le="{bound:g}"}} {count}'
                  for bound, count in zip(LAG_BUCKETS, self.lag_buckets)),
                f'{PREFIX}_lag_seconds_bucket{{le="+Inf"}} {self.lag_count}',
                f"{PREFIX}_lag_seconds_sum {self.lag_sum:.6f}", f"{PREFIX}_lag_seconds_count {self.lag_count}",
                f"# TYPE {PREFIX}_lag_last_seconds gauge", f"{PREFIX}_lag_last_seconds {self.lag_last:.6f}",
                f"# TYPE {PREFIX}_lag_max_seconds gauge", f"{PREFIX}_lag_max_seconds {self.lag_max:.6f}",
                f"# TYPE {PREFIX}_last_sweep_timestamp_seconds gauge",
                f"{PREFIX}_last_sweep_timestamp_seconds {self.last_sweep_at:.3f}",
                f"# TYPE {PREFIX}_last_sweep_duration_seconds gauge",
                f"{PREFIX}_last_sweep_duration_seconds {self.last_sweep_seconds:.3f}",
                f"# TYPE {PREFIX}_sweeps_total counter", f"{PREFIX}_sweeps_total {self.sweeps}",
                f"# TYPE {PREFIX}_errors_total counter", f"{PREFIX}_errors_total {self.errors}",
            ]
        return "\n".join(lines) + "\n" + render_registry(self._build).decode()
