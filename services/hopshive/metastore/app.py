"""Wiring: configuration -> database, namespace, warehouse, store, handler, Thrift server."""

from __future__ import annotations

import logging
import os
import socket
import tempfile

from ..core.config import DATABASE_DEFAULTS
from ..core.db import Database
from ..core.tls import server_context
from ..namespace.liveness import Liveness
from ..namespace.namespace import Namespace
from ..security.digest_md5 import DigestMD5Server
from ..security.sasl import Mechanism
from ..security.secrets import SecretManager, TokenPolicy
from .api import api
from .authentication import Authenticator, SecuritySettings
from .authorization import Authorizer
from .exceptions import AlreadyExists, NoSuchObject
from .handler import Handler, Session
from .locations import Locations
from .metrics import CallMetrics
from .registry import backend
from .thrift.processor import Processor
from .thrift.server import ThriftServer
from .warehouse import Warehouse

# The defaults only: importing the module needs happybase, which only the hbase backend does.
# check_after: seconds a pooled HBase connection may sit unused before it is checked (one
# cheap call) before use -- the server may have closed it meanwhile.
HBASE_DEFAULTS = {"host": "127.0.0.1", "port": 9090, "table_prefix": "hopshive_", "pool_size": 8,
                  "timeout": 30.0, "scan_batch": 1000, "check_after": 5.0}

log = logging.getLogger("hopshive.metastore")

DEFAULTS = {
    "log_level": "info",
    "database": dict(DATABASE_DEFAULTS, user="hops_metastore", pool_size=16),
    "metastore": {
        "bind": "127.0.0.1",
        "port": 9083,
        "workers": 1,                       # processes; each serves many connections with threads
        "backend": "mysql",                 # see hopshive.metastore.registry
        "warehouse": "webhdfs://127.0.0.1:9870/user/hive/warehouse",
        # (scheme, authority) pairs that name the HopsHive namespace; other URIs are foreign
        "namespace_uris": ["webhdfs://127.0.0.1:9870", "hdfs://127.0.0.1:8020"],
        "warehouse_permission": "1777",
        "do_as_client": True,               # directories are made/removed as the set_ugi user
        "service_user": "hive",
        # Storage-based authorization (Hive's StorageBasedAuthorizationProvider): the
        # namespace's permissions on an object's directory decide who may read, change or
        # drop it.  Off only for trusted single-user setups.
        "storage_authorization": True,
        "admin_users": ["hive"],            # Hive admins: bypass authorization, as superusers do
        # Service accounts whose set_ugi is honoured on an authenticated connection (any user
        # but a superuser or admin; Hive's hadoop.proxyuser rules) and who may get tokens.
        "proxy_users": [],
        "anonymous_user": "anonymous",      # who a connection is before (or without) set_ugi
        "use_trash": False,                 # like Hive with fs.trash.interval=0; ifPurge always skips it
        "lock_timeout": 300.0,              # seconds without heartbeat before a Hive lock expires
        "max_connections": 1000,
        "max_concurrent_calls": 0,          # 0: database pool_size - 1
        "read_timeout": 600.0,
        "create_default_database": True,
        "stop_grace": 30.0,
        # Prometheus text at http://<bind>:<metrics_port>/metrics (calls, latency and errors
        # per method, partitions returned); metrics_port empty: the Thrift port + 100.
        "metrics": True,
        "metrics_port": None,
        # TLS on the Thrift port when both are set (PEM files, hopshive.core.tls); clients then
        # connect with TLS (Hive: hive.metastore.use.SSL) or, with tls_plain_sasl, with SASL and a
        # token but without TLS: Hive 2.3's client (Spark's) cannot do both (see
        # hopshive.metastore.thrift.server).  tls_ca_file: what --check verifies this server with.
        "tls_cert_file": "",
        "tls_key_file": "",
        "tls_ca_file": "",
        "tls_plain_sasl": True,
    },
    # mode token: only SASL DIGEST-MD5 with a delegation token; simple: set_ugi is believed
    # (an insecure opt-out, logged at start).  See hopshive.metastore.authentication.  Token
    # lifetimes in seconds (hopshive.security.secrets.TokenPolicy), as the namenodes', which
    # share the tokens.
    "security": {"mode": "token", "renew_interval": 86_400.0, "max_lifetime": 604_800.0,
                 "key_update_interval": 86_400.0, "cache_seconds": 5.0},
    # The HBase store (metastore.backend: hbase): its Thrift1 server and table names.
    "hbase": dict(HBASE_DEFAULTS),
    "namespace": {                          # must match the namenodes' settings
        "superusers": ["hdfs", "hive"],
        "supergroup": "supergroup",
        "umask": "022",
        "data_dir": os.path.join(tempfile.gettempdir(), "hopshive-metastore-noblocks"),
    },
}


