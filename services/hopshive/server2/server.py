"""hopshive-server2: a HiveServer2 (TCLIService, protocol V6-V10) endpoint executing on Spark.

Clients log in with their platform e-mail and password (SASL PLAIN, or in the OpenSession
request on a NOSASL connection), checked against the platform API; a session in project
database P runs as the project user ``P__<username>`` in that user's Spark engine (one
PySpark process per project user).  Configuration: built-in defaults, then the YAML file
given by --config (or $HOPSHIVE_CONFIG), then $HOPSHIVE_<SECTION>__<KEY> variables.  Logs are
JSON lines on stderr; SIGTERM stops accepting connections, gives the statements still open
up to stop_grace seconds (a drain), then ends sessions and stops the engines.
Prometheus numbers are served at http://<bind>:<server2.metrics_port, by default the Thrift
port + 100>/metrics (hopshive.server2.metrics).
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
import time

from impala_thrift_gen.TCLIService import TCLIService

from ..core import metrics
from ..core.config import ConfigError
from ..core.logs import setup_logging
from ..core.reload import on_hangup, reloader
from ..core.service import effective_config, listen, service_parser
from ..core.systemd import ready
from ..core.tls import client_context, server_context
from ..security import MODES, SIMPLE, TOKEN
from ..security.tokens import HIVE_SIGNATURE
from .auth import PlatformAuthenticator
from .engines import Engines
from .handler import Handler
from .transport import ConnectionContext, ThriftServer
from .wire import Processor

log = logging.getLogger("hopshive.server2")

DEFAULTS = {
    "log_level": "info",
    "server2": {
        "bind": "127.0.0.1",
        "port": 10000,
        "platform_url": "http://127.0.0.1:8181",
        "login_cache_seconds": 30.0,     # a successful login is reused this long (0: never)
        "max_connections": 200,
        "read_timeout": 3600.0,          # seconds a connection may stay silent
        "fetch_limit": 10000,            # rows per FetchResults at most
        "session_idle_timeout": 3600.0,  # sessions unused this long are closed
        # Spark engines (one process per project user)
        "max_engines": 4,
        "engine_idle_timeout": 600.0,    # an engine without sessions stops after this long
        "engine_start_timeout": 180.0,
        "work_dir": "",                  # engine sockets and logs; empty: a temporary directory
        # The sandbox: OS accounts engines run as, one engine per account at a time (sudo -n -u
        # each must be allowed for server2's account); empty: engines run as server2's account.
        "engine_accounts": [],
        # Where the accounts' homes (<engine_root>/<account>, 0700, theirs) and, in a
        # sandbox, the engines' sockets (<engine_root>/sockets) are; empty: work_dir.
        "engine_root": "",
        "spark_master": "local[2]",
        "driver_memory": "768m",
        "metastore_uris": "thrift://127.0.0.1:9083",
        "warehouse": "webhdfs://127.0.0.1:9870/user/hive/warehouse",
        "default_fs": "webhdfs://127.0.0.1:9870",
        # Further Spark settings for every engine, and environment variables (None: none).
        "spark_conf": None,
        "engine_env": None,
        # After SIGTERM: how long open statements get to finish and be fetched (a drain).
        "stop_grace": 20.0,
        # Prometheus text at http://<bind>:<metrics_port>/metrics (sessions, engines, queries
        # by outcome, rows served); metrics_port empty: the Thrift port + 100.
        "metrics": True,
        "metrics_port": None,
        # TLS on every connection when both are set (PEM files; Hive JDBC: ;ssl=true).
        "tls_cert_file": "",
        "tls_key_file": "",
        # PEM CA file that https servers this one calls (platform_url) are verified against,
        # and --check verifies this server with; empty: the system's trust store.
        "tls_ca_file": "",
    },
    # How engines prove their user.  "token": each engine carries its user's delegation token,
    # which the platform issues to the user's login (the namenodes and the metastores then
    # believe only tokens); "simple": HADOOP_USER_NAME only, for services in simple mode.
    "security": {
        "mode": "token",
        # The namenodes (host:port) and their logical name, which the token file files the
        # token under (as Hadoop's WebHDFS client looks it up).
        "namenodes": ["127.0.0.1:9870"],
        "nameservice": "",
        # An idle engine whose token expires within this many seconds is replaced.
        "token_refresh_margin": 3600.0,
    },
}

# What Hive 2.3's metastore client needs to send its token over SASL DIGEST-MD5, encrypting
# every message (qop auth-conf): it cannot put TLS under SASL.
METASTORE_TOKEN_CONF = {"spark.hadoop.hive.metastore.sasl.enabled": "true",
                        "spark.hadoop.hive.metastore.token.signature": HIVE_SIGNATURE,
                        "spark.hadoop.hadoop.rpc.protection": "privacy"}


def engine_settings(s2: dict, security: dict) -> dict:
    conf = {"spark.master": s2["spark_master"], "spark.driver.memory": s2["driver_memory"],
            "spark.ui.enabled": "false", "spark.sql.catalogImplementation": "hive",
            "spark.hadoop.hive.metastore.uris": s2["metastore_uris"], "spark.sql.warehouse.dir": s2["warehouse"],
            "spark.hadoop.fs.defaultFS": s2["default_fs"], "spark.sql.shuffle.partitions": "4"}
    if security["mode"] == TOKEN:
        conf.update(METASTORE_TOKEN_CONF)
    conf.update(s2["spark_conf"] or {})
    return {"spark_conf": conf, "engine_env": s2["engine_env"] or {}, "max_engines": s2["max_engines"],
            "engine_idle_timeout": s2["engine_idle_timeout"], "engine_start_timeout": s2["engine_start_timeout"],
            "work_dir": s2["work_dir"], "engine_accounts": s2["engine_accounts"] or [],
            "engine_root": s2["engine_root"], "security_mode": security["mode"], "namenodes": security["namenodes"],
            "nameservices": [security["nameservice"]] if security["nameservice"] else [],
            "token_refresh_margin": security["token_refresh_margin"]}


def check(s2: dict, tls: bool) -> int:
    """Health: a TCP connection and an OpenSession answered (with a refusal: no credentials);
    over TLS the certificate is verified with tls_ca_file, as clients will."""
    host = "127.0.0.1" if s2["bind"] in ("0.0.0.0", "::") else s2["bind"]
    from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
    from thrift.transport import TSocket, TSSLSocket, TTransport
    from impala_thrift_gen.TCLIService import ttypes
    if tls:
        sock = TSSLSocket.TSSLSocket(host, int(s2["port"]), ssl_context=client_context(s2["tls_ca_file"]))
    else:
        sock = TSocket.TSocket(host, int(s2["port"]))
    sock.setTimeout(10000)
    transport = TTransport.TBufferedTransport(sock)
    try:
        transport.open()
        client = TCLIService.Client(TBinaryProtocolAccelerated(transport))
        response = client.OpenSession(ttypes.TOpenSessionReq(client_protocol=9, username="", password=""))
    except Exception as exc:                # noqa: BLE001 -- reported as the probe's result
        print(f"hopshive-server2: not healthy: {exc}", file=sys.stderr)
        return 1
    finally:
        transport.close()
    print(f"ok: {response.status.errorMessage}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = service_parser("hopshive-server2", __doc__,
                            "Health: `hopshive-server2 --check` (connects and asks for a session without credentials).")
    parser.add_argument("--port", type=int, help="listen on this port (overrides server2.port)")
    parser.add_argument("--check", action="store_true", help="probe the configured (running) server and exit")
    args = parser.parse_args(argv)
    config = effective_config("hopshive-server2", DEFAULTS, args.config)
    if config is None:
        return 2
    s2 = config["server2"]
    if args.port:
        s2["port"] = args.port
    try:
        tls = server_context(s2, "server2")
        client_context(s2["tls_ca_file"])
    except ConfigError as exc:
        print(f"hopshive-server2: {exc}", file=sys.stderr)
        return 2
    try:
        port = metrics.metrics_port(s2, "server2")
    except ValueError as exc:
        print(f"hopshive-server2: {exc}", file=sys.stderr)
        return 2
    if args.check_config:
        import yaml
        print(yaml.safe_dump(config, sort_keys=False))
        return 0
    if args.check:
        return check(s2, tls is not None)
    setup_logging(config["log_level"])
    sock = listen(s2["bind"], int(s2["port"]))
    if config["security"]["mode"] not in MODES:
        print(f"hopshive-server2: security.mode must be {TOKEN} or {SIMPLE}", file=sys.stderr)
        return 2
    if config["security"]["mode"] == SIMPLE:
        log.warning("INSECURE: security.mode is simple: engines carry no token and rely on services that "
                    "believe any user name")
    engines = Engines(engine_settings(s2, config["security"]))
    context = ConnectionContext()
    authenticator = PlatformAuthenticator(s2["platform_url"], cache_seconds=float(s2["login_cache_seconds"]),
                                          ca_file=s2["tls_ca_file"])
    handler = Handler(authenticator, engines, context, int(s2["fetch_limit"]))
    try:
        exporter = None if port is None else metrics.serve(s2["bind"], port, handler.metrics.registry)
    except OSError as exc:
        log.error("cannot start", extra={"error": f"metrics port {s2['bind']}:{port}: {exc}"})
        return 1
    server = ThriftServer(sock, Processor(handler), context, authenticator.authenticate,
                          handler.disconnected, int(s2["max_connections"]), float(s2["read_timeout"]), tls)
    stopped = threading.Event()

    def stop(signum, frame) -> None:
        log.info("draining", extra={"signal": signal.Signals(signum).name, "grace": s2["stop_grace"]})
        server.draining.set()
        stopped.set()

    def reaper() -> None:
        while not stopped.wait(5.0):
            for session in handler.registry.idle_sessions(float(s2["session_idle_timeout"])):
                log.info("closing idle session", extra={"user": session.user})
                handler.registry.close_session(session)
            engines.reap()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    on_hangup(reloader(DEFAULTS, args.config, "server2", tls))
    threading.Thread(target=reaper, daemon=True, name="reaper").start()
    log.info("listening", extra={"bind": s2["bind"], "port": s2["port"], "platform": s2["platform_url"],
                                 "tls": tls is not None, "metrics_port": port})
    ready()
    server.serve()
    try:
        sock.close()
    except OSError:
        pass
    drain(handler.registry, float(s2["stop_grace"]))
    server.stopping.set()
    for session in list(handler.registry.sessions.values()):
        handler.registry.close_session(session)
    engines.stop_all()
    metrics.stop(exporter)
    log.info("stopped")
    return 0


def drain(registry, grace: float) -> None:
    """Give the statements still open (running, or finished and not yet fetched and closed
    by their client) up to ``grace`` seconds: a restart then loses no statement that can
    finish in that time.  Idle sessions hold nothing and are not waited for."""
    deadline = time.monotonic() + grace
    while registry.operations and time.monotonic() < deadline:
        time.sleep(0.2)
    log.info("stopping", extra={"open_operations": len(registry.operations)})


if __name__ == "__main__":
    sys.exit(main())
