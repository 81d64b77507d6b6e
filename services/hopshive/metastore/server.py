"""hopshive-metastore: the Hive Metastore Thrift service (Hive 2.3 and 3 clients).

Configuration: built-in defaults, then the YAML file given by --config (or
$HOPSHIVE_CONFIG), then $HOPSHIVE_<SECTION>__<KEY> variables.  --port overrides
metastore.port.  Logs are JSON lines on stderr.  SIGTERM/SIGINT stop it gracefully: the
listener closes, calls in progress finish (metastore.stop_grace seconds at most).  SIGHUP
reloads the TLS certificate and key and the log level (hopshive.core.reload).
Prometheus counters are served at http://<bind>:<metastore.metrics_port, by default the
Thrift port + 100>/metrics (hopshive.metastore.metrics, hopshive.core.metrics).
"""

from __future__ import annotations

import logging
import signal
import sys

from ..core.logs import setup_logging
from ..core.reload import on_hangup, reloader
from ..core.schematool import COMPONENTS
from ..core.service import effective_config, listen, print_config, run_workers, schemas_usable, service_parser
from ..core import metrics
from .app import DEFAULTS, Metastore
from .registry import BackendError

log = logging.getLogger("hopshive.metastore")


def serve_worker(config: dict, sock, config_path: str | None) -> None:
    metastore = Metastore(config, sock)
    signal.signal(signal.SIGTERM, lambda *_: metastore.server.stopping.set())
    signal.signal(signal.SIGINT, lambda *_: metastore.server.stopping.set())
    on_hangup(reloader(DEFAULTS, config_path, "metastore", metastore.tls))
    log.info("metastore worker started", extra={"port": sock.getsockname()[1]})
    try:
        metastore.serve()
    finally:
        metastore.stop()
        log.info("metastore worker stopped")


def main(argv: list[str] | None = None) -> int:
    parser = service_parser(
        "hopshive-metastore", __doc__,
        "Health: `python -m hopshive.metastore.probe --port N` (TCP connect + get_database('default')); "
        "`hopshive-metastore --check` probes the configured port.")
    parser.add_argument("--port", type=int, help="listen on this port (overrides metastore.port)")
    parser.add_argument("--check", action="store_true", help="probe the configured (running) metastore and exit")
    args = parser.parse_args(argv)
    config = effective_config("hopshive-metastore", DEFAULTS, args.config)
    if config is None:
        return 2
    if args.port:
        config["metastore"]["port"] = args.port
    ms = config["metastore"]
    if args.check_config:
        try:
            metrics.metrics_port(ms, "metastore")
        except ValueError as exc:
            print(f"hopshive-metastore: {exc}", file=sys.stderr)
            return 2
        print_config(config)
        return 0
    if args.check:
        from .probe import probe
        return probe(ms["bind"] if ms["bind"] not in ("0.0.0.0", "::") else "127.0.0.1", int(ms["port"]),
                     tls=bool(ms["tls_cert_file"]), ca_file=ms["tls_ca_file"])
    setup_logging(config["log_level"])
    if not schemas_usable(config["database"], [COMPONENTS["hops"], COMPONENTS["metastore"]]):
        return 1
    sock = listen(ms["bind"], int(ms["port"]))
    exporter = directory = None
    try:
        port = metrics.metrics_port(ms, "metastore")
        if port is not None:
            directory = metrics.use_directory("metastore")
        bootstrap = Metastore(config, sock)
        bootstrap.authenticator.announce()
        bootstrap.bootstrap()
        bootstrap.store.close()
    except (BackendError, ValueError) as exc:
        log.error("cannot start", extra={"error": str(exc)})
        metrics.stop(None, directory)
        return 1
    if port is not None:
        try:
            exporter = metrics.serve(ms["bind"], port, metrics.summed(directory))
        except OSError as exc:
            log.error("cannot start", extra={"error": f"metrics port {ms['bind']}:{port}: {exc}"})
            metrics.stop(None, directory)
            return 1
    log.info("listening", extra={"bind": ms["bind"], "port": ms["port"], "workers": ms["workers"],
                                 "warehouse": ms["warehouse"], "metrics_port": port})
    try:
        return run_workers(int(ms["workers"]), lambda index: serve_worker(config, sock, args.config),
                           float(ms["stop_grace"]), reloader(DEFAULTS, args.config))
    finally:
        metrics.stop(exporter, directory)


if __name__ == "__main__":
    sys.exit(main())
