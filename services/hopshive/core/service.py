"""Process lifecycle shared by the services: a pre-forked pool of workers on one listening
socket, restarted if they die, reloaded on SIGHUP (core.reload) and stopped gracefully on
SIGTERM/SIGINT."""

from __future__ import annotations

import argparse
import gc
import logging
import os
import signal
import socket
import sys
import time
from typing import Callable

import yaml

from .config import ConfigError, load_config
from .db import Database, DriverError
from .migrations import validate
from .systemd import ready

log = logging.getLogger(__name__)


def listen(host: str, port: int, backlog: int = 1024) -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(backlog)
    sock.set_inheritable(True)
    return sock


def accepted(sock: socket.socket, stopping, poll: float = 0.5):
    """Yield (connection, address) from a listening socket until ``stopping`` (an Event) is
    set; the socket is polled every ``poll`` seconds so a stop is noticed."""
    sock.settimeout(poll)
    while not stopping.is_set():
        try:
            conn, address = sock.accept()
        except socket.timeout:
            continue
        except OSError:
            if stopping.is_set():
                break
            raise
        yield conn, address


def tune_gc() -> None:
    """Fewer and cheaper cyclic garbage collections.  What start-up made (modules, classes,
    configuration) is moved out of the collector's sight, so full collections stop
    re-scanning it (and forked workers share it without copy-on-write), and the youngest
    generation is collected every 50,000 allocations instead of 700.  A call's results are
    acyclic Thrift structs: listing 10k partitions allocates about 200k of them, and with
    Python's defaults collections took a fifth of that call's time."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)


def run_workers(count: int, worker: Callable[[int], None], grace: float = 30.0,
                reload: Callable[[], object] | None = None) -> int:
    """Fork ``count`` workers running ``worker(index)``, tell systemd the service is ready,
    and keep them running until a signal.  On SIGHUP, ``reload`` runs in the master (so a
    worker forked later starts reloaded) and in every worker.

    Returns the exit status for the master process.
    """
    tune_gc()
    children: dict[int, int] = {}
    stopping = False

    def spawn(index: int) -> None:
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            signal.signal(signal.SIGHUP, (lambda signum, frame: reload()) if reload else signal.SIG_IGN)
            try:
                worker(index)
                code = 0
            except Exception:
                log.exception("worker crashed", extra={"worker": index})
                code = 1
            logging.shutdown()
            os._exit(code)
        children[pid] = index

    def tell_children(signum: int) -> None:
        for pid in children:
            try:
                os.kill(pid, signum)
            except ProcessLookupError:
                pass

    def stop(signum, frame) -> None:
        nonlocal stopping
        stopping = True
        log.info("stopping", extra={"signal": signal.Signals(signum).name})
        tell_children(signal.SIGTERM)

    def hangup(signum, frame) -> None:
        if reload is not None:
            reload()
        tell_children(signal.SIGHUP)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGHUP, hangup)
    for index in range(count):
        spawn(index)
    ready()                     # the socket listens already: connections queue until a worker accepts
    deadline = None
    while children:
        if stopping and deadline is None:
            deadline = time.monotonic() + grace
        if deadline and time.monotonic() > deadline:
            for pid in children:
                os.kill(pid, signal.SIGKILL)
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            time.sleep(0.1)
            continue
        index = children.pop(pid)
        if not stopping:
            log.error("worker died; restarting", extra={"worker": index, "status": status})
            time.sleep(0.5)
            spawn(index)
    return 0


def service_parser(prog: str, doc: str, epilog: str) -> argparse.ArgumentParser:
    """The options every service shares: --config and --check-config."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.split("\n\n")[0], epilog=epilog)
    parser.add_argument("--config", help="YAML configuration file (default: $HOPSHIVE_CONFIG)")
    parser.add_argument("--check-config", action="store_true", help="print the effective configuration and exit")
    return parser


def effective_config(prog: str, defaults: dict, path: str | None) -> dict | None:
    """The merged configuration, or None after telling the operator what is wrong."""
    try:
        return load_config(defaults, path)
    except ConfigError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return None


def print_config(config: dict) -> None:
    """Print the configuration as YAML, with the database password hidden."""
    print(yaml.safe_dump(dict(config, database=dict(config["database"], password="***")), sort_keys=False))


def schemas_usable(database_config: dict, components: list, tables: dict[str, set[str]] | None = None) -> bool:
    """Check the schemas this service needs before serving; log why when they are not.
    ``tables``: per schema, the tables to look for when not all of them (see ``validate``)."""
    database = Database(database_config)
    try:
        problems = [p for component in components
                    for p in validate(database, component, (tables or {}).get(component.schema))]
    except DriverError as exc:
        log.error("cannot reach the database", extra={"error": str(exc)})
        return False
    finally:
        database.close()
    if problems:
        log.error("the database schema is not usable", extra={"problems": problems})
    return not problems
