"""hopshive-namenode: the namespace service, serving WebHDFS v1 over HTTP (or HTTPS:
swebhdfs://, with namenode.tls_cert_file and tls_key_file).

Pre-forks ``namenode.workers`` processes on one socket.  Each worker is a namenode of its
own (registered in hops.hdfs_namenodes, heartbeating, recovering dead peers); they share
nothing but the database and the block directory.  Configuration: built-in defaults, then
the YAML file given by --config (or $HOPSHIVE_CONFIG), then $HOPSHIVE_<SECTION>__<KEY>.
Prometheus numbers are served at /metrics on the same port (hopshive.webhdfs.metrics).
SIGHUP reloads the TLS certificate and key and the log level (hopshive.core.reload).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import ssl
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from aiohttp import web

from ..core.config import DATABASE_DEFAULTS, ConfigError
from ..core.db import Database
from ..core import metrics
from ..core.logs import setup_logging
from ..core.reload import reloader
from ..core.schematool import COMPONENTS
from ..core.service import effective_config, listen, print_config, run_workers, schemas_usable, service_parser
from ..core.tls import client_context, server_context
from ..namespace.liveness import Liveness
from ..namespace.maintenance import Maintenance, recover_dead
from ..namespace.namespace import MAX_REPLICATION, SMALL_FILE_LIMIT, Namespace
from ..security.block_tokens import BlockTokens
from ..security.secrets import SecretManager, TokenPolicy
from .app import WebHdfs
from .front import Front
from ..security import MODES, SIMPLE
from .identity import Identity
from .limits import BoundedSockSite
from .metrics import NamenodeMetrics
from .loop_reads import LoopReads

log = logging.getLogger("hopshive.namenode")

DEFAULTS = {
    "log_level": "info",
    "database": dict(DATABASE_DEFAULTS, user="hops_namenode"),
    "namenode": {
        "bind": "127.0.0.1",
        "port": 9870,
        "advertised_address": "127.0.0.1:9870",
        "workers": 2,
        "data_dir": "/var/lib/hopshive/namenode",
        "block_size": 134217728,
        "replication": 1,
        "superusers": ["hdfs"],
        "supergroup": "supergroup",
        # user -> {users, hosts, groups}; None (not {}) so that a file or variable supplies the
        # whole mapping: load_config only accepts known keys inside a dict default.
        "proxy_users": None,
        "heartbeat_interval": 1.0,
        "dead_after": 10.0,
        # Seconds a block holder may stay silent before its replicas are forgotten and its
        # blocks copied elsewhere (HDFS: 10.5 min).  Must exceed dead_after.
        "holder_timeout": 630.0,
        # Seconds between rounds of the replication monitor (on the elected namenode).
        "replication_interval": 3.0,
        # Seconds between block reports: block files older than orphan_grace that are not a
        # recorded replica here are recorded (when sound and still wanted) or removed.
        "block_report_interval": 600.0,
        "orphan_grace": 3600.0,
        "trash_checkpoint_interval": 60,
        "trash_interval": 1440,
        "umask": "022",
        # Files up to this many bytes live in the database next to their inode (HopsFS's
        # small files): no block, servable by any namenode.  0 turns it off.
        "small_file_limit": SMALL_FILE_LIMIT,
        # On SIGTERM, requests still running after this many seconds are cancelled (their
        # writes rolled back); keep it below the 30 s after which the master kills workers.
        "shutdown_timeout": 20.0,
        # Seconds a connection may go without a complete request head, idle between requests
        # or trickling one in (slowloris); see hopshive.webhdfs.limits.
        "idle_timeout": 30.0,
        # Open connections per worker; more are answered 503 with Retry-After.
        "max_connections": 1000,
        # TLS (swebhdfs://) when both are set (PEM files, hopshive.core.tls): clients, peer
        # namenodes and redirects (Location) then use https.  tls_ca_file: the CA the peers'
        # certificates are verified against (empty: the system's trust store).
        "tls_cert_file": "",
        "tls_key_file": "",
        "tls_ca_file": "",
    },
    # Who callers are (hopshive.webhdfs.identity): "token" believes only delegation tokens;
    # "simple" believes user.name (Hadoop's unsecured mode: an explicit, logged opt-out).
    # Token lifetimes in seconds (hopshive.security.secrets.TokenPolicy).
    "security": {
        "mode": "token",
        "renew_interval": 86400.0,
        "max_lifetime": 604800.0,
        "key_update_interval": 86400.0,
        "cache_seconds": 5.0,
    },
}


def serve_worker(config: dict, sock, generation: float, tls: ssl.SSLContext | None, metrics_dir: str) -> None:
    """One worker process: a namenode with its own pool, liveness row and HTTP loop; its
    counters go to ``metrics_dir``, shared by the workers (hopshive.webhdfs.metrics)."""
    nn = config["namenode"]
    db = Database(config["database"])
    liveness = Liveness(db, nn["advertised_address"], nn["dead_after"], generation)
    liveness.register()
    namespace = Namespace(db, nn, nn["advertised_address"], liveness)
    namespace.holders.heartbeat()
    namespace.format_root()
    recover_dead(namespace)
    secrets = SecretManager(db, TokenPolicy.from_config(config["security"]))
    block_tokens = BlockTokens(secrets)
    maintenance = Maintenance(namespace, block_tokens, nn["heartbeat_interval"], nn["orphan_grace"],
                              float(nn["replication_interval"]), float(nn["block_report_interval"]))
    maintenance.start()
    loop_reads = LoopReads(config["database"])
    log.info("namenode worker started", extra={"namenode_id": liveness.namenode_id, "address": nn["advertised_address"]})

    async def run() -> None:
        loop = asyncio.get_running_loop()
        loop.set_default_executor(ThreadPoolExecutor(max_workers=int(config["database"]["pool_size"])))
        stop = asyncio.Event()
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        loop.add_signal_handler(signal.SIGINT, stop.set)
        identity = Identity(namespace, secrets, config["security"]["mode"], nn["proxy_users"])
        service = WebHdfs(namespace, nn, loop_reads, identity, block_tokens,
                          NamenodeMetrics(namespace, metrics_dir))
        runner = web.AppRunner(service.application(), access_log=None,
                               handler_cancellation=True, shutdown_timeout=float(nn["shutdown_timeout"]),
                               keepalive_timeout=float(nn["idle_timeout"]))
        await runner.setup()
        front = Front(service, runner.server, float(nn["idle_timeout"]))
        await BoundedSockSite(runner, sock, int(nn["max_connections"]), front, tls).start()
        await stop.wait()
        await asyncio.gather(front.shutdown(float(nn["shutdown_timeout"])), runner.cleanup())

    try:
        asyncio.run(run())
    finally:
        maintenance.stopping.set()
        maintenance.join(5)
        loop_reads.close()
        liveness.unregister()
        db.close()
        log.info("namenode worker stopped", extra={"namenode_id": liveness.namenode_id})


def main(argv: list[str] | None = None) -> int:
    parser = service_parser("hopshive-namenode", __doc__,
                            "Health: GET /health answers 200 when the database is reachable.")
    args = parser.parse_args(argv)
    config = effective_config("hopshive-namenode", DEFAULTS, args.config)
    if config is None:
        return 2
    if args.check_config:
        print_config(config)
        return 0
    setup_logging(config["log_level"])
    if not schemas_usable(config["database"], [COMPONENTS["hops"]]):
        return 1
    nn = config["namenode"]
    if not 1 <= int(nn["replication"]) <= MAX_REPLICATION or float(nn["holder_timeout"]) <= float(nn["dead_after"]):
        log.error("bad configuration: namenode.replication must be 1..%d and holder_timeout > dead_after",
                  MAX_REPLICATION)
        return 2
    mode = config["security"]["mode"]
    if mode not in MODES:
        log.error("bad configuration: security.mode must be one of %s", ", ".join(MODES))
        return 2
    if mode == SIMPLE:
        log.warning("INSECURE: security.mode is simple: WebHDFS believes any user.name= a client sends, so any "
                    "client that reaches this port can act as any user, the superuser included. Use "
                    "security.mode: token outside a trusted test box")
    try:
        tls = server_context(nn, "namenode")
        client_context(nn["tls_ca_file"])
    except ConfigError as exc:
        log.error("bad configuration: %s", exc)
        return 2
    sock = listen(nn["bind"], int(nn["port"]))
    log.info("listening", extra={"bind": nn["bind"], "port": nn["port"], "workers": nn["workers"],
                                 "tls": tls is not None})
    generation = time.time()
    metrics_dir = metrics.use_directory("namenode")
    try:
        return run_workers(int(nn["workers"]), lambda index: serve_worker(config, sock, generation, tls, metrics_dir),
                           reload=reloader(DEFAULTS, args.config, "namenode", tls))
    finally:
        metrics.stop(None, metrics_dir)


if __name__ == "__main__":
    sys.exit(main())
