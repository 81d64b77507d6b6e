"""Database calls."""

from __future__ import annotations

from ..exceptions import InvalidOperation
from ..names import filter_names
from ..policy import prepare_database


class DatabaseCalls:
    def create_database(self, session, database):
        db = prepare_database(database, self.locations)
        db.ownerName = db.ownerName or session.user
        self.store.create_database(db, self.dirs(session))

    def get_database(self, session, name):
        return self.store.get_database(self.n(name))

    def get_databases(self, session, pattern):
        return filter_names(pattern, self.store.get_database_names())

    def get_all_databases(self, session):
        return self.store.get_database_names()

    def alter_database(self, session, dbname, db):
        self.store.alter_database(self.n(dbname), db)

    def drop_database(self, session, name, deleteData, cascade):
        name = self.n(name)
        if name == "default":
            raise InvalidOperation("Can not drop default database")
        self.store.drop_database(name, self.dirs(session) if deleteData else None, bool(cascade))
