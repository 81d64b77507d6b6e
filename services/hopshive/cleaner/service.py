"""The cleaner service: lease loop, leader work (binlog tail and sweeps), /health and /metrics.

Every instance runs the lease loop (``run``): renew or try to take the lease every
``renew_seconds``.  While it holds the lease it runs a *term*: a thread that tails the
binlog from the stored GTID position and cleans what each transaction touched, and a thread
that sweeps everything at the start of the term and every ``sweep_interval_minutes`` (old
scratch and staging directories included).  Both stop as soon as the lease cannot be
trusted (``Lease.valid``), and every cleanup transaction is fenced.  SIGTERM ends the term,
releases the lease (a follower takes over at its next renewal) and exits 0.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import random
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from ..core.build import RUNNING
from ..core.config import DATABASE_DEFAULTS
from ..core.db import Database, DriverError, Tx, endpoints
from ..core.systemd import ready
from ..exceptions import HopsHiveError
from ..metastore.exceptions import MetastoreError
from ..metastore.locations import Locations
from . import positions, refs
from .cleanup import Cleaner
from .events import Touches
from .exceptions import Fenced, PositionLost
from .follower import BinlogFollower, connection_settings
from .hbase import HBaseStoreCleaner
from .lease import Lease
from .metrics import Metrics
from .scratch import NamespaceRemover, collect

log = logging.getLogger("hopshive.cleaner")

DEFAULTS = {
    "log_level": "info",
    "database": dict(DATABASE_DEFAULTS, user="hops_cleaner"),
    "cleaner": {
        "name": "cleaner",            # the lease and position rows shared by one group of instances
        "instance": "",               # this instance's name in the lease; empty: host:pid
        "listen_host": "127.0.0.1",   # /health and /metrics
        "listen_port": 9190,
        "server_id": 0,               # binlog replica id, unique per server; 0: random
        "lease_seconds": 6.0,
        "renew_seconds": 1.0,
        "lease_margin_seconds": 2.0,  # stop acting this long before the lease would expire
        "grace_seconds": 0.0,         # ignore rows younger than this (fsck's grace period)
        "batch_size": 500,            # rows per cleanup transaction
        "sweep_interval_minutes": 10.0,
        "sweep_at_start": True,       # sweep when a term starts (off: rely on the stored position alone)
        "heartbeat_seconds": 1.0,     # binlog heartbeat: how often an idle stream wakes up
        "position_save_seconds": 5.0,  # save the position at least this often when idle
        "stop_grace_seconds": 10.0,
    },
    "scratch": {
        "enabled": True,
        "roots": ["/tmp/hive"],
        "staging_names": [".hive-staging*", "_temporary"],
        "max_age_days": 7.0,
        "dry_run": False,
    },
    "namespace": {
        "enabled": True,              # delete index-table and scratch directories through the namespace
        "superuser": "hdfs",
        "supergroup": "supergroup",
        "data_dir": "/var/lib/hopshive/cleaner",
        "dead_after_seconds": 30.0,
    },
    "hbase_store": {                  # the HBase store's metadata follows its directories too
        "enabled": False,
        "host": "127.0.0.1",
        "port": 9090,
        "table_prefix": "hopshive_",  # as the HBase-store metastore's hbase.table_prefix
        "pool_size": 2,
        "timeout": 30.0,
        "namespace_uris": ["webhdfs://127.0.0.1:9870", "hdfs://127.0.0.1:8020"],  # as its metastore's
        "warehouse": "webhdfs://127.0.0.1:9870/user/hive/warehouse",
    },
}


def config_problems(config: dict) -> list[str]:
    """What makes a configuration unusable (checked before anything starts)."""
    c, problems = config["cleaner"], []
    lease, renew, margin = (float(c[k]) for k in ("lease_seconds", "renew_seconds", "lease_margin_seconds"))
    if not 0 < margin < lease:
        problems.append(f"cleaner.lease_margin_seconds ({margin:g}) must be positive and below "
                        f"cleaner.lease_seconds ({lease:g})")
    elif not 0 < 2 * renew < lease - margin:
        problems.append(f"cleaner.renew_seconds ({renew:g}) must fit twice into lease_seconds - lease_margin_seconds "
                        f"({lease - margin:g}), or a leader stops acting between two renewals")
    if int(c["batch_size"]) < 1:
        problems.append("cleaner.batch_size must be at least 1")
    if float(config["scratch"]["max_age_days"]) <= 0:
        problems.append("scratch.max_age_days must be positive")
    hb = config["hbase_store"]
    if hb["enabled"]:
        try:
            Locations(list(hb["namespace_uris"]), hb["warehouse"])
        except (ValueError, MetastoreError) as exc:
            problems.append(f"hbase_store: {exc}")
    return problems


class CleanerService:
    def __init__(self, config: dict):
        self.config = config
        c = config["cleaner"]
        self.c = c
        self.db = Database(config["database"])
        self.owner = c["instance"] or f"{socket.gethostname()}:{os.getpid()}"
        self.lease = Lease(self.db, c["name"], self.owner, float(c["lease_seconds"]), float(c["lease_margin_seconds"]))
        self.metrics = Metrics()
        self.stopping = threading.Event()
        self.server_id = int(c["server_id"]) or random.randint(1 << 20, (1 << 31) - 1)
        self._term: threading.Thread | None = None
        self._term_over = threading.Event()
        self._last_renewal = 0.0
        self._http: ThreadingHTTPServer | None = None
        self._endpoint = -1

    # ------------------------------------------------------------ lease loop
    def may_act(self) -> bool:
        return not self.stopping.is_set() and not self._term_over.is_set() and self.lease.valid()

    def fence(self, tx: Tx) -> int:
        return self.lease.fence(tx)

    def run(self) -> int:
        self.start_http()
        log.info("started", extra={"owner": self.owner, "lease": self.c["name"], "server_id": self.server_id})
        ready()
        try:
            while not self.stopping.is_set():
                self.renew_once()
                self.stopping.wait(float(self.c["renew_seconds"]))
        finally:
            self.shutdown()
        return 0

    def renew_once(self) -> None:
        try:
            self.lease.acquire_or_renew()
            self._last_renewal = time.monotonic()
        except (DriverError, HopsHiveError) as exc:  # keep acting only until the local deadline
            log.warning("cannot renew the lease", extra={"error": str(exc)})
        leading = self.lease.valid()
        self.metrics.leader, self.metrics.epoch = leading, self.lease.epoch or 0
        if leading and (self._term is None or not self._term.is_alive()):
            self._term_over = threading.Event()
            self._term = threading.Thread(target=self._lead, args=(self._term_over,), name="cleaner-term", daemon=True)
            self._term.start()
        elif not leading and self._term is not None and self._term.is_alive():
            self._term_over.set()

    def shutdown(self) -> None:
        self.stopping.set()
        self.lease.expire_locally()
        if self._term is not None:
            self._term.join(float(self.c["stop_grace_seconds"]))
        try:
            self.lease.release()
        except DriverError as exc:
            log.warning("cannot release the lease; it expires on its own", extra={"error": str(exc)})
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
        self.db.close()
        log.info("stopped", extra={"owner": self.owner})

    # ------------------------------------------------------------ a leader's term
    def _lead(self, over: threading.Event) -> None:
        remover = None
        sweeper = None
        try:
            ns = self.config["namespace"]
            if ns["enabled"]:
                remover = NamespaceRemover(self.db, ns, self.owner)
            hbase = None
            if self.config["hbase_store"]["enabled"]:
                hbase = HBaseStoreCleaner(self.db, self.config["hbase_store"], self.fence, self.metrics, remover)
            cleaner = Cleaner(self.db, self.fence, self.metrics, float(self.c["grace_seconds"]),
                              int(self.c["batch_size"]), remover, hbase)
            start = self._start_position()
            sweeper = threading.Thread(target=self._sweeps, args=(cleaner, remover, over), name="cleaner-sweeps",
                                       daemon=True)
            sweeper.start()
            while self.may_act():
                try:
                    self._tail(cleaner, remover, start)
                except PositionLost as exc:
                    # The sweep that every term starts with (and repeats) covers what was lost.
                    log.warning("binlog position lost; sweeping and tailing from now", extra={"error": str(exc)})
                    start = self._fresh_position()
                    cleaner.sweep()
        except Fenced as exc:
            log.info("fenced: stopping", extra={"reason": str(exc)})
        except Exception:
            self.metrics.errors += 1
            log.exception("leader term failed; the lease loop starts a new one")
            time.sleep(1.0)
        finally:
            over.set()
            if sweeper is not None:
                sweeper.join(float(self.c["stop_grace_seconds"]))
            if remover is not None:
                try:
                    remover.close()
                except DriverError:
                    pass

    def _start_position(self) -> positions.GtidPosition:
        stored, _ = self.db.run(lambda tx: positions.load(tx, self.c["name"]), readonly=True)
        if not stored:  # everything before now is the start sweep's job
            log.info("no stored position: tailing from the server's current one")
            return self._fresh_position()
        if not self.db.run(lambda tx: positions.refs_seeded(tx, self.c["name"]), readonly=True):
            self._rebuild_refs()
            self.db.run(lambda tx: positions.refs_done(tx, self.c["name"], self.fence(tx)))
        log.info("resuming the binlog", extra={"gtid": str(stored)})
        return stored

    def _fresh_position(self) -> positions.GtidPosition:
        """The server's position now, stored once the record of what SDs use has been
        rebuilt (refs.py): the binlog from there on keeps it exact."""
        start = self.db.run(positions.server_position, readonly=True)
        self._rebuild_refs()
        self._save(start, refs_rebuilt=True)
        log.info("tailing from", extra={"gtid": str(start)})
        return start

    def _rebuild_refs(self) -> None:
        started = time.monotonic()
        rows = refs.rebuild(self.db, self.fence)
        log.info("rebuilt the record of what storage descriptors use",
                 extra={"rows": rows, "seconds": round(time.monotonic() - started, 3)})

    def _save(self, position: positions.GtidPosition, refs_rebuilt: bool = False) -> None:
        def work(tx: Tx) -> None:
            positions.save(tx, self.c["name"], position, self.fence(tx), refs_rebuilt)
        self.db.run(work)
        self.metrics.position = str(position)

    def _endpoint_settings(self) -> list[dict]:
        return [connection_settings(self.config["database"], e) for e in endpoints(self.config["database"])]

    def _tail(self, cleaner: Cleaner, remover: NamespaceRemover | None, start: positions.GtidPosition) -> None:
        """Read the binlog in one thread and clean in this one: whatever transactions
        arrived while the last batch was being cleaned are merged and cleaned together, so a
        burst costs a few cleanups instead of one per transaction."""
        # Each new stream starts at the next database node: after a node failure the GTID
        # position (the same on every Galera node) resumes on another one.
        settings = self._endpoint_settings()
        self._endpoint = (self._endpoint + 1) % len(settings)
        follower = BinlogFollower(settings[self._endpoint], self.server_id, start, float(self.c["heartbeat_seconds"]))
        steps: queue.Queue = queue.Queue(maxsize=10_000)
        reading = threading.Event()
        reading.set()

        def read() -> None:
            try:
                for step in follower.transactions(lambda: reading.is_set() and self.may_act()):
                    steps.put(step)
            except BaseException as exc:  # handed to the cleaning side, which raises it
                steps.put(exc)
            finally:
                steps.put(None)
        reader = threading.Thread(target=read, name="cleaner-binlog", daemon=True)
        reader.start()
        saved, last_save = str(start), time.monotonic()
        try:
            while True:
                batch = [steps.get()]
                while len(batch) < 5_000:
                    try:
                        batch.append(steps.get_nowait())
                    except queue.Empty:
                        break
                touches, committed, heartbeat, position = Touches(), [], False, None
                for item in batch:
                    if item is None:
                        break
                    if isinstance(item, BaseException):
                        raise item
                    heartbeat |= item.heartbeat
                    if not item.heartbeat:
                        self.metrics.transactions += 1
                        self.metrics.events_read += item.touches.events
                    if item.touches:
                        touches.merge(item.touches)
                        if item.committed_at and item.touches.cleaning:
                            committed.append(item.committed_at)
                    position = item.position
                if touches:
                    cleaner.handle(touches)
                    for at in committed:
                        self.metrics.lag(max(0.0, time.time() - at))
                now = time.monotonic()
                if position is not None and str(position) != saved and (touches or now - last_save > float(self.c["position_save_seconds"])):
                    self._save(position)
                    saved, last_save = str(position), now
                if remover is not None and heartbeat:
                    remover.heartbeat()
                if item is None:
                    return
        finally:
            reading.clear()
            reader.join(float(self.c["heartbeat_seconds"]) * 3 + 5)

    def _sweeps(self, cleaner: Cleaner, remover: NamespaceRemover | None, over: threading.Event) -> None:
        interval = float(self.c["sweep_interval_minutes"]) * 60
        s = self.config["scratch"]
        if not self.c["sweep_at_start"]:
            over.wait(interval)
        while self.may_act() and not over.is_set():
            try:
                cleaner.sweep()
                if s["enabled"]:
                    collect(self.db, remover, list(s["roots"]), list(s["staging_names"]),
                            float(s["max_age_days"]) * 86400, bool(s["dry_run"]), self.fence)
                self.db.run(lambda tx: positions.sweep_done(tx, self.c["name"], self.fence(tx)))
            except Fenced:
                return
            except Exception:
                self.metrics.errors += 1
                log.exception("sweep failed; retrying at the next interval")
            over.wait(interval)

    # ------------------------------------------------------------ HTTP
    def health(self) -> tuple[int, dict]:
        fresh = time.monotonic() - self._last_renewal < max(3 * float(self.c["renew_seconds"]), 3.0)
        body = {"status": "ok" if fresh else "unhealthy", "owner": self.owner,
                "role": "leader" if self.lease.valid() else "follower", "epoch": self.lease.epoch,
                "position": self.metrics.position, "build": RUNNING}
        if not fresh:
            body["reason"] = "the lease could not be renewed or checked recently (database unreachable?)"
        return (200 if fresh else 503), body

    def start_http(self) -> int:
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                if self.path == "/health":
                    code, body = service.health()
                    payload, kind = json.dumps(body).encode(), "application/json"
                elif self.path == "/metrics":
                    code, payload, kind = 200, service.metrics.render().encode(), "text/plain; version=0.0.4"
                else:
                    code, payload, kind = 404, b'{"error": "not found: try /health or /metrics"}', "application/json"
                self.send_response(code)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args) -> None:
                pass

        self._http = ThreadingHTTPServer((self.c["listen_host"], int(self.c["listen_port"])), Handler)
        self._http.daemon_threads = True
        threading.Thread(target=self._http.serve_forever, name="cleaner-http", daemon=True).start()
        port = self._http.server_address[1]
        log.info("listening", extra={"host": self.c["listen_host"], "port": port})
        return port
