"""hopshive-hbase: an HBase Thrift1-compatible server (happybase's API) over LMDB; not HBase.

Not HBase: a single-process server for sites and tests without HBase (see the package
docstring).  Configuration: built-in defaults, then the YAML file given by --config (or
$HOPSHIVE_CONFIG), then $HOPSHIVE_<SECTION>__<KEY> variables (e.g.
HOPSHIVE_HBASE__PORT=9091).  Logs are JSON lines on stderr.  SIGTERM/SIGINT stop it
gracefully: the listener closes and calls in progress finish (hbase.stop_grace seconds at
most); every acknowledged write is already on disk.  Prometheus numbers are served at
http://<bind>:<hbase.metrics_port, by default the Thrift port + 100>/metrics
(hopshive.hbase_server.metrics).
"""

from __future__ import annotations

import logging
import os
import signal
import sys

from ..core import metrics as core_metrics
from ..core.logs import setup_logging
from ..core.reload import on_hangup, reloader
from ..core.service import effective_config, listen, service_parser
from ..core.systemd import ready
from .handler import HBaseHandler
from .metrics import HBaseMetrics
from .storage import Storage
from .wire import ThriftServer, load_idl

log = logging.getLogger("hopshive.hbase")

DEFAULTS = {
    "log_level": "info",
    "hbase": {
        "bind": "127.0.0.1",
        "port": 9090,
        "data_dir": "/var/lib/hopshive/hbase",
        "map_size_mb": 4096,            # LMDB's map (sparse file): the most data it can hold
        "max_tables": 4096,
        "scanner_lease": 60.0,          # seconds an unused scanner lives
        "max_scanners": 10000,
        "read_timeout": 600.0,          # seconds a connection may stay silent
        "stop_grace": 10.0,
        "metrics": True,
        "metrics_port": None,           # empty: the Thrift port + 100
    },
}


def main(argv: list[str] | None = None) -> int:
    parser = service_parser("hopshive-hbase", __doc__,
                            "Health: `python -m hopshive.hbase_server.probe --port N` (happybase: list tables); "
                            "`hopshive-hbase --check` probes the configured port.")
    parser.add_argument("--port", type=int, help="listen on this port (overrides hbase.port)")
    parser.add_argument("--data-dir", help="LMDB directory (overrides hbase.data_dir)")
    parser.add_argument("--check", action="store_true", help="probe the configured (running) server and exit")
    args = parser.parse_args(argv)
    config = effective_config("hopshive-hbase", DEFAULTS, args.config)
    if config is None:
        return 2
    hb = config["hbase"]
    if args.port:
        hb["port"] = args.port
    if args.data_dir:
        hb["data_dir"] = args.data_dir
    if args.check_config:
        import yaml
        print(yaml.safe_dump(config, sort_keys=False))
        return 0
    if args.check:
        from .probe import probe
        return probe(hb["bind"] if hb["bind"] not in ("0.0.0.0", "::") else "127.0.0.1", int(hb["port"]))
    setup_logging(config["log_level"])
    try:
        os.makedirs(hb["data_dir"], exist_ok=True)
        storage = Storage(hb["data_dir"], int(hb["map_size_mb"]), int(hb["max_tables"]))
    except Exception as exc:  # noqa: BLE001 -- lmdb.Error, OSError: tell the operator, exit 1
        log.error("cannot open the data directory", extra={"data_dir": hb["data_dir"], "error": str(exc)})
        return 1
    api = load_idl()
    handler = HBaseHandler(storage, api, float(hb["scanner_lease"]), int(hb["max_scanners"]))
    numbers = HBaseMetrics(handler, storage)
    exporter = None
    try:
        metrics_port = core_metrics.metrics_port(hb, "hbase")
        sock = listen(hb["bind"], int(hb["port"]))
        if metrics_port is not None:
            exporter = core_metrics.serve(hb["bind"], metrics_port, numbers.registry)
    except (OSError, ValueError) as exc:
        log.error("cannot listen", extra={"bind": hb["bind"], "port": hb["port"],
                                          "metrics_port": hb["metrics_port"], "error": str(exc)})
        storage.close()
        return 1
    server = ThriftServer(sock, handler, api, float(hb["read_timeout"]), numbers.observe)

    def stop(signum, frame):
        log.info("stopping", extra={"signal": signal.Signals(signum).name})
        server.stopping.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    on_hangup(reloader(DEFAULTS, args.config))     # the log level (it serves no TLS)
    log.info("listening", extra={"bind": hb["bind"], "port": sock.getsockname()[1], "metrics_port": metrics_port,
                                 "data_dir": hb["data_dir"]})
    ready()
    try:
        server.serve()
    finally:
        server.stop(float(hb["stop_grace"]))
        core_metrics.stop(exporter)
        storage.close()
        log.info("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
