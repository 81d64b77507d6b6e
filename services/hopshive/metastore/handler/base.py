"""Per-connection state and what every group of calls shares."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from ..authentication import Authenticator
from ..authorization import READ_ACCESS, WRITE_ACCESS, Access, Authorizer
from ..exceptions import InvalidInput
from ..locations import Locations
from ..names import normalize
from ..store import RawStore
from ..warehouse import Directories, Warehouse

# Hive 2.3's MetaConfVars: settable per connection with setMetaConf.
META_CONF = {
    "hive.metastore.try.direct.sql": "true",
    "hive.metastore.try.direct.sql.ddl": "true",
    "hive.metastore.client.socket.timeout": "600s",
    "hive.metastore.partition.name.whitelist.pattern": "",
    "hive.metastore.integral.jdo.pushdown": "false",
    "hive.metastore.batch.retrieve.max": "300",
    "hive.metastore.batch.retrieve.table.partition.max": "1000",
    "hive.metastore.init.hooks": "",
    "hive.metastore.pre.event.listeners": "",
    "hive.metastore.event.listeners": "",
    "hive.metastore.event.db.listener.timetolive": "86400s",
    "hive.metastore.event.clean.freq": "0s",
    "hive.metastore.event.expiry.duration": "0s",
    "hive.metastore.filter.hook": "org.apache.hadoop.hive.metastore.DefaultMetaStoreFilterHookImpl",
    "hive.metastore.dml.events": "false",
    "hive.metastore.transactional.event.listeners": "",
    "hive.metastore.disallow.incompatible.col.type.changes": "true",
}


@dataclass
class Session:
    """One client connection: who it proved to be (``authenticated``: the owner of its SASL
    delegation token, None without SASL), whom it acts for (``set_ugi``) and its metaconf
    overrides."""
    peer: tuple
    authenticated: str | None = None
    user: str | None = None
    groups: list = field(default_factory=list)
    meta_conf: dict = field(default_factory=dict)
    calls: int = 0


class HandlerBase:
    def __init__(self, store: RawStore, warehouse: Warehouse, authorizer: Authorizer, authenticator: Authenticator,
                 settings: dict):
        self.store = store
        self.warehouse = warehouse
        self.authorizer = authorizer
        self.authenticator = authenticator
        self.locations: Locations = warehouse.locations
        self.settings = settings
        self.started = int(time.time())
        self._lock = threading.Lock()

    def user(self, session: Session) -> str:
        """Who calls: the ``set_ugi`` user (checked by ``set_ugi`` on an authenticated
        connection), else the authenticated one; a connection with neither is anonymous (not
        the service, which would make it an administrator)."""
        return session.user or session.authenticated or self.settings["anonymous_user"]

    def access(self, session: Session) -> Access:
        return self.authorizer.for_user(self.user(session))

    def dirs(self, session: Session, access: Access | None = None) -> Directories:
        return self.warehouse.for_user(self.user(session), access or self.access(session))

    def authorize(self, session: Session, *checks: tuple[str | None, int]) -> Access:
        """Apply storage-based authorization: each check is (location, access)."""
        access = self.access(session)
        access.require_all(checks)
        return access

    def table_dir(self, table) -> str | None:
        """The directory that guards a table: its own, or its database's for a view."""
        location = table.sd.location if table.sd else None
        return location or self.store.get_database(table.dbName).locationUri

    def checked_table(self, session: Session, db_name: str, name: str, wanted: int):
        """(table, access) after checking the caller has ``wanted`` on the table's directory,
        judged on the inodes the store read with the table when it could."""
        access = self.access(session)
        if access.bypass:
            return self.store.get_table(self.n(db_name), self.n(name)), access
        table, chain = self.store.get_table_with_directory(self.n(db_name), self.n(name))
        location = table.sd.location if table.sd else None
        if location:
            access.require_chain(location, chain, wanted)
        else:
            access.require(self.table_dir(table), wanted)
        return table, access

    def readable_table(self, session: Session, db_name: str, name: str):
        return self.checked_table(session, db_name, name, READ_ACCESS)[0]

    def writable_table(self, session: Session, db_name: str, name: str):
        """The table, after checking the caller may change it; returns (table, access)."""
        return self.checked_table(session, db_name, name, WRITE_ACCESS)

    @staticmethod
    def n(name: str | None) -> str:
        return normalize(name)

    def config_values(self) -> dict[str, str]:
        return {"hive.metastore.warehouse.dir": self.locations.warehouse,
                "hive.metastore.uris": self.settings.get("uris", ""),
                "hive.metastore.execute.setugi": "true",
                "hive.metastore.server.min.threads": "1",
                "hive.txn.timeout": f"{int(self.settings['lock_timeout'])}s",
                **META_CONF}

    def meta_conf(self, session: Session, key: str) -> str:
        if key not in META_CONF:
            raise InvalidInput(f"Invalid configuration key {key}")
        return session.meta_conf.get(key, META_CONF[key])