def _new_session(peer: tuple, mechanism: Mechanism | None) -> Session:
    if isinstance(mechanism, DigestMD5Server) and mechanism.principal is not None:
        return Session(peer, authenticated=mechanism.principal.user)
    return Session(peer)


class Metastore:
    """One serving process: pools, caches and the server socket loop."""

    def __init__(self, config: dict, sock: socket.socket):
        ms = config["metastore"]
        self.config = config
        self.db = Database(config["database"])
        address = f"metastore@{ms['bind']}:{ms['port']}"
        namespace = Namespace(self.db, config["namespace"], address, Liveness(self.db, address, 10.0))
        locations = Locations(ms["namespace_uris"], ms["warehouse"])
        self.warehouse = Warehouse(namespace, locations, ms["service_user"], ms["do_as_client"], ms["use_trash"])
        self.store = backend(ms["backend"]).open(self.db, config)
        authorizer = Authorizer(namespace, locations, bool(ms["storage_authorization"]), ms["admin_users"])
        self.authenticator = Authenticator(
            SecuritySettings.from_config(config), SecretManager(self.db, TokenPolicy.from_config(config["security"])),
            lambda user: namespace.caller(user).superuser or user in ms["admin_users"])
        self.handler = Handler(self.store, self.warehouse, authorizer, self.authenticator, {
            "lock_timeout": float(ms["lock_timeout"]), "uris": f"thrift://{ms['bind']}:{ms['port']}",
            "anonymous_user": ms["anonymous_user"]})
        concurrent = int(ms["max_concurrent_calls"]) or max(1, int(config["database"]["pool_size"]) - 1)
        self.tls = server_context(ms, "metastore")      # reloaded in place on SIGHUP (core.reload)
        self.metrics = CallMetrics()
        self.server = ThriftServer(sock, Processor(self.handler, self.metrics), _new_session, concurrent,
                                   int(ms["max_connections"]), float(ms["read_timeout"]),
                                   self.authenticator.mechanisms(), self.authenticator.refusal,
                                   self.tls, bool(ms["tls_plain_sasl"]))

    def bootstrap(self) -> None:
        """Make the warehouse directory and the `default` database when missing."""
        ms = self.config["metastore"]
        dirs = self.warehouse.service()
        path = self.warehouse.locations.parse(ms["warehouse"]).path
        namespace = self.warehouse.namespace
        if namespace.db.run(lambda tx: namespace.resolve(tx, path)) is None:
            namespace.mkdirs(dirs.caller, path, int(str(ms["warehouse_permission"]), 8))
        if not ms["create_default_database"]:
            return
        try:
            self.store.get_database("default")
        except NoSuchObject:
            try:
                self.store.create_database(api.Database(
                    name="default", description="Default Hive database", locationUri=ms["warehouse"],
                    parameters={}, ownerName="public", ownerType=api.PrincipalType.ROLE), dirs)
                log.info("created the default database", extra={"location": ms["warehouse"]})
            except AlreadyExists:
                pass

    def serve(self) -> None:
        self.server.serve()

    def stop(self, grace: float | None = None) -> None:
        self.server.stop(self.config["metastore"]["stop_grace"] if grace is None else grace)
        self.store.close()
