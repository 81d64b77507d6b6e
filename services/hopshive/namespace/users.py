"""Users and groups: names in the `hops` tables, ids on the inodes.

Ids never change, so name <-> id lookups are cached for the life of the process.  A
user's groups are re-read after a short TTL so that membership changes take effect.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from ..core.db import Database, IntegrityError, Tx

GROUPS_TTL = 5.0


@dataclass(frozen=True)
class Caller:
    """Who runs an operation, with the facts permission checks need."""

    name: str
    groups: frozenset[str]
    superuser: bool


class UserDirectory:
    def __init__(self, db: Database, superusers: list[str], supergroup: str):
        self.db = db
        self.superusers = set(superusers)
        self.supergroup = supergroup
        self._ids: dict[tuple[str, str], int] = {}
        self._names: dict[tuple[str, int], str] = {}
        self._groups: dict[str, tuple[float, frozenset[str]]] = {}
        self._lock = threading.Lock()

    def _id(self, table: str, name: str, tx: Tx | None) -> int:
        cached = self._ids.get((table, name))
        if cached is not None:
            return cached

        def lookup(tx: Tx) -> int:
            row = tx.query_one(f"SELECT id FROM hops.hdfs_{table} WHERE name=%s", (name,))
            if row:
                return row[0]
            try:
                tx.execute(f"INSERT INTO hops.hdfs_{table} (name) VALUES (%s)", (name,))
                return tx.lastrowid
            except IntegrityError:  # created concurrently
                return tx.query_one(f"SELECT id FROM hops.hdfs_{table} WHERE name=%s", (name,))[0]

        # Users and groups are created in their own transaction so that a rolled-back
        # operation never leaves a cached id that does not exist.
        ident = self.db.run(lookup)
        with self._lock:
            self._ids[(table, name)] = ident
            self._names[(table, ident)] = name
        return ident

    def user_id(self, name: str) -> int:
        return self._id("users", name, None)

    def group_id(self, name: str) -> int:
        return self._id("groups", name, None)

    def _name(self, table: str, ident: int | None) -> str:
        if ident is None:
            return ""
        cached = self._names.get((table, ident))
        if cached is not None:
            return cached
        row = self.db.run(lambda tx: tx.query_one(f"SELECT name FROM hops.hdfs_{table} WHERE id=%s", (ident,)))
        name = row[0] if row else str(ident)
        with self._lock:
            self._names[(table, ident)] = name
            self._ids[(table, name)] = ident
        return name

    def user_name(self, ident: int | None) -> str:
        return self._name("users", ident)

    def group_name(self, ident: int | None) -> str:
        return self._name("groups", ident)

    def groups_of(self, user: str) -> frozenset[str]:
        cached = self._groups.get(user)
        if cached and cached[0] > time.monotonic():
            return cached[1]
        rows = self.db.run(lambda tx: tx.query(
            "SELECT g.name FROM hops.hdfs_users u JOIN hops.hdfs_users_groups ug ON ug.user_id=u.id"
            " JOIN hops.hdfs_groups g ON g.id=ug.group_id WHERE u.name=%s", (user,)))
        groups = frozenset(r[0] for r in rows)
        self._groups[user] = (time.monotonic() + GROUPS_TTL, groups)
        return groups

    def caller(self, user: str) -> Caller:
        groups = self.groups_of(user)
        return Caller(user, groups, user in self.superusers or self.supergroup in groups)
