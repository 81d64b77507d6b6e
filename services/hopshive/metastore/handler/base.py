"""Per-connection state and what every group of calls shares."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

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
    """One client connection: who it is (``set_ugi``) and its metaconf overrides."""
    peer: tuple
    user: str | None = None
    groups: list = field(default_factory=list)
    meta_conf: dict = field(default_factory=dict)
    calls: int = 0


class HandlerBase:
    def __init__(self, store: RawStore, warehouse: Warehouse, settings: dict):
        self.store = store
        self.warehouse = warehouse
        self.locations: Locations = warehouse.locations
        self.settings = settings
        self.started = int(time.time())
        self._lock = threading.Lock()

    def dirs(self, session: Session) -> Directories:
        return self.warehouse.for_user(session.user)

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
