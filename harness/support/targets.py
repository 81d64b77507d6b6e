"""Where the harness points: the WebHDFS endpoint, the metastore instances, the database
and the user.

Targets come from an Ansible inventory (``--inventory PATH``) or from the environment:

  HOPSHIVE_WEBHDFS_URL    WebHDFS base URL (default http://127.0.0.1:9870)
  HOPSHIVE_METASTORE_URIS the metastore instances, thrift://host:port,... (default
                          thrift://127.0.0.1:9083,thrift://127.0.0.1:9084)
  HOPSHIVE_SPARK_CONF_DIR the Spark client configuration the deployment wrote (roles/spark),
                          used by the metastore Spark scenarios when it is on this machine
                          (default /etc/hopshive/spark when the inventory's spark host is
                          this machine; "" to configure Spark from the targets instead)
  HOPSHIVE_DB             mysql://user:password@host:port/?unix_socket=/path (default: root
                          over /run/mysqld/mysqld.sock); or the separate variables
                          HOPSHIVE_DB_HOST, _PORT, _USER, _PASSWORD, _UNIX_SOCKET
  HOPSHIVE_SECURITY_MODE  token (default) or simple: how the deployment's services believe
                          a caller (the inventory's hopshive_security_mode)
  HOPSHIVE_E2E_USER       the Hadoop user the clients act as (default: the OS user)
  HOPSHIVE_E2E_SPARK_USER the Hive session's Hadoop user, checked by the metastore's
                          authorization (default hh_e2e_spark; must not be a superuser)
  HOPSHIVE_E2E_BASE       the directory the unique run root is made in (default /tmp)
  HOPSHIVE_E2E_REQUIRED   1: an unreachable target fails the run instead of skipping it
  HOPSHIVE_HBASE_METASTORE_URIS
                          the metastore instances on the HBase store (default
                          thrift://127.0.0.1:9085; from an inventory: every metastore host's
                          hopshive_metastore_hbase_port when it has an hbase group)
  HOPSHIVE_SERVER2        server2's host:port (default 127.0.0.1:10000)
  HOPSHIVE_PLATFORM_URL   the platform API (default http://127.0.0.1:8181)
  HOPSHIVE_TLS            1: the services serve TLS (the inventory's hopshive_tls); the
                          WebHDFS and platform URLs are then https and swebhdfs:// names the
                          namespace
  HOPSHIVE_CA_FILE        the CA the clients verify the services with (from an inventory: the
                          CA the deployment made, <inventory>/.tls/ca.pem, or the site's
                          tls_site_ca_file)
  HOPSHIVE_PLATFORM_ADMIN, HOPSHIVE_PLATFORM_ADMIN_PASSWORD
                          a platform administrator, who makes the server2 scenarios' users
                          and projects (default: the deployment's first administrator)

Environment variables override what the inventory says, value by value.
"""

from __future__ import annotations

import getpass
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

DEFAULT_URL = "http://127.0.0.1:9870"
DEFAULT_METASTORES = (("127.0.0.1", 9083), ("127.0.0.1", 9084))
DEFAULT_SPARK_CONF_DIR = "/etc/hopshive/spark"
DEFAULT_HBASE_METASTORES = (("127.0.0.1", 9085),)
DEFAULT_SERVER2 = ("127.0.0.1", 10000)
DEFAULT_PLATFORM_URL = "http://127.0.0.1:8181"
DEFAULT_PLATFORM_ADMIN = ("admin@hopshive.local", "dev-only-admin-pw")   # group_vars' dev-only default
LOCAL_NAMES = ("127.0.0.1", "localhost", "::1")
DEFAULT_DB = {"user": "root", "password": "", "unix_socket": "/run/mysqld/mysqld.sock"}
_DB_VARS = ("host", "port", "user", "password", "unix_socket")


