"""The platform API's Prometheus numbers, at /metrics on its own port (no login asked, as for
/health: counts, never names): login attempts by outcome, so an operator sees refusals and
lockouts (an address or account that failed too often is refused whatever it sends).

The platform is one process: its counters live in a registry of its own.
"""

from __future__ import annotations

from prometheus_client import Counter

from ..core.metrics import registry, render
from .exceptions import AccountRefused, BadCredentials, PlatformError, TooManyFailures

PREFIX = "hopshive_platform"
OK = "ok"
# A refused login's outcome label, by the error it was refused with (first match).
OUTCOMES = {TooManyFailures: "locked_out", AccountRefused: "refused", BadCredentials: "bad_credentials"}
OTHER = "invalid"


class LoginMetrics:
    def __init__(self):
        self.registry = registry()
        self.logins = Counter(f"{PREFIX}_logins", "Login attempts, per outcome: ok; bad_credentials (wrong e-mail "
                              "or password); refused (account blocked, not activated or needing two factors); "
                              "locked_out (too many recent failures of the account or address); invalid.",
                              ["outcome"], registry=self.registry)
        for outcome in (OK, OTHER, *OUTCOMES.values()):   # every series exists from the start, at 0
            self.logins.labels(outcome)

    def succeeded(self) -> None:
        self.logins.labels(OK).inc()

    def refused(self, exc: PlatformError) -> None:
        self.logins.labels(next((label for kind, label in OUTCOMES.items() if isinstance(exc, kind)), OTHER)).inc()

    def text(self) -> bytes:
        return render(self.registry)
