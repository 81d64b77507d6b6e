"""Table calls."""

from __future__ import annotations

from ..api import api
from ..exceptions import NoSuchObject
from ..names import filter_names, matches
from ..policy import env_flag, prepare_altered_table, prepare_table


class TableCalls:
    # ------------------------------------------------------------------ create
    def create_table(self, session, tbl):
        table, create_dir = prepare_table(tbl, self.store.get_database(self.n(tbl.dbName)))
        table.owner = table.owner or session.user
        self.store.create_table(table, self.dirs(session), create_dir)

    def create_table_with_environment_context(self, session, tbl, environment_context):
        self.create_table(session, tbl)

    # ------------------------------------------------------------------- reads
    def get_table(self, session, dbname, tbl_name):
        return self.store.get_table(self.n(dbname), self.n(tbl_name))

    def get_table_req(self, session, req):
        return api.GetTableResult(table=self.get_table(session, req.dbName, req.tblName))

    def get_table_objects_by_name(self, session, dbname, tbl_names):
        return self.store.get_tables(self.n(dbname), [self.n(t) for t in tbl_names or []])

    def get_table_objects_by_name_req(self, session, req):
        return api.GetTablesResult(tables=self.get_table_objects_by_name(session, req.dbName, req.tblNames or []))

    def _names(self, db_name, table_type=None):
        try:
            return self.store.get_table_names(self.n(db_name), table_type)
        except NoSuchObject:
            return []

    def get_tables(self, session, db_name, pattern):
        return filter_names(pattern, self._names(db_name))

    def get_tables_by_type(self, session, db_name, pattern, tableType):
        return filter_names(pattern, self._names(db_name, tableType))

    def get_all_tables(self, session, db_name):
        return self._names(db_name)

    def get_table_meta(self, session, db_patterns, tbl_patterns, tbl_types):
        return [api.TableMeta(dbName=db, tableName=name, tableType=kind, comments=comment, catName="hive")
                for db, name, kind, comment in self.store.get_table_meta()
                if matches(db_patterns, db) and matches(tbl_patterns, name) and (not tbl_types or kind in tbl_types)]

    def get_fields(self, session, db_name, table_name):
        table = self.get_table(session, db_name, table_name)
        return list(table.sd.cols or [])

    def get_fields_with_environment_context(self, session, db_name, table_name, environment_context):
        return self.get_fields(session, db_name, table_name)

    def get_schema(self, session, db_name, table_name):
        table = self.get_table(session, db_name, table_name)
        return list(table.sd.cols or []) + list(table.partitionKeys or [])

    def get_schema_with_environment_context(self, session, db_name, table_name, environment_context):
        return self.get_schema(session, db_name, table_name)

    # ------------------------------------------------------------------- alter
    def alter_table(self, session, dbname, tbl_name, new_tbl, cascade=False):
        db_name, name = self.n(dbname), self.n(tbl_name)
        table = prepare_altered_table(new_tbl, db_name, name)
        self.store.alter_table(db_name, name, table, self.dirs(session), bool(cascade))

    def alter_table_with_environment_context(self, session, dbname, tbl_name, new_tbl, environment_context):
        self.alter_table(session, dbname, tbl_name, new_tbl, env_flag(environment_context, "CASCADE"))

    def alter_table_with_cascade(self, session, dbname, tbl_name, new_tbl, cascade):
        self.alter_table(session, dbname, tbl_name, new_tbl, cascade)

    # -------------------------------------------------------------------- drop
    def drop_table(self, session, dbname, name, deleteData, environment_context=None):
        self.store.drop_table(self.n(dbname), self.n(name), self.dirs(session) if deleteData else None,
                              env_flag(environment_context, "ifPurge"))

    def drop_table_with_environment_context(self, session, dbname, name, deleteData, environment_context):
        self.drop_table(session, dbname, name, deleteData, environment_context)
