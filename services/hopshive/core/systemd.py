"""Readiness reported to systemd (``Type=notify`` units, sd_notify(3)).

With ``Type=simple`` a unit is "started" once its process exists, so ``systemctl
restart`` returned before the service listened and the next client was refused.  A service
calls :func:`ready` once it accepts connections; ``systemctl start`` and ``restart`` wait
for it.  Outside systemd (supervisord, a shell) ``$NOTIFY_SOCKET`` is unset and nothing is
sent."""

from __future__ import annotations

import logging
import os
import socket

log = logging.getLogger(__name__)


def notify(state: str) -> bool:
    """Send ``state`` (e.g. ``READY=1``) to the service manager; False when there is none."""
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return False
    if address.startswith("@"):                      # Linux abstract namespace
        address = "\0" + address[1:]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.sendto(state.encode(), address)
    except OSError as exc:
        log.warning("cannot notify the service manager", extra={"state": state, "error": str(exc)})
        return False
    return True


def ready() -> bool:
    """Tell systemd the service accepts connections now."""
    return notify("READY=1")
