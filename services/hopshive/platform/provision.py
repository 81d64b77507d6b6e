"""What a project is outside the platform's tables (thesis §2.2, §3.3): namespace users and
groups, the directory /Projects/<project>, and the Hive database <project>.

The namespace is changed over WebHDFS as its superuser (the namenode does directories and
blocks), group membership in the `hops` user tables (WebHDFS has no call for it), and the
database through the metastore's Thrift API as the Hive admin user, who may create it in the
warehouse; its directory is then handed to the project: owner ``<project>__<owner>``, group
``<project>``, mode 0770, so the admin cannot read the project's data afterwards.
"""

from __future__ import annotations

import contextlib
import logging
from urllib.parse import quote

import requests
from pymetastore.hive_metastore import ThriftHiveMetastore
from pymetastore.hive_metastore import ttypes as hms
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport import TSocket, TTransport
from thrift.Thrift import TException

from ..core.db import Database, Tx
from .exceptions import ProvisioningFailed

log = logging.getLogger("hopshive.platform")
PROJECTS_ROOT = "/Projects"
HOMES_ROOT = "/user"


def project_user(project: str, username: str) -> str:
    return f"{project}__{username}"


class Namespace:
    """The namenode's WebHDFS, as its superuser."""

    def __init__(self, url: str, superuser: str, timeout: float = 30.0):
        self.url = url.rstrip("/")
        self.superuser = superuser
        self.timeout = timeout

    def _call(self, method: str, path: str, op: str, ok_missing: bool = False, **params) -> dict:
        params = dict(params, op=op, **{"user.name": self.superuser})
        try:
            response = requests.request(method, f"{self.url}/webhdfs/v1{quote(path)}", params=params,
                                        timeout=self.timeout)
        except requests.RequestException as exc:
            raise ProvisioningFailed(f"the namenode at {self.url} cannot be reached: {exc}") from exc
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


class Metastore:
    """The metastore's Thrift API as the Hive admin user."""

    def __init__(self, host: str, port: int, admin: str, timeout: float = 60.0):
        self.host, self.port, self.admin, self.timeout = host, port, admin, timeout

    @contextlib.contextmanager
    def client(self):
        sock = TSocket.TSocket(self.host, self.port)
        sock.setTimeout(int(self.timeout * 1000))
        transport = TTransport.TBufferedTransport(sock)
        try:
            transport.open()
            client = ThriftHiveMetastore.Client(TBinaryProtocolAccelerated(transport))
            client.set_ugi(self.admin, [])
            yield client
        except TException as exc:
            raise ProvisioningFailed(f"the metastore at {self.host}:{self.port} refused: "
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