@dataclass(frozen=True)
class Targets:
    webhdfs_url: str
    db: dict = field(default_factory=dict)  # pymysql.connect() keyword arguments
    metastores: tuple = DEFAULT_METASTORES  # ((host, port), ...), every instance of every host
    spark_conf_dir: str | None = None       # the deployed Spark client configuration, if local
    user: str = "root"
    spark_user: str = "hh_e2e_spark"       # the Hive session's HADOOP_USER_NAME: not a superuser
    hive_admin: str = "hive"                # the Hive admin: bypasses the metastore's authorization only
    base: str = "/tmp"
    required: bool = False
    source: str = "defaults"
    containers: dict = field(default_factory=dict)  # {address or host name: container} of our containers
    db_nodes: tuple = ()    # every database node's address (the mysql_cluster group)
    namenodes: tuple = ()   # every namenode's WebHDFS host:port (the namenode group)
    nameservice: str | None = None  # the logical WebHDFS name of several namenodes, if any
    hbase_metastores: tuple = DEFAULT_HBASE_METASTORES  # instances on the HBase store
    server2: tuple = DEFAULT_SERVER2        # (host, port) of the first server2
    platform_url: str = DEFAULT_PLATFORM_URL
    platform_admin: tuple = DEFAULT_PLATFORM_ADMIN   # (e-mail, password)
    group_hosts: dict = field(default_factory=dict)  # {inventory group: its first host's address}; {}: all here
    security_mode: str = "token"            # the services': "token" believes tokens only, "simple" names
    tls: bool = False                       # the services serve TLS (hopshive_tls)
    spark_masters: tuple = ()               # every Spark standalone master's address (the spark_master group)
    spark_workers: tuple = ()               # every Spark worker's address (the spark_worker group)
    spark_master_port: int = 7077
    ca_file: str = ""                       # the CA they are verified with when they do

    @property
    def authority(self) -> str:
        """host:port of the WebHDFS endpoint, as in webhdfs://host:port/path."""
        return urlsplit(self.webhdfs_url).netloc

    @property
    def scheme(self) -> str:
        """The namespace's URI scheme: swebhdfs with TLS, else webhdfs."""
        return "swebhdfs" if self.tls else "webhdfs"

    def uri(self, path: str) -> str:
        return f"{self.scheme}://{self.authority}{path}"

    def namenode_url(self, address: str) -> str:
        """The HTTP(S) base URL of the namenode at ``address`` (host:port)."""
        return f"{urlsplit(self.webhdfs_url).scheme}://{address}"

    @property
    def metastore_uris(self) -> str:
        """hive.metastore.uris: every instance, comma-separated."""
        return ",".join(f"thrift://{host}:{port}" for host, port in self.metastores)


def metastores_from_uris(value: str) -> tuple:
    found = []
    for uri in filter(None, (u.strip() for u in value.split(","))):
        parts = urlsplit(uri)
        if parts.scheme != "thrift" or not parts.hostname or not parts.port:
            raise ValueError(f"HOPSHIVE_METASTORE_URIS: {uri!r} is not thrift://host:port")
        found.append((parts.hostname, parts.port))
    return tuple(found)


def db_from_url(url: str) -> dict:
    parts = urlsplit(url)
    db = {"user": unquote(parts.username or "root"), "password": unquote(parts.password or "")}
    if parts.hostname:
        db["host"] = parts.hostname
    if parts.port:
        db["port"] = parts.port
    socket = parse_qs(parts.query).get("unix_socket")
    if socket:
        db["unix_socket"] = socket[0]
    return db


