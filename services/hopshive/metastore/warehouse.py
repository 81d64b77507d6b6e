"""The file-system side of DDL: directories in the HopsHive namespace, inside the store's
transaction.

The namespace library joins the caller's transaction (``tx=``), so a store that shares the
MariaDB server (the MySQL store) creates, deletes and renames directories atomically with
the metadata.  ``Directories`` is bound to one caller: the ``set_ugi`` user when
``metastore.do_as_client`` is on (Hive's doAs), else the service user.
"""

from __future__ import annotations

import logging
from typing import Callable

from ..core.db import Tx
from ..namespace.namespace import Namespace
from ..namespace.paths import split_path
from .authorization import WRITE_ACCESS, Access
from .exceptions import InvalidObject, InvalidOperation
from .locations import Location, Locations

log = logging.getLogger(__name__)
InodeKey = tuple  # (partition_id, parent_id, name) of hops.hdfs_inodes
Repoint = Callable[[Tx, tuple, tuple], None]


class Warehouse:
    def __init__(self, namespace: Namespace, locations: Locations, service_user: str,
                 do_as_client: bool = True, use_trash: bool = False, dir_permission: int | None = None):
        self.namespace = namespace
        self.locations = locations
        self.service_user = service_user
        self.do_as_client = do_as_client
        self.use_trash = use_trash
        self.dir_permission = dir_permission

    def for_user(self, user: str, access: Access | None = None) -> "Directories":
        """``access``: the caller's authorization, applied to every location it gives."""
        return Directories(self, user if self.do_as_client else self.service_user, user, access).prepare()

    def service(self) -> "Directories":
        return Directories(self, self.service_user, self.service_user).prepare()


class Directories:
    """Directory operations for one caller; every method runs inside ``tx``.  ``user`` acts
    on the namespace; ``requester`` is who called (they differ when doAs is off)."""

    def __init__(self, warehouse: Warehouse, user: str, requester: str, access: Access | None = None):
        self.warehouse = warehouse
        self.user = user
        self.requester = requester
        self.access = access
        self._caller = None

    def prepare(self) -> "Directories":
        """Look the user up now, outside the store's transaction (the namespace keeps users
        and groups in their own short transactions, on another pooled connection)."""
        self.caller
        self.warehouse.namespace.users.user_id(self.user)
        return self

    @property
    def caller(self):
        if self._caller is None:
            self._caller = self.warehouse.namespace.caller(self.user)
        return self._caller

    def parse(self, uri: str) -> Location:
        return self.warehouse.locations.parse(uri)

    def link(self, tx: Tx, uri: str | None, create: bool, foreign_ok: bool) -> InodeKey | None:
        """The inode key to store for a location (None for no location or a foreign one).

        ``create``: make the directory (and parents) when missing; otherwise a missing
        directory is an InvalidObject.  The caller needs write access to it (to its nearest
        existing ancestor when missing).  ``foreign_ok``: accept locations outside the
        namespace (external tables); otherwise they are an InvalidObject.
        """
        if not uri:
            return None
        location = self.parse(uri)
        if not location.ours:
            if not foreign_ok:
                raise InvalidObject(f"location {uri} is outside the HopsHive namespace: only EXTERNAL "
                                    "tables (and their partitions) may be stored elsewhere")
            return None
        namespace = self.warehouse.namespace
        resolved = namespace.resolver.resolve(tx, split_path(location.path))
        if self.access is not None:
            self.access.check_resolved(resolved, WRITE_ACCESS, location.path)
        inode = resolved.last
        if inode is None:
            if not create:
                raise InvalidObject(f"location {uri} does not exist (an EXTERNAL table's directory "
                                    "must exist before the table is created)")
            inode = namespace.mkdirs(self.caller, location.path, self.warehouse.dir_permission, tx=tx)
        elif not inode.is_dir:
            raise InvalidObject(f"location {uri} is a file, not a directory")
        return inode.key

    def exists(self, tx: Tx, uri: str) -> bool:
        location = self.parse(uri)
        return location.ours and self.warehouse.namespace.resolve(tx, location.path) is not None

    def delete(self, tx: Tx, uri: str | None, owner: str | None, purge: bool = False) -> bool:
        """Delete the directory tree of a dropped object owned by ``owner`` (to the caller's
        trash when ``metastore.use_trash`` and not ``purge``); foreign or missing locations are
        left alone.  Returns True if deleted.

        A directory is deleted only when it belongs to the object's owner, the dropping user
        or the service: one that belongs to anyone else was adopted (the object was created
        on a directory that already existed), and its data is not the object's to delete --
        not even when an administrator drops it.  Such a directory is kept and logged."""
        if not uri:
            return False
        location = self.parse(uri)
        if not location.ours or not split_path(location.path):
            return False
        namespace = self.warehouse.namespace
        inode = namespace.resolve(tx, location.path)
        if inode is None:
            return False
        holder = namespace.users.user_name(inode.user_id)
        if holder not in (owner, self.requester, self.warehouse.service_user):
            log.warning("kept an adopted directory", extra={
                "location": uri, "directory_owner": holder, "object_owner": owner, "user": self.requester})
            return False
        skip_trash = purge or not self.warehouse.use_trash
        return namespace.delete(self.caller, location.path, True, skip_trash, tx=tx)

    def delete_if_empty(self, tx: Tx, uri: str) -> bool:
        location = self.parse(uri)
        if not location.ours:
            return False
        namespace = self.warehouse.namespace
        inode = namespace.resolve(tx, location.path)
        if inode is None or not inode.is_dir or tx.query_one(
                "SELECT 1 FROM hops.hdfs_inodes WHERE parent_id=%s LIMIT 1", (inode.id,)):
            return False
        return namespace.delete(self.caller, location.path, False, True, tx=tx)

    def rename(self, tx: Tx, old_uri: str, new_uri: str, repoint: Repoint) -> bool:
        """Move a directory, calling ``repoint(tx, old_key, new_key)`` between inserting the
        new inode row and deleting the old one.  False when there is nothing to move (the
        old location is foreign or absent); raises InvalidOperation when the new one exists."""
        old, new = self.parse(old_uri), self.parse(new_uri)
        if not old.ours or not new.ours:
            return False
        namespace = self.warehouse.namespace
        if namespace.resolve(tx, old.path) is None:
            return False
        if namespace.resolve(tx, new.path) is not None:
            raise InvalidOperation(f"cannot move {old_uri} to {new_uri}: the new location already exists")
        parent = new.path.rsplit("/", 1)[0] or "/"
        namespace.mkdirs(self.caller, parent, None, tx=tx)
        if not namespace.rename(self.caller, old.path, new.path, tx=tx, repoint=repoint):
            raise InvalidOperation(f"cannot move {old_uri} to {new_uri}")
        return True
