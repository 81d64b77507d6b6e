"""Permanent functions (FUNCS, FUNC_RU); they go with their database (foreign key)."""

from __future__ import annotations

from collections import defaultdict

from ...api import CATALOG, api
from ...exceptions import AlreadyExists, NoSuchObject
from .databases import principal_code, principal_name
from .sql import now, query_in

_FUNCS = ("SELECT f.FUNC_ID, f.FUNC_NAME, d.NAME, f.CLASS_NAME, f.OWNER_NAME, f.OWNER_TYPE, f.CREATE_TIME,"
          " f.FUNC_TYPE FROM metastore.FUNCS f JOIN metastore.DBS d ON d.DB_ID=f.DB_ID")


class FunctionOps:
    def create_function(self, function) -> None:
        def work(tx):
            db_id = self._database_row(tx, function.dbName, " LOCK IN SHARE MODE")[0]
            if tx.query_one("SELECT 1 FROM metastore.FUNCS WHERE DB_ID=%s AND FUNC_NAME=%s",
                            (db_id, function.functionName)):
                raise AlreadyExists(f"Function {function.dbName}.{function.functionName} already exists")
            self._insert_function(tx, db_id, function)
        self._write(work, duplicate=f"Function {function.dbName}.{function.functionName} already exists")

    @staticmethod
    def _insert_function(tx, db_id: int, function) -> None:
        tx.execute("INSERT INTO metastore.FUNCS (CLASS_NAME, CREATE_TIME, DB_ID, FUNC_NAME, FUNC_TYPE, OWNER_NAME,"
                   " OWNER_TYPE) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                   (function.className, function.createTime or now(), db_id, function.functionName,
                    function.functionType or 1, function.ownerName, principal_name(function.ownerType)))
        func_id = tx.lastrowid
        tx.executemany("INSERT INTO metastore.FUNC_RU (FUNC_ID, RESOURCE_TYPE, RESOURCE_URI, INTEGER_IDX)"
                       " VALUES (%s, %s, %s, %s)",
                       [(func_id, r.resourceType, r.uri, i) for i, r in enumerate(function.resourceUris or [])])

    @staticmethod
    def _load_functions(tx, rows) -> list:
        resources: dict[int, list] = defaultdict(list)
        for func_id, kind, uri in query_in(tx, "SELECT FUNC_ID, RESOURCE_TYPE, RESOURCE_URI FROM metastore.FUNC_RU"
                                               " WHERE FUNC_ID IN ({}) ORDER BY FUNC_ID, INTEGER_IDX", [r[0] for r in rows]):
            resources[func_id].append(api.ResourceUri(kind, uri))
        return [api.Function(functionName=name, dbName=db, className=cls, ownerName=owner,
                             ownerType=principal_code(owner_type), createTime=created, functionType=kind,
                             resourceUris=resources.get(func_id, []), catName=CATALOG)
                for func_id, name, db, cls, owner, owner_type, created, kind in rows]

    def get_function(self, db_name: str, name: str):
        def work(tx):
            rows = tx.query(_FUNCS + " WHERE d.NAME=%s AND f.FUNC_NAME=%s", (db_name, name))
            if not rows:
                raise NoSuchObject(f"Function {db_name}.{name} does not exist")
            return self._load_functions(tx, rows)[0]
        return self._read(work)

    def get_functions(self, db_name: str | None = None) -> list:
        def work(tx):
            if db_name is None:
                rows = tx.query(_FUNCS + " ORDER BY d.NAME, f.FUNC_NAME")
            else:
                rows = tx.query(_FUNCS + " WHERE d.NAME=%s ORDER BY f.FUNC_NAME", (db_name,))
            return self._load_functions(tx, rows)
        return self._read(work)

    def alter_function(self, db_name: str, name: str, function) -> None:
        def work(tx):
            row = tx.query_one("SELECT f.FUNC_ID, f.DB_ID FROM metastore.FUNCS f JOIN metastore.DBS d"
                               " ON d.DB_ID=f.DB_ID WHERE d.NAME=%s AND f.FUNC_NAME=%s FOR UPDATE", (db_name, name))
            if row is None:
                raise NoSuchObject(f"Function {db_name}.{name} does not exist")
            target_db = self._database_row(tx, function.dbName or db_name)[0]
            tx.execute("DELETE FROM metastore.FUNCS WHERE FUNC_ID=%s", (row[0],))
            self._insert_function(tx, target_db, function)
        self._write(work, duplicate=f"Function {function.dbName}.{function.functionName} already exists")

    def drop_function(self, db_name: str, name: str) -> None:
        def work(tx):
            row = tx.query_one("SELECT f.FUNC_ID FROM metastore.FUNCS f JOIN metastore.DBS d ON d.DB_ID=f.DB_ID"
                               " WHERE d.NAME=%s AND f.FUNC_NAME=%s FOR UPDATE", (db_name, name))
            if row is None:
                raise NoSuchObject(f"Function {db_name}.{name} does not exist")
            tx.execute("DELETE FROM metastore.FUNCS WHERE FUNC_ID=%s", (row[0],))
        self._write(work)
