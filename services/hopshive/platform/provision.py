"""What a project is outside the platform's tables (thesis §2.2, §3.3): namespace users and
groups, the directory /Projects/<project>, and the Hive database <project>.

The namespace is changed over WebHDFS as its superuser (the namenode does directories and
blocks), group membership in the `hops` user tables (WebHDFS has no call for it), and the
database through the metastore's Thrift API as the Hive admin user, who may create it in the
warehouse; its directory is then handed to the project: owner ``<project>__<owner>``, group
``<project>``, mode 0770, so the admin cannot read the project's data afterwards.

The platform proves who it acts as, never asserts it (#24): it mints short-lived delegation
tokens for the superuser and the Hive admin with its own SecretManager (ServiceTokens), sends
WebHDFS calls with ``delegation=`` and talks to the metastore over SASL DIGEST-MD5 with the
Hive admin's token.  Both work whether the namenodes and metastores run ``security.mode``
token or simple (simple mode still checks a token when one is sent).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from typing import Callable, Iterator, Sequence, TypeVar
from urllib.parse import quote

import requests
from pymetastore.hive_metastore import ThriftHiveMetastore
from pymetastore.hive_metastore import ttypes as hms
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport import TSocket, TSSLSocket, TTransport
from thrift.Thrift import TException

from ..core.db import Database, Tx
from ..core.tls import client_context, verify
from ..security.sasl_client import digest_md5_transport
from ..security.secrets import SecretManager
from ..security.tokens import Token
from .exceptions import ProvisioningFailed, Unreachable

log = logging.getLogger("hopshive.platform")
PROJECTS_ROOT = "/Projects"
HOMES_ROOT = "/user"
T = TypeVar("T")


def project_user(project: str, username: str) -> str:
    return f"{project}__{username}"


class ServiceTokens:
    """Delegation tokens for the service accounts the platform provisions as (the namespace
    superuser, the Hive admin), minted with the platform's SecretManager -- the one that
    issues members' tokens, on the database account that may write token rows.

    One token per account, kept in this process's memory only, lives ``lifetime`` seconds
    (not renewable) and is re-minted once half of that has passed: a token sent always has at
    least half its lifetime left, a margin for slow calls and for clock skew between this host
    and the namenodes' and metastores'.  A token a service refused (cancelled by its owner, say)
    is dropped at once so the next call mints another.  Minting per operation instead would
    write a token row per project step and leave each alive for its lifetime; this way a
    platform process keeps at most two live tokens per account."""

    def __init__(self, secrets: SecretManager, lifetime: float | str):
        self.secrets = secrets
        self.lifetime = self.check_lifetime(lifetime, secrets.policy.max_lifetime)
        self._tokens: dict[str, tuple[Token, float]] = {}     # user -> (token, monotonic time to re-mint)
        self._lock = threading.Lock()

    @staticmethod
    def check_lifetime(lifetime: object, max_lifetime: float) -> float:
        """``lifetime`` as seconds; ValueError naming the setting when it is no number or
        not in (0, max_lifetime]."""
        try:
            seconds = float(lifetime)     # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise ValueError(f"platform.service_token_lifetime must be a number of seconds, not {lifetime!r}") from None
        if not 0 < seconds <= max_lifetime:
            raise ValueError(f"platform.service_token_lifetime must be more than 0 and at most "
                             f"security.max_lifetime ({max_lifetime:g} s), not {seconds:g}")
        return seconds

    def get(self, user: str) -> Token:
        """A live token for ``user``."""
        with self._lock:
            cached = self._tokens.get(user)
            if cached is not None and time.monotonic() < cached[1]:
                return cached[0]
            token = self.secrets.issue(user, "", "", self.lifetime)
            self._tokens[user] = (token, time.monotonic() + self.lifetime / 2)
        log.info("service token minted", extra={"user": user, "expiresAt": token.decoded().max_date})
        return token

    def refused(self, user: str, token: Token) -> None:
        """A service refused ``token``: mint a new one next time (unless that happened)."""
        with self._lock:
            if self._tokens.get(user, (None,))[0] == token:
                del self._tokens[user]
        log.warning("service token refused; minting another", extra={"user": user})


def addresses(setting: str | Sequence[str]) -> list[str]:
    """A setting that names one service or several: a list, or a comma-separated string."""
    items = setting.split(",") if isinstance(setting, str) else setting
    found = [str(item).strip().rstrip("/") for item in items if str(item).strip()]
    if not found:
        raise ValueError(f"no address in {setting!r}")
    return found


class Failover:
    """The instances of a service any of which can answer (the namenodes share the namespace
    in the database, the metastores the metadata), tried in turn: a call goes to the one that
    answered last and moves on when it cannot be reached, so provisioning rides out one
    instance's restart (a rolling upgrade) or loss.  ``attempt(address)`` raises Unreachable
    for an instance it cannot reach; every other answer, or error, is the service's."""

    def __init__(self, instances: list[str]):
        self.instances = instances
        self.first = 0          # the instance that answered last: the next call starts there

    def call(self, attempt: Callable[[str], T]) -> T:
        unreachable = []
        for k in range(len(self.instances)):
            index = (self.first + k) % len(self.instances)
            try:
                result = attempt(self.instances[index])
            except Unreachable as exc:
                unreachable.append(str(exc))
                continue
            self.first = index
            return result
        raise ProvisioningFailed("; ".join(unreachable))


