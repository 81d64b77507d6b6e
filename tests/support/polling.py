"""Waiting for something to become true: polling with a deadline, never a bare sleep."""

from __future__ import annotations

import time
from typing import Callable, TypeVar

T = TypeVar("T")


def wait_until(probe: Callable[[], T], deadline: float, describe: Callable[[T], str]) -> T:
    """Poll ``probe()`` until it returns something truthy and return that; after ``deadline``
    seconds fail with ``describe(last value)``, which should report the last observed state."""
    end = time.monotonic() + deadline
    delay = 0.02
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"gave up after {deadline:.0f}s: {describe(value)}")
        time.sleep(delay)
        delay = min(delay * 2, 0.25)
