"""SIGHUP (``systemctl reload``, ``hopshive-supervisorctl signal HUP <program>``): a running
service reads its configuration file again for what it can change without dropping a
connection: its TLS certificate and key (a renewed certificate: new connections get it, open
ones keep theirs) and its log level.  Anything else in the file takes effect at the next
restart.  A file or certificate that cannot be used is logged and changes nothing: the
service goes on as it was."""

from __future__ import annotations

import logging
import signal
import ssl
from typing import Callable

from .config import ConfigError, load_config
from .tls import reload_server_context

log = logging.getLogger(__name__)


def reloader(defaults: dict, path: str | None, section: str | None = None,
             context: ssl.SSLContext | None = None) -> Callable[[], bool]:
    """What a reload does for the service whose configuration is ``defaults`` merged with
    the file ``path`` (as at start-up): its log level and, with ``section``, the TLS it
    serves with ``context`` from that section's tls_* settings (None: plain TCP).  Without
    ``section`` (a process that serves nothing itself), the log level alone.  The callable
    returns whether the reload took."""
    def reload() -> bool:
        try:
            config = load_config(defaults, path)
            level = str(config["log_level"]).upper()
            if not isinstance(logging.getLevelName(level), int):
                raise ConfigError(f"log_level {config['log_level']!r} is not a level")
            if section is not None:
                reload_server_context(context, config[section], section)
        except ConfigError as exc:
            log.error("reload refused; going on as before", extra={"error": str(exc)})
            return False
        logging.getLogger().setLevel(level)
        log.info("reloaded", extra={"log_level": level.lower(), "tls": context is not None})
        return True
    return reload


def on_hangup(reload: Callable[[], object]) -> None:
    """Run ``reload`` when the process gets SIGHUP (in its main thread, between calls)."""
    signal.signal(signal.SIGHUP, lambda signum, frame: reload())