class Namespace:
    """The namenodes' WebHDFS, as their superuser (proven with a token).  ``urls``: one base
    URL or several (a list, or comma-separated), moved through by Failover."""

    def __init__(self, urls: str | Sequence[str], superuser: str, tokens: ServiceTokens, timeout: float = 30.0,
                 ca_file: str = ""):
        self.namenodes = Failover(addresses(urls))
        self.verify = verify(ca_file)      # an https namenode is checked against the deployment's CA
        self.superuser = superuser
        self.tokens = tokens
        self.timeout = timeout

    def _request(self, method: str, path: str, params: dict, token: Token) -> requests.Response:
        def attempt(url: str) -> requests.Response:
            try:
                response = requests.request(method, f"{url}/webhdfs/v1{quote(path)}", timeout=self.timeout,
                                            params=dict(params, delegation=token.url_string()), verify=self.verify)
            except requests.RequestException as exc:
                raise Unreachable(f"the namenode at {url} cannot be reached: {exc}") from exc
            if response.status_code == 503:     # RetriableException: refused before doing anything
                raise Unreachable(f"the namenode at {url} is not serving: {response.text[:200]}")
            return response
        return self.namenodes.call(attempt)

    def _call(self, method: str, path: str, op: str, ok_missing: bool = False, **params: str) -> dict:
        params["op"] = op
        token = self.tokens.get(self.superuser)
        response = self._request(method, path, params, token)
        if _remote_exception(response) == "InvalidToken":     # cancelled behind our back: once more
            self.tokens.refused(self.superuser, token)
            response = self._request(method, path, params, self.tokens.get(self.superuser))
        if response.status_code == 404 and ok_missing:
            return {}
        if response.status_code != 200:
            try:
                message = response.json()["RemoteException"]["message"]
            except (ValueError, KeyError, TypeError):
                message = response.text[:200]
            raise ProvisioningFailed(f"{op} {path} failed on the namenode: {message}")
        return response.json() if response.content else {}

    def mkdirs(self, path: str, owner: str, group: str, mode: str) -> None:
        self._call("PUT", path, "MKDIRS", permission=mode)
        self.chown(path, owner, group, mode)

    def ensure_directory(self, path: str, mode: str) -> None:
        """Make ``path`` with ``mode`` unless it exists (an existing one keeps its mode)."""
        if not self._call("GET", path, "GETFILESTATUS", ok_missing=True):
            self._call("PUT", path, "MKDIRS", permission=mode)

    def chown(self, path: str, owner: str, group: str, mode: str) -> None:
        self._call("PUT", path, "SETOWNER", owner=owner, group=group)
        self._call("PUT", path, "SETPERMISSION", permission=mode)

    def delete(self, path: str) -> None:
        self._call("DELETE", path, "DELETE", ok_missing=True, recursive="true")


class Groups:
    """Group membership in the `hops` user tables (what the namenodes and the metastore read)."""

    def __init__(self, db: Database):
        self.db = db

    @staticmethod
    def _id(tx: Tx, table: str, name: str) -> int:
        tx.execute(f"INSERT IGNORE INTO hops.hdfs_{table} (name) VALUES (%s)", (name,))
        return tx.query_one(f"SELECT id FROM hops.hdfs_{table} WHERE name=%s", (name,))[0]

    def add(self, user: str, group: str) -> None:
        def work(tx: Tx) -> None:
            tx.execute("INSERT IGNORE INTO hops.hdfs_users_groups (user_id, group_id) VALUES (%s, %s)",
                       (self._id(tx, "users", user), self._id(tx, "groups", group)))
        self.db.run(work)

    def remove(self, user: str, group: str) -> None:
        self.db.run(lambda tx: tx.execute(
            "DELETE FROM hops.hdfs_users_groups WHERE user_id=(SELECT id FROM hops.hdfs_users WHERE name=%s)"
            " AND group_id=(SELECT id FROM hops.hdfs_groups WHERE name=%s)", (user, group)))


