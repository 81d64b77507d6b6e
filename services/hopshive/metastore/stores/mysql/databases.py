"""Databases (DBS, DATABASE_PARAMS) and their descriptor: a database's directory is linked
through an SD of its own (thesis 3.1.2.1), so deleting the directory deletes the database."""

from __future__ import annotations

from ...api import CATALOG, api
from ...exceptions import AlreadyExists, InvalidOperation, NoSuchObject
from .sds import delete_sds, insert_location_sd, insert_params, load_params, replace_params

PRINCIPAL_TYPES = {1: "USER", 2: "ROLE", 3: "GROUP"}
PRINCIPAL_CODES = {name: code for code, name in PRINCIPAL_TYPES.items()}


def principal_name(code: int | None) -> str | None:
    return PRINCIPAL_TYPES.get(code) if code is not None else None


def principal_code(name: str | None) -> int | None:
    return PRINCIPAL_CODES.get(name) if name else None


class DatabaseOps:
    def create_database(self, db, dirs) -> None:
        def work(tx):
            if tx.query_one("SELECT 1 FROM metastore.DBS WHERE NAME=%s", (db.name,)):
                raise AlreadyExists(f"Database {db.name} already exists")
            key = dirs.link(tx, db.locationUri, create=True, foreign_ok=True)
            sd_id = insert_location_sd(tx, db.locationUri, key)
            tx.execute("INSERT INTO metastore.DBS (`DESC`, DB_LOCATION_URI, NAME, OWNER_NAME, OWNER_TYPE, SD_ID)"
                       " VALUES (%s, %s, %s, %s, %s, %s)",
                       (db.description, db.locationUri, db.name, db.ownerName, principal_name(db.ownerType), sd_id))
            insert_params(tx, "DATABASE_PARAMS", "DB_ID", tx.lastrowid, db.parameters)
        self._write(work, duplicate=f"Database {db.name} already exists")

    def _database_row(self, tx, name: str, lock: str = ""):
        row = tx.query_one("SELECT DB_ID, `DESC`, DB_LOCATION_URI, NAME, OWNER_NAME, OWNER_TYPE, SD_ID"
                           f" FROM metastore.DBS WHERE NAME=%s{lock}", (name,))
        if row is None:
            raise NoSuchObject(f"Database {name} does not exist" if name else "database name is empty")
        return row

    def get_database(self, name: str):
        def work(tx):
            db_id, desc, location, db_name, owner, owner_type, _ = self._database_row(tx, name)
            params = load_params(tx, "DATABASE_PARAMS", "DB_ID", [db_id]).get(db_id, {})
            return api.Database(name=db_name, description=desc, locationUri=location, parameters=params,
                                ownerName=owner, ownerType=principal_code(owner_type), catalogName=CATALOG)
        return self._read(work)

    def get_database_names(self) -> list[str]:
        return self._read(lambda tx: sorted(r[0] for r in tx.query("SELECT NAME FROM metastore.DBS")))

    def alter_database(self, name: str, db) -> None:
        def work(tx):
            db_id = self._database_row(tx, name, " FOR UPDATE")[0]
            tx.execute("UPDATE metastore.DBS SET `DESC`=%s, OWNER_NAME=%s, OWNER_TYPE=%s WHERE DB_ID=%s",
                       (db.description, db.ownerName, principal_name(db.ownerType), db_id))
            if db.parameters is not None:
                replace_params(tx, "DATABASE_PARAMS", "DB_ID", db_id, db.parameters)
        self._write(work)

    def drop_database(self, name: str, dirs, cascade: bool) -> None:
        def work(tx):
            db_id, _, location, _, owner, _, sd_id = self._database_row(tx, name, " FOR UPDATE")
            tables = tx.query("SELECT TBL_NAME, TBL_TYPE FROM metastore.TBLS WHERE DB_ID=%s ORDER BY TBL_ID", (db_id,))
            if tables and not cascade:
                raise InvalidOperation(f"Database {name} is not empty. One or more tables exist.")
            if not cascade and tx.query_one("SELECT 1 FROM metastore.FUNCS WHERE DB_ID=%s LIMIT 1", (db_id,)):
                raise InvalidOperation(f"Database {name} is not empty. One or more functions exist.")
            for table_name, kind in sorted(tables, key=lambda t: t[1] == "INDEX_TABLE"):
                # an index table went with its base table; one left by its index goes here
                if kind != "INDEX_TABLE" or tx.query_one(
                        "SELECT 1 FROM metastore.TBLS WHERE DB_ID=%s AND TBL_NAME=%s", (db_id, table_name)):
                    self._drop_table_tx(tx, name, table_name, dirs, False)
            delete_sds(tx, [sd_id])   # cascades to DBS, DATABASE_PARAMS, FUNCS, DB_PRIVS
            if dirs is not None:
                dirs.delete(tx, location, owner)
        self._write(work)
