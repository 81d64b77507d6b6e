"""Table calls."""

from __future__ import annotations

from ..api import api
from ...exceptions import AccessDenied
from ..authorization import READ_ACCESS, WRITE_ACCESS
from ..exceptions import MetastoreError, NoSuchObject
from ..indexes import INDEX_TABLE
from ..names import filter_names, matches
from ..policy import env_flag, prepare_altered_table, prepare_table


class TableCalls:
    # ------------------------------------------------------------------ create
    def create_table(self, session, tbl):
        database = self.store.get_database(self.n(tbl.dbName))
        table, create_dir = prepare_table(tbl, database)
        self.authorizer.check_placement(table.sd.location, "table", database.locationUri)
        table.owner = table.owner or self.user(session)
        access = self.authorize(session, (database.locationUri, WRITE_ACCESS))
        self.store.create_table(table, self.dirs(session, access), create_dir)

    def create_table_with_environment_context(self, session, tbl, environment_context):
        self.create_table(session, tbl)

    # ------------------------------------------------------------------- reads
    def get_table(self, session, dbname, tbl_name):
        return self.readable_table(session, dbname, tbl_name)

    def get_table_req(self, session, req):
        return api.GetTableResult(table=self.get_table(session, req.dbName, req.tblName))

    def get_table_objects_by_name(self, session, dbname, tbl_names):
        """Only the tables the caller may read (the others are left out, not refused)."""
        tables = self.store.get_tables(self.n(dbname), [self.n(t) for t in tbl_names or []])
        access = self.access(session)
        readable = []
        for table in tables:
            try:
                access.require(self.table_dir(table), READ_ACCESS)
            except AccessDenied:
                continue
            readable.append(table)
        return readable

    def get_table_objects_by_name_req(self, session, req):
        return api.GetTablesResult(tables=self.get_table_objects_by_name(session, req.dbName, req.tblNames or []))

    def _names(self, session, db_name, table_type=None):
        """A database's table names: listing a database is reading it (read access to its
        directory, or Hive's permission error)."""
        try:
            database = self.store.get_database(self.n(db_name))
        except NoSuchObject:
            return []
        self.authorize(session, (database.locationUri, READ_ACCESS))
        try:
            return self.store.get_table_names(database.name, table_type)
        except NoSuchObject:
            return []

    def get_tables(self, session, db_name, pattern):
        return filter_names(pattern, self._names(session, db_name))

    def get_tables_by_type(self, session, db_name, pattern, tableType):
        return filter_names(pattern, self._names(session, db_name, tableType))

    def get_all_tables(self, session, db_name):
        return self._names(session, db_name)

    def get_table_meta(self, session, db_patterns, tbl_patterns, tbl_types):
        """Names, types and comments of every database's tables: a catalog listing, not
        protected (like database names)."""
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
        old, access = self.writable_table(session, db_name, name)
        new_location = table.sd.location if table.sd else None
        if (table.dbName, table.tableName) != (db_name, name):
            target = self.store.get_database(table.dbName)
            self.authorizer.check_placement(new_location, "table", target.locationUri)
            access.require(target.locationUri, WRITE_ACCESS)
        elif new_location and new_location != (old.sd.location if old.sd else None):
            self.authorizer.check_placement(new_location, "table", self.store.get_database(db_name).locationUri)
        self.store.alter_table(db_name, name, table, self.dirs(session, access), bool(cascade))

    def alter_table_with_environment_context(self, session, dbname, tbl_name, new_tbl, environment_context):
        self.alter_table(session, dbname, tbl_name, new_tbl, env_flag(environment_context, "CASCADE"))

    def alter_table_with_cascade(self, session, dbname, tbl_name, new_tbl, cascade):
        self.alter_table(session, dbname, tbl_name, new_tbl, cascade)

    # -------------------------------------------------------------------- drop
    def drop_table(self, session, dbname, name, deleteData, environment_context=None):
        table = self.store.get_table(self.n(dbname), self.n(name))
        if table.tableType == INDEX_TABLE:      # Hive's words (HMSHandler.drop_table_core)
            raise MetastoreError(f"The table {table.tableName} is an index table. Please do drop index instead.")
        database = self.store.get_database(table.dbName)
        access = self.authorize(session, (database.locationUri, WRITE_ACCESS), (self.table_dir(table), WRITE_ACCESS))
        self.store.drop_table(table.dbName, table.tableName, self.dirs(session, access) if deleteData else None,
                              env_flag(environment_context, "ifPurge"))

    def drop_table_with_environment_context(self, session, dbname, name, deleteData, environment_context):
        self.drop_table(session, dbname, name, deleteData, environment_context)