def load(inventory: str | None, environ=os.environ) -> Targets:
    found, source = {}, "environment"
    if inventory:
        found, source = from_inventory(inventory), f"inventory {inventory}"
    url = environ.get("HOPSHIVE_WEBHDFS_URL") or found.get("webhdfs_url")
    metastores = found.get("metastores") or DEFAULT_METASTORES
    if environ.get("HOPSHIVE_METASTORE_URIS"):
        metastores = metastores_from_uris(environ["HOPSHIVE_METASTORE_URIS"])
    hbase_metastores = found.get("hbase_metastores", DEFAULT_HBASE_METASTORES)
    if environ.get("HOPSHIVE_HBASE_METASTORE_URIS"):
        hbase_metastores = metastores_from_uris(environ["HOPSHIVE_HBASE_METASTORE_URIS"])
    spark_host = found.get("spark_host", "127.0.0.1")
    spark_conf_dir = environ.get("HOPSHIVE_SPARK_CONF_DIR",
                                 DEFAULT_SPARK_CONF_DIR if spark_host in LOCAL_NAMES else "") or None
    db = found.get("db") or {}
    if environ.get("HOPSHIVE_DB"):
        db = db_from_url(environ["HOPSHIVE_DB"])
    separate = {n: environ[f"HOPSHIVE_DB_{n.upper()}"] for n in _DB_VARS if f"HOPSHIVE_DB_{n.upper()}" in environ}
    if not db:
        db = dict(DEFAULT_DB) if not separate else {"user": "root", "password": ""}
    db.update(separate)
    db = {k: v for k, v in db.items() if v not in (None, "") or k == "password"}
    if "port" in db:
        db["port"] = int(db["port"])
    if db.get("unix_socket") and not Path(db["unix_socket"]).exists():
        db.pop("unix_socket")  # a remote site: the socket named in group_vars is not on this machine
    server2 = found.get("server2") or DEFAULT_SERVER2
    if environ.get("HOPSHIVE_SERVER2"):
        host, _, port = environ["HOPSHIVE_SERVER2"].rpartition(":")
        server2 = (host, int(port))
    tls = environ["HOPSHIVE_TLS"] not in ("", "0", "false") if "HOPSHIVE_TLS" in environ else bool(found.get("tls"))
    scheme = "https" if tls else "http"
    admin = found.get("platform_admin") or DEFAULT_PLATFORM_ADMIN
    admin = (environ.get("HOPSHIVE_PLATFORM_ADMIN") or admin[0],
             environ.get("HOPSHIVE_PLATFORM_ADMIN_PASSWORD") or admin[1])
    url = url or _with_scheme(DEFAULT_URL, scheme)
    return Targets(webhdfs_url=url.rstrip("/"), db=db, metastores=metastores, spark_conf_dir=spark_conf_dir,
                   user=environ.get("HOPSHIVE_E2E_USER") or getpass.getuser(),
                   spark_user=environ.get("HOPSHIVE_E2E_SPARK_USER") or "hh_e2e_spark",
                   base=environ.get("HOPSHIVE_E2E_BASE") or "/tmp",
                   required=environ.get("HOPSHIVE_E2E_REQUIRED", "") not in ("", "0", "false"),
                   source=source, containers=found.get("containers", {}), db_nodes=found.get("db_nodes", ()),
                   namenodes=found.get("namenodes", ()), nameservice=found.get("nameservice"),
                   hbase_metastores=hbase_metastores, server2=server2,
                   platform_url=(environ.get("HOPSHIVE_PLATFORM_URL") or found.get("platform_url")
                                 or _with_scheme(DEFAULT_PLATFORM_URL, scheme)).rstrip("/"),
                   tls=tls, ca_file=environ.get("HOPSHIVE_CA_FILE") or found.get("ca_file") or "",
                   platform_admin=admin, group_hosts=found.get("group_hosts", {}),
                   hive_admin=found.get("hive_admin") or "hive",
                   spark_masters=found.get("spark_masters", ()), spark_workers=found.get("spark_workers", ()),
                   spark_master_port=int(found.get("spark_master_port", 7077)),
                   security_mode=environ.get("HOPSHIVE_SECURITY_MODE") or found.get("security_mode") or "token")


