"""Database calls."""

from __future__ import annotations

from ..authorization import READ_ACCESS, WRITE_ACCESS
from ..exceptions import InvalidOperation
from ..names import filter_names
from ..policy import prepare_database


class DatabaseCalls:
    def create_database(self, session, database):
        db = prepare_database(database, self.locations)
        if db.name != "default":
            self.authorizer.check_placement(db.locationUri, "database")
        db.ownerName = db.ownerName or self.user(session)
        access = self.authorize(session, (self.locations.parent(db.locationUri), WRITE_ACCESS))
        self.store.create_database(db, self.dirs(session, access))

    def get_database(self, session, name):
        db = self.store.get_database(self.n(name))
        self.authorize(session, (db.locationUri, READ_ACCESS))
        return db

    # Database names are not protected (as with Hive's storage-based authorization): users
    # find the databases shared with them this way; their contents need read access.
    def get_databases(self, session, pattern):
        return filter_names(pattern, self.store.get_database_names())

    def get_all_databases(self, session):
        return self.store.get_database_names()

    def alter_database(self, session, dbname, db):
        current = self.store.get_database(self.n(dbname))
        self.authorize(session, (current.locationUri, WRITE_ACCESS))
        self.store.alter_database(self.n(dbname), db)

    def drop_database(self, session, name, deleteData, cascade):
        name = self.n(name)
        if name == "default":
            raise InvalidOperation("Can not drop default database")
        db = self.store.get_database(name)
        checks = [(self.locations.parent(db.locationUri), WRITE_ACCESS), (db.locationUri, WRITE_ACCESS)]
        if cascade:
            tables = self.store.get_tables(name, self.store.get_table_names(name))
            checks += [(t.sd.location, WRITE_ACCESS) for t in tables if t.sd and t.sd.location]
        access = self.authorize(session, *checks)
        self.store.drop_database(name, self.dirs(session, access) if deleteData else None, bool(cascade))
