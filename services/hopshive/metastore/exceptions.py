"""Domain errors of the metastore.  Stores and the service raise these; the Thrift edge
(``hopshive.metastore.thrift.errors``) is the one place that turns them into Hive's
NoSuchObjectException, AlreadyExistsException, ... in the reply."""

from __future__ import annotations

from ..exceptions import HopsHiveError


class MetastoreError(HopsHiveError):
    """Anything the client may be told about; sent as a MetaException unless a subclass
    says otherwise."""


class NoSuchObject(MetastoreError):
    """The database, table, partition, function or statistics asked for does not exist."""


class AlreadyExists(MetastoreError):
    pass


class InvalidObject(MetastoreError):
    """The object sent is malformed: bad name, missing storage descriptor, bad location."""


class InvalidOperation(MetastoreError):
    """The operation is not allowed in this state (non-empty database, changed partition keys)."""


class InvalidInput(MetastoreError):
    """A request argument is wrong (unknown configuration key, malformed partition name)."""


class NoSuchLock(MetastoreError):
    pass


class NoSuchTxn(MetastoreError):
    pass


class Unsupported(MetastoreError):
    """Hive has it, this metastore does not (yet)."""
