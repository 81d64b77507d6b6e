"""Index calls (Hive 2's IDL: ``hmsclient``'s bindings; Hive 3 removed indexes).

Storage-based authorization: creating, altering and dropping an index change its base
table (write on the base table's directory); creating an index table is creating a table
(write on the database's directory) and dropping one with its data needs write on its
directory, as DROP TABLE does; reading indexes is reading the base table."""

from __future__ import annotations

from hmsclient.genthrift.hive_metastore import ttypes as hive2

from ..authorization import WRITE_ACCESS
from ..exceptions import InvalidObject, NoSuchObject
from ..indexes import altered_index, prepare_index, to_wire
from .base import Session


class IndexCalls:
    def add_index(self, session: Session, new_index: hive2.Index, index_table: hive2.Table | None) -> hive2.Index:
        if new_index is None:
            raise InvalidObject("add_index needs an index")
        try:
            base, access = self.writable_table(session, new_index.dbName, new_index.origTableName)
        except NoSuchObject as exc:
            raise InvalidObject("Unable to add index because database or the original table do not exist") from exc
        database = self.store.get_database(base.dbName)
        index, table, create_dir = prepare_index(new_index, index_table, base, database)
        if table is not None:
            self.authorizer.check_placement(table.sd.location, "table", database.locationUri)
            access.require(database.locationUri, WRITE_ACCESS)
        self.store.add_index(index, table, self.dirs(session, access), create_dir)
        return to_wire(self.store.get_index(index.dbName, index.origTableName, index.indexName))

    def alter_index(self, session: Session, dbname: str, base_tbl_name: str, idx_name: str,
                    new_idx: hive2.Index) -> None:
        base, _ = self.writable_table(session, dbname, base_tbl_name)
        old = self.store.get_index(base.dbName, base.tableName, self.n(idx_name))
        self.store.alter_index(base.dbName, base.tableName, old.indexName, altered_index(old, new_idx))

    def drop_index_by_name(self, session: Session, db_name: str, tbl_name: str, index_name: str,
                           deleteData: bool) -> bool:
        base, access = self.writable_table(session, db_name, tbl_name)
        index = self.store.get_index(base.dbName, base.tableName, self.n(index_name))
        if deleteData and index.indexTableName:
            try:
                index_table = self.store.get_table(base.dbName, index.indexTableName)
            except NoSuchObject:
                index_table = None
            if index_table is not None:
                access.require(self.table_dir(index_table), WRITE_ACCESS)
        self.store.drop_index(base.dbName, base.tableName, index.indexName,
                              self.dirs(session, access) if deleteData else None)
        return True

    def get_index_by_name(self, session: Session, db_name: str, tbl_name: str, index_name: str) -> hive2.Index:
        base = self.readable_table(session, db_name, tbl_name)
        return to_wire(self.store.get_index(base.dbName, base.tableName, self.n(index_name)))

    def _readable_indexes(self, session: Session, db_name: str, tbl_name: str, max_indexes: int) -> list:
        """A table that does not exist has no indexes (Hive answers [] too)."""
        try:
            base = self.readable_table(session, db_name, tbl_name)
        except NoSuchObject:
            return []
        return self.store.get_indexes(base.dbName, base.tableName, max_indexes if max_indexes is not None else -1)

    def get_indexes(self, session: Session, db_name: str, tbl_name: str, max_indexes: int) -> list[hive2.Index]:
        return [to_wire(i) for i in self._readable_indexes(session, db_name, tbl_name, max_indexes)]

    def get_index_names(self, session: Session, db_name: str, tbl_name: str, max_indexes: int) -> list[str]:
        return [i.indexName for i in self._readable_indexes(session, db_name, tbl_name, max_indexes)]
