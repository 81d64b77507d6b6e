"""The consistent store: Hive 2.3's metastore tables on MySQL/MariaDB (schema in
``metastore/schema``), with storage descriptors linked to ``hops.hdfs_inodes`` by foreign
key, and directory operations joined to the metadata transaction.

Each concern lives in its own module under ``stores/mysql``; this class only assembles them
behind the RawStore contract.  Every method is one transaction (``Database.run``: deadlocks
and Galera conflicts are retried).  Writers lock the table row (``TBLS ... FOR UPDATE``)
before anything else, so concurrent renames, drops and partition adds of one table are
serialised; namespace locks are taken after it, root to leaf."""

from __future__ import annotations

from ...core.db import Database
from ..store import RawStore
from .mysql.base import StoreBase
from .mysql.databases import DatabaseOps
from .mysql.functions import FunctionOps
from .mysql.indexes import IndexOps
from .mysql.locks import LockOps
from .mysql.partitions import PartitionWrites
from .mysql.partreads import PartitionReads
from .mysql.stats import StatsOps
from .mysql.tables import TableOps


class MySQLStore(DatabaseOps, TableOps, PartitionReads, PartitionWrites, IndexOps, FunctionOps, StatsOps, LockOps,
                 StoreBase, RawStore):

    def __init__(self, db: Database):
        StoreBase.__init__(self, db)

    def close(self) -> None:
        self.db.close()