# ------------------------------------------------------------------ inventory
def from_inventory(path: str) -> dict:
    """The targets an Ansible YAML inventory names, as Targets' field names (and
    `spark_host`): the first host of the `namenode`, `mysql_cluster`, `spark`, `server2` and
    `platform` groups, every host of `metastore`, `mysql_cluster` and `namenode`, ports,
    accounts and the WebHDFS nameservice (several namenodes) from group_vars, and the hosts
    Ansible reaches with the docker connection ({address: container})."""
    hosts_file = Path(path)
    if hosts_file.is_dir():
        hosts_file = next((hosts_file / n for n in ("hosts.yml", "hosts.yaml") if (hosts_file / n).exists()),
                          hosts_file / "hosts.yml")
    tree = yaml.safe_load(hosts_file.read_text()) or {}
    groups, hostvars = {}, {}
    _walk_group("all", tree.get("all", {}), groups, hostvars)
    variables = _group_vars(hosts_file.parent / "group_vars")

    def address(name: str) -> str:
        own = hostvars.get(name, {})
        if own.get("ansible_host"):
            return str(own["ansible_host"])
        return "127.0.0.1" if name == "localhost" or own.get("ansible_connection") == "local" else name

    def host(group: str) -> str | None:
        members = groups.get(group) or []
        return address(members[0]) if members else None

    def var(name: str, default=None):
        value = _render(variables.get(name), variables)
        return default if value is None else value

    tls = bool(var("hopshive_tls", False))
    scheme = "https" if tls else "http"
    url = None
    if host("namenode"):
        url = f"{scheme}://{host('namenode')}:{var('hopshive_namenode_port', 9870)}"
    db = {}
    if host("mysql_cluster"):
        db = {"host": host("mysql_cluster"), "port": var("hopshive_db_port", 3306),
              "user": var("hopshive_db_admin_user", "root"), "password": var("hopshive_db_admin_password", ""),
              "unix_socket": var("hopshive_db_admin_unix_socket", "")}
    ports = var("hopshive_metastore_ports", [var("hopshive_metastore_port", 9083)])
    metastores = tuple((address(name), int(port)) for name in groups.get("metastore") or [] for port in ports)
    hbase_port = int(var("hopshive_metastore_hbase_port", DEFAULT_HBASE_METASTORES[0][1]))
    hbase_metastores = tuple((address(name), hbase_port) for name in groups.get("metastore") or []
                             if groups.get("hbase"))
    defaults = (tree.get("all") or {}).get("vars") or {}
    containers = {}
    for name, own in hostvars.items():
        own = {**defaults, **own}
        if "docker" in str(own.get("ansible_connection", "")):   # by address and by host name
            containers[address(name)] = containers[name] = str(own.get("ansible_docker_host") or name)
    db_nodes = tuple(address(name) for name in groups.get("mysql_cluster") or [])
    namenodes = tuple(f"{address(name)}:{var('hopshive_namenode_port', 9870)}" for name in groups.get("namenode") or [])
    found = {"webhdfs_url": url, "db": db, "metastores": metastores, "hbase_metastores": hbase_metastores,
             "spark_host": host("spark"),
             "containers": containers, "db_nodes": db_nodes, "namenodes": namenodes,
             "nameservice": var("hopshive_nameservice", "hopshive") if len(namenodes) > 1 else None,
             "group_hosts": {group: host(group) for group in groups if group != "all" and host(group)},
             "spark_masters": tuple(address(name) for name in groups.get("spark_master") or []),
             "spark_workers": tuple(address(name) for name in groups.get("spark_worker") or []),
             "spark_master_port": var("hopshive_spark_master_port", 7077),
             "hive_admin": var("hopshive_hive_admin", "hive"),
             "security_mode": var("hopshive_security_mode", "token"),
             "platform_admin": (var("platform_admin_email", DEFAULT_PLATFORM_ADMIN[0]),
                                var("platform_admin_password", DEFAULT_PLATFORM_ADMIN[1])),
             "tls": tls,
             # roles/tls: the deployment's CA on this controller (tls_controller_dir's default),
             # or the site's own.
             "ca_file": (var("tls_site_ca_file", "") if var("tls_source", "deployment") == "site"
                         else str(hosts_file.parent / ".tls" / "ca.pem")) if tls else ""}
    if host("server2"):
        found["server2"] = (host("server2"), int(var("hopshive_server2_port", DEFAULT_SERVER2[1])))
    if host("platform"):
        found["platform_url"] = f"{scheme}://{host('platform')}:{var('hopshive_platform_port', 8181)}"
    return found


def _with_scheme(url: str, scheme: str) -> str:
    return f"{scheme}://{url.split('://', 1)[1]}"


def _walk_group(name: str, group: dict, groups: dict, hostvars: dict) -> list[str]:
    group = group or {}
    members = []
    for host, own in (group.get("hosts") or {}).items():
        hostvars.setdefault(host, {}).update(own or {})
        members.append(host)
    for child, body in (group.get("children") or {}).items():
        members += _walk_group(child, body, groups, hostvars)
    groups[name] = list(dict.fromkeys(groups.get(name, []) + members))
    return members


def _group_vars(directory: Path) -> dict:
    """The `all` group's variables (group_vars/all.yml and group_vars/all/*.yml)."""
    merged: dict = {}
    files = [directory / "all.yml", directory / "all.yaml"]
    if (directory / "all").is_dir():
        files += sorted((directory / "all").glob("*.y*ml"))
    for file in files:
        if file.exists():
            merged.update(yaml.safe_load(file.read_text()) or {})
    return merged


_TEMPLATE = re.compile(r"^\{\{\s*(\w+)\s*(?:\|\s*default\((['\"])(.*?)\2\)\s*)?\}\}$")


def _render(value, variables: dict, depth: int = 0):
    """Just enough Jinja for group_vars: "{{ name }}" and "{{ name | default('x') }}";
    anything else counts as unset (the caller's default applies)."""
    if not isinstance(value, str) or "{{" not in value:
        return value
    match = _TEMPLATE.match(value.strip())
    if not match or depth > 10:
        return None
    resolved = _render(variables.get(match.group(1)), variables, depth + 1)
    return resolved if resolved is not None else match.group(3)
