"""Storage-based authorization, as Hive's StorageBasedAuthorizationProvider does it in the
metastore: the namespace's permissions on an object's directory are the permissions on the
object.  The rules (which call needs which access on which directory) are the table in the
metastore README; the handler applies them, this module judges one directory at a time with
the namespace library's own permission code, so the metastore and the namenodes can never
disagree.

A location that does not exist yet is judged by its nearest existing ancestor (the one the
directory would be made in), as Hive does.  Locations outside the namespace (``file:``,
``s3a:``) are not ours to judge: only EXTERNAL tables may live there.  Superusers and
supergroup members of the namespace, and the configured Hive admin users, bypass every check.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from ..core.db import Tx
from ..namespace.inodes import Inode
from ..namespace.namespace import Namespace
from ..namespace.paths import split_path
from ..namespace.permissions import EXECUTE, READ, WRITE
from ..namespace.resolver import Resolved
from ..namespace.users import Caller
from .exceptions import InvalidObject
from .locations import Locations

READ_ACCESS = READ | EXECUTE       # reading an object's metadata
WRITE_ACCESS = WRITE | EXECUTE     # creating in, altering or dropping from a directory


class Authorizer:
    def __init__(self, namespace: Namespace, locations: Locations, enabled: bool, admins: Sequence[str]):
        self.namespace = namespace
        self.locations = locations
        self.enabled = enabled
        self.admins = frozenset(admins)

    def for_user(self, user: str) -> "Access":
        caller = self.namespace.caller(user)
        return Access(self, caller, not self.enabled or caller.superuser or user in self.admins)

    def check_placement(self, uri: str | None, kind: str, *containers: str | None) -> None:
        """Refuse locations no object may have: the root, the warehouse and its parents (but
        for the default database, which is the warehouse), and the directories of the objects
        that contain it (``containers``: a table's database, a partition's table and
        database).  Dropping such an object with its data would delete far more than it."""
        if not uri:
            return
        location = self.locations.parse(uri)
        if not location.ours:
            return
        warehouse = split_path(self.locations.parse(self.locations.warehouse).path)
        forbidden = {"/" + "/".join(warehouse[:depth]) for depth in range(len(warehouse) + 1)}
        forbidden.update(self.locations.parse(c).path for c in containers if c)
        if location.path in forbidden:
            raise InvalidObject(f"location {uri} can not hold a {kind}: it is the namespace root, the warehouse "
                                f"or one of its parents, or the directory of the object that contains it")


class Access:
    """One caller's checks; ``bypass`` when authorization is off or the caller is a superuser
    or Hive admin."""

    def __init__(self, authorizer: Authorizer, caller: Caller, bypass: bool):
        self.authorizer = authorizer
        self.caller = caller
        self.bypass = bypass

    def require(self, uri: str | None, access: int) -> None:
        """Raise AccessDenied (Hive's "Permission denied: user=..., access=..., inode=...")
        unless the caller has ``access`` on the directory of ``uri``."""
        self.require_all([(uri, access)])

    def require_all(self, checks: Iterable[tuple[str | None, int]]) -> None:
        """As require, for several locations, in one read-only transaction."""
        if self.bypass:
            return
        paths = []
        for uri, access in checks:
            location = self.authorizer.locations.parse(uri) if uri else None
            if location is not None and location.ours:
                paths.append((location.path, access))
        if not paths:
            return
        namespace = self.authorizer.namespace

        def work(tx: Tx) -> None:
            for path, access in paths:
                self.check_resolved(namespace.resolver.resolve(tx, split_path(path)), access, path)
        namespace.db.run(work, readonly=True)

    def require_chain(self, uri: str | None, chain: list[Inode] | None, access: int) -> None:
        """As require, judged on ``chain`` (the inodes from the root to the directory of
        ``uri``, read with the object) when it is that path's; otherwise resolved afresh."""
        if self.bypass:
            return
        location = self.authorizer.locations.parse(uri) if uri else None
        components = split_path(location.path) if location is not None and location.ours else None
        if chain is None or components is None or [i.name for i in chain[1:]] != components:
            self.require(uri, access)
            return
        self.check_resolved(Resolved(components, chain), access, location.path)

    def check_resolved(self, resolved: Resolved, access: int, path: str) -> None:
        """The check on a path the caller has already resolved (no extra query)."""
        if self.bypass:
            return
        permissions = self.authorizer.namespace.permissions
        permissions.check_traverse(self.caller, resolved.ancestors, path)
        target = resolved.inodes[-1]
        if resolved.exists:
            permissions.check(self.caller, target, access, path)
        else:   # judged by the directory it would be made in
            where = "/" + "/".join(resolved.components[:len(resolved.inodes) - 1])
            permissions.check(self.caller, target, access | EXECUTE, where)