def _remote_exception(response: requests.Response) -> str | None:
    """The short exception name of a WebHDFS error answer (None for anything else)."""
    if response.status_code < 400:
        return None
    try:
        return str(response.json()["RemoteException"]["exception"])
    except (ValueError, KeyError, TypeError):
        return None


class Metastore:
    """The metastore's Thrift API as the Hive admin user, authenticated by SASL DIGEST-MD5
    with the admin's token (Hadoop's conventions, hopshive.security.sasl_client).  No
    set_ugi: the connection is the token's owner, as a Hive client's SASL connection is.
    ``tls``: SASL inside TLS, the metastore verified with ``ca_file`` (empty: the system's
    trust store).  ``hosts``: one metastore host or several (a list, or comma-separated, all
    on ``port``), moved through by Failover."""

    def __init__(self, hosts: str | Sequence[str], port: int, admin: str, tokens: ServiceTokens,
                 timeout: float = 60.0, tls: bool = False, ca_file: str = ""):
        self.metastores = Failover(addresses(hosts))
        self.port, self.admin, self.tokens, self.timeout = port, admin, tokens, timeout
        self.tls = client_context(ca_file) if tls else None

    def _connect(self) -> tuple[str, TTransport.TTransportBase]:
        """(host, an authenticated transport to it).  A token the metastore refuses is
        replaced once (it may have been cancelled); a second refusal is the metastore's answer."""
        return self.metastores.call(self._connect_to)

    def _connect_to(self, host: str) -> tuple[str, TTransport.TTransportBase]:
        token = self.tokens.get(self.admin)
        try:
            return host, self._open(host, token)
        except TTransport.TTransportException:
            self.tokens.refused(self.admin, token)
        try:
            return host, self._open(host, self.tokens.get(self.admin))
        except TTransport.TTransportException as exc:
            raise ProvisioningFailed(f"the metastore at {host}:{self.port} refused the Hive admin "
                                     f"{self.admin}'s token (SASL DIGEST-MD5): {exc}") from exc

    def _open(self, host: str, token: Token) -> TTransport.TTransportBase:
        sock = TSSLSocket.TSSLSocket(host, self.port, ssl_context=self.tls) if self.tls \
            else TSocket.TSocket(host, self.port)
        sock.setTimeout(int(self.timeout * 1000))
        try:
            sock.open()
        except TTransport.TTransportException as exc:
            raise Unreachable(f"the metastore at {host}:{self.port} cannot be reached: {exc}") from exc
        transport = digest_md5_transport(sock, token.identifier, token.password)
        try:
            transport.open()
        except (TTransport.TTransportException, EOFError, OSError) as exc:
            sock.close()
            raise TTransport.TTransportException(TTransport.TTransportException.NOT_OPEN, str(exc)) from exc
        return transport

    @contextlib.contextmanager
    def client(self) -> Iterator[ThriftHiveMetastore.Client]:
        host, transport = self._connect()
        try:
            yield ThriftHiveMetastore.Client(TBinaryProtocolAccelerated(transport))
        except TException as exc:
            raise ProvisioningFailed(f"the metastore at {host}:{self.port} refused: "
                                     f"{getattr(exc, 'message', None) or exc}") from exc
        finally:
            transport.close()

    def create_database(self, name: str, description: str) -> str:
        """Create the database (the metastore makes its directory); returns its location."""
        with self.client() as client:
            try:
                client.create_database(hms.Database(name=name, description=description, parameters={}))
            except hms.AlreadyExistsException:
                log.info("database exists already", extra={"database": name})
            return client.get_database(name).locationUri

    def database_location(self, name: str) -> str | None:
        """The database's location (None when there is no such database)."""
        with self.client() as client:
            try:
                return client.get_database(name).locationUri
            except hms.NoSuchObjectException:
                return None

    def drop_database(self, name: str) -> None:
        """Drop the database and its tables, if it is still there."""
        with self.client() as client:
            try:
                client.drop_database(name, True, True)
            except hms.NoSuchObjectException:
                pass


def location_path(uri: str) -> str:
    """``webhdfs://host:port/user/hive/warehouse/p.db`` -> ``/user/hive/warehouse/p.db``."""
    rest = uri.split("://", 1)[1] if "://" in uri else uri
    return "/" + rest.split("/", 1)[1] if "/" in rest else "/"
