"""RawStore: the storage contract of the metastore, as Hive's RawStore is for ObjectStore
and HBaseStore.  The Thrift handler calls only this; each backend (``stores/``) implements
it in its own module and is picked by name through ``registry``.

Objects in and out are the Thrift API structs (``Database``, ``Table``, ``Partition``,
``Function``, ``ColumnStatistics``, lock structs) of the Hive 3.1 IDL, like Hive's own
RawStore, and the Hive 2 IDL's ``Index`` (``indexes``: Hive 3 dropped indexes).  Names arrive normalised (lower case) from the service layer.  Every method is
atomic: it commits all of its effects or none.

Directories: methods that create, drop or move objects take ``dirs`` (a
``warehouse.Directories`` bound to the calling user).  A backend that shares the namespace's
database runs the directory operations in the metadata transaction (the MariaDB store); a
backend that cannot must do the directory side first on create and last on drop, and say so
in its docstring (the HBase store).  ``dirs=None`` on a drop
means "keep the data".

Errors are the domain errors of ``hopshive.metastore.exceptions`` (and namespace errors from
directory operations); a backend never raises driver errors to the caller.
"""

from __future__ import annotations

import abc
from typing import Mapping, Sequence

from .api import api
from .indexes import Index
from .warehouse import Directories


class RawStore(abc.ABC):
    @classmethod
    def open(cls, db, config: dict) -> "RawStore":
        """The store for a metastore configuration (a backend with settings of its own
        reads its section; the default needs only the database)."""
        return cls(db)

    def close(self) -> None:
        """Release connections."""

    # ------------------------------------------------------------------ databases
    @abc.abstractmethod
    def create_database(self, db, dirs: Directories) -> None:
        """Create a database and, if missing, its directory ``db.locationUri`` (required).

        Raises:
            AlreadyExists: a database of that name exists.
            InvalidObject: the location cannot be used.
        """

    @abc.abstractmethod
    def get_database(self, name: str):
        """Returns: Database.  Raises: NoSuchObject."""

    @abc.abstractmethod
    def get_database_names(self) -> list[str]:
        """Returns: all database names, sorted."""

    @abc.abstractmethod
    def alter_database(self, name: str, db) -> None:
        """Replace description, parameters, owner (the name and location are kept).
        Raises: NoSuchObject."""

    @abc.abstractmethod
    def drop_database(self, name: str, dirs: Directories | None, cascade: bool) -> None:
        """Drop a database; with ``cascade`` its tables (and their managed directories when
        ``dirs``) and functions; with ``dirs`` the database directory too.

        Raises:
            NoSuchObject: no such database.
            InvalidOperation: not empty and not ``cascade``.
        """

    # --------------------------------------------------------------------- tables
    @abc.abstractmethod
    def create_table(self, table, dirs: Directories, create_dir: bool) -> None:
        """Create a table.  ``table.sd.location`` is set by the service (None for views).
        ``create_dir``: make the directory when missing (managed tables); otherwise it must
        exist unless the location is foreign.

        Raises: NoSuchObject (database), AlreadyExists, InvalidObject.
        """

    @abc.abstractmethod
    def get_table(self, db_name: str, name: str):
        """Returns: Table.  Raises: NoSuchObject."""

    def get_table_with_directory(self, db_name: str, name: str) -> tuple:
        """Returns: (Table, the inodes from the root to its directory, or None).  A store that
        shares the namespace's database reads the chain in the table's own statement, so that
        authorization costs no extra round trip; None (this default) when it cannot, or the
        directory is missing, foreign or deep.  Raises: NoSuchObject."""
        return self.get_table(db_name, name), None

    @abc.abstractmethod
    def get_tables(self, db_name: str, names: Sequence[str]) -> list:
        """Returns: the Tables of ``names`` that exist, in the order given."""

    @abc.abstractmethod
    def get_table_names(self, db_name: str, table_type: str | None = None) -> list[str]:
        """Returns: the database's table names (of one TBL_TYPE when given), sorted.
        Raises: NoSuchObject (database)."""

    @abc.abstractmethod
    def get_table_meta(self) -> list[tuple[str, str, str, str | None]]:
        """Returns: (db, table, table type, comment) of every table."""

    @abc.abstractmethod
    def alter_table(self, db_name: str, name: str, new_table, dirs: Directories, cascade: bool) -> None:
        """Replace a table's definition.  A new name or database renames it; a managed table
        whose location is unchanged by the client then moves to the new default location
        (``new_table.sd.location`` as computed by the service) with its partitions' locations,
        in the same transaction.  ``cascade`` applies column changes to every partition.

        Raises: NoSuchObject, AlreadyExists (new name taken), InvalidOperation (partition keys
        changed, target directory exists), InvalidObject.
        """

    @abc.abstractmethod
    def drop_table(self, db_name: str, name: str, dirs: Directories | None, purge: bool = False) -> None:
        """Drop a table with its partitions and statistics, and its indexes with their index
        tables; with ``dirs`` also its directory, partition directories outside it and the
        index tables' directories (callers pass None for external tables).  Dropping an index
        table drops its index.  Raises: NoSuchObject."""

    # ----------------------------------------------------------------- partitions
    @abc.abstractmethod
    def add_partitions(self, db_name: str, table_name: str, parts: Sequence, dirs: Directories,
                       if_not_exists: bool) -> list:
        """Add partitions, creating missing directories (default location:
        ``<table location>/<partition name>``).  ``createTime`` 0 is set to now.

        Returns: the partitions added (without those skipped by ``if_not_exists``).
        Raises: NoSuchObject (table), AlreadyExists, InvalidObject (values do not match keys).
        """

    @abc.abstractmethod
    def get_partition(self, db_name: str, table_name: str, values: Sequence[str]):
        """Returns: Partition.  Raises: NoSuchObject."""

    @abc.abstractmethod
    def get_partitions(self, db_name: str, table_name: str, max_parts: int = -1,
                       partial_values: Sequence[str] | None = None, names: Sequence[str] | None = None) -> list:
        """Partitions in name order, at most ``max_parts`` (negative: all).  ``partial_values``
        restricts to a prefix spec ('' = any value); ``names`` to those partition names.
        Raises: NoSuchObject (table)."""

    @abc.abstractmethod
    def get_partition_names(self, db_name: str, table_name: str, max_parts: int = -1,
                            partial_values: Sequence[str] | None = None) -> list[str]:
        """As get_partitions, names only."""

    @abc.abstractmethod
    def get_partitions_by_filter(self, db_name: str, table_name: str, filter_text: str,
                                 max_parts: int = -1) -> list:
        """Partitions matching a Hive filter string (``ds > "a" and h < 5``).
        Raises: NoSuchObject, InvalidInput (the filter: message names position and reason)."""

    @abc.abstractmethod
    def count_partitions_by_filter(self, db_name: str, table_name: str, filter_text: str) -> int:
        """Number of partitions matching a filter ('' = all)."""

    @abc.abstractmethod
    def get_partitions_by_value_sets(self, db_name: str, table_name: str,
                                     value_sets: Mapping[str, Sequence[str]], max_parts: int = -1) -> list:
        """Partitions whose key ``k`` has a value in ``value_sets[k]``, for every key given
        (typed keys compare by value: "05" = "5" for an int key).  Map-join pruning uses this.
        Raises: NoSuchObject, InvalidInput (unknown key)."""

    @abc.abstractmethod
    def alter_partitions(self, db_name: str, table_name: str, parts: Sequence, dirs: Directories) -> None:
        """Replace the definitions of partitions (identified by their values); a changed
        location is linked to its directory (created when missing).  A partition that does not
        exist is added: Hive's INSERT OVERWRITE of a partition replaces its directory (which
        cascades the metadata away) and ends with alter_partition.
        Raises: NoSuchObject (table), InvalidOperation."""

    @abc.abstractmethod
    def rename_partition(self, db_name: str, table_name: str, values: Sequence[str], new_part,
                         dirs: Directories) -> None:
        """Give a partition new values; for a managed table its directory moves to the new
        default location in the same transaction.
        Raises: NoSuchObject, AlreadyExists, InvalidOperation."""

    @abc.abstractmethod
    def drop_partitions(self, db_name: str, table_name: str, values_list: Sequence[Sequence[str]],
                        dirs: Directories | None, if_exists: bool = False, purge: bool = False) -> list:
        """Drop partitions (and their directories with ``dirs``, then empty parent directories
        below the table's), and the partitions of the same values of the table's index tables
        that have the same partition keys.  Returns: the dropped Partitions (of the table).
        Raises: NoSuchObject (table, or a partition unless ``if_exists``)."""

    # ------------------------------------------------------------------ functions
    @abc.abstractmethod
    def create_function(self, function) -> None:
        """Raises: NoSuchObject (database), AlreadyExists."""

    @abc.abstractmethod
    def get_function(self, db_name: str, name: str):
        """Returns: Function.  Raises: NoSuchObject."""

    @abc.abstractmethod
    def get_functions(self, db_name: str | None = None) -> list:
        """Returns: the Functions of one database, or of all when None."""

    @abc.abstractmethod
    def alter_function(self, db_name: str, name: str, function) -> None:
        """Raises: NoSuchObject, InvalidOperation."""

    @abc.abstractmethod
    def drop_function(self, db_name: str, name: str) -> None:
        """Raises: NoSuchObject."""

    # ----------------------------------------------------------------- statistics
    @abc.abstractmethod
    def update_column_statistics(self, stats, part_values: Sequence[str] | None = None) -> None:
        """Insert or replace column statistics of a table (``stats.statsDesc.isTblLevel``)
        or of one partition.  Raises: NoSuchObject, InvalidObject (unknown column)."""

    @abc.abstractmethod
    def get_table_column_statistics(self, db_name: str, table_name: str, columns: Sequence[str]) -> list:
        """Returns: ColumnStatisticsObj for the columns that have statistics.
        Raises: NoSuchObject (table)."""

    @abc.abstractmethod
    def get_partition_column_statistics(self, db_name: str, table_name: str, part_names: Sequence[str],
                                        columns: Sequence[str]) -> dict[str, list]:
        """Returns: partition name -> ColumnStatisticsObj list, for partitions with statistics."""

    @abc.abstractmethod
    def delete_column_statistics(self, db_name: str, table_name: str, part_name: str | None,
                                 column: str | None) -> bool:
        """Delete the statistics of one column (None: all) of a table or partition.
        Returns: whether something was deleted.  Raises: NoSuchObject (table/partition)."""

    # -------------------------------------------------------------------- indexes
    @abc.abstractmethod
    def add_index(self, index: Index, index_table: "api.Table | None", dirs: Directories, create_dir: bool) -> None:
        """Create an index (``indexes.prepare_index`` made it: ``index.sd`` has the covered
        columns and no location) and, when given, its index table (type INDEX_TABLE) with
        its directory, as create_table does (``create_dir``).

        Raises:
            NoSuchObject: the base table does not exist.
            AlreadyExists: the base table has an index of that name.
            InvalidObject: the index table's name is taken, or its location cannot be used.
        """

    @abc.abstractmethod
    def get_index(self, db_name: str, table_name: str, index_name: str) -> Index:
        """Returns: the Index (its ``sd`` a Hive 3.1 StorageDescriptor).  Raises: NoSuchObject."""

    @abc.abstractmethod
    def get_indexes(self, db_name: str, table_name: str, max_indexes: int = -1) -> list[Index]:
        """The indexes of a table, by name, at most ``max_indexes`` (negative: all); [] for a
        table that does not exist (as Hive answers)."""

    @abc.abstractmethod
    def alter_index(self, db_name: str, table_name: str, index_name: str, new_index: Index) -> None:
        """Replace an index's parameters (the rest of an index is fixed, as in Hive).
        Raises: NoSuchObject."""

    @abc.abstractmethod
    def drop_index(self, db_name: str, table_name: str, index_name: str, dirs: Directories | None) -> None:
        """Drop an index with its index table (and that table's directories with ``dirs``).
        Raises: NoSuchObject."""

    # ---------------------------------------------------------------------- locks
    @abc.abstractmethod
    def lock(self, request, timeout: float):
        """Take Hive locks (``LockRequest``) all-or-nothing; locks not heartbeated for
        ``timeout`` seconds are expired first.  Returns: LockResponse (ACQUIRED or WAITING)."""

    @abc.abstractmethod
    def check_lock(self, lock_id: int, timeout: float):
        """Retry a WAITING lock.  Returns: LockResponse.  Raises: NoSuchLock."""

    @abc.abstractmethod
    def unlock(self, lock_id: int) -> None:
        """Raises: NoSuchLock."""

    @abc.abstractmethod
    def heartbeat(self, lock_id: int) -> None:
        """Raises: NoSuchLock."""

    @abc.abstractmethod
    def show_locks(self, db_name: str | None = None, table_name: str | None = None) -> list:
        """Returns: ShowLocksResponseElement list."""
