"""Tables: TBLS with parameters, partition keys and descriptor; create, read, alter
(including RENAME, which moves a managed table's directory in the same transaction) and drop."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ....namespace.inodes import chain_from_row, chain_sql
from ...api import CATALOG, api
from ...exceptions import AlreadyExists, InvalidOperation, NoSuchObject
from ...locations import Locations, replace_prefix
from .sds import (delete_sds, delete_unused_cds, insert_columns, insert_params, insert_sd, load_params, load_sds,
                  replace_params, same_columns, update_sd)
from .sql import bit, marks, query_in

MANAGED_TYPES = ("MANAGED_TABLE", "INDEX_TABLE", "MATERIALIZED_VIEW")
_TABLE_COLUMNS = ("t.TBL_ID, t.DB_ID, t.SD_ID, t.TBL_TYPE, t.CREATE_TIME, t.LAST_ACCESS_TIME, t.OWNER, t.RETENTION,"
                  " t.TBL_NAME, t.VIEW_EXPANDED_TEXT, t.VIEW_ORIGINAL_TEXT, t.IS_REWRITE_ENABLED, d.NAME")
_TABLE_FROM = " FROM metastore.TBLS t JOIN metastore.DBS d ON d.DB_ID = t.DB_ID"
_TABLE = "SELECT " + _TABLE_COLUMNS + _TABLE_FROM
_CHAIN_COLUMNS, _CHAIN_JOINS = chain_sql(("ts.PARTITION_ID", "ts.PARENT_ID", "ts.NAME"))
# The table with its directory's inode chain (see RawStore.get_table_with_directory).
_TABLE_WITH_DIRECTORY = ("SELECT " + _TABLE_COLUMNS + ", " + _CHAIN_COLUMNS + _TABLE_FROM
                         + " LEFT JOIN metastore.SDS ts ON ts.SD_ID = t.SD_ID" + _CHAIN_JOINS)
_TABLE_WIDTH = _TABLE_COLUMNS.count(",") + 1


def is_managed(table_type: str | None) -> bool:
    return (table_type or "MANAGED_TABLE") in MANAGED_TYPES


@dataclass(frozen=True)
class TableRow:
    tbl_id: int
    db_id: int
    sd_id: int | None
    table_type: str | None
    owner: str | None
    db_name: str
    name: str


class TableOps:
    # ------------------------------------------------------------------ helpers
    def _table_row(self, tx, db_name: str, name: str, lock: str = "") -> TableRow:
        row = tx.query_one("SELECT t.TBL_ID, t.DB_ID, t.SD_ID, t.TBL_TYPE, t.OWNER FROM metastore.TBLS t"
                           " JOIN metastore.DBS d ON d.DB_ID = t.DB_ID WHERE d.NAME=%s AND t.TBL_NAME=%s" + lock,
                           (db_name, name))
        if row is None:
            raise NoSuchObject(f"Table {db_name}.{name} does not exist")
        return TableRow(*row, db_name, name)

    def _partition_keys(self, tx, tbl_ids: Sequence[int]) -> dict[int, list]:
        keys: dict[int, list] = {i: [] for i in tbl_ids}
        for tbl_id, name, type_name, comment in query_in(
                tx, "SELECT TBL_ID, PKEY_NAME, PKEY_TYPE, PKEY_COMMENT FROM metastore.PARTITION_KEYS"
                    " WHERE TBL_ID IN ({}) ORDER BY TBL_ID, INTEGER_IDX", tbl_ids):
            keys[tbl_id].append(api.FieldSchema(name, type_name, comment))
        return keys

    def _load_tables(self, tx, rows: list[tuple]) -> list:
        if not rows:
            return []
        tbl_ids = [r[0] for r in rows]
        sds = load_sds(tx, [r[2] for r in rows if r[2] is not None])
        params = load_params(tx, "TABLE_PARAMS", "TBL_ID", tbl_ids)
        keys = self._partition_keys(tx, tbl_ids)
        tables = []
        for (tbl_id, _, sd_id, table_type, create_time, last_access, owner, retention, name, expanded, original,
             rewrite, db_name) in rows:
            tables.append(api.Table(
                tableName=name, dbName=db_name, owner=owner, createTime=create_time, lastAccessTime=last_access,
                retention=retention, sd=sds.get(sd_id), partitionKeys=keys[tbl_id],
                parameters=params.get(tbl_id, {}), viewOriginalText=original, viewExpandedText=expanded,
                tableType=table_type, temporary=False, rewriteEnabled=bit(rewrite), catName=CATALOG))
        return tables

    # ------------------------------------------------------------------- create
    def create_table(self, table, dirs, create_dir: bool) -> None:
        self._write(lambda tx: self._create_table_tx(tx, table, dirs, create_dir),
                    duplicate=f"Table {table.dbName}.{table.tableName} already exists")

    def _create_table_tx(self, tx, table, dirs, create_dir: bool) -> int:
        """Create a table (and its directory) in ``tx``; returns its TBL_ID."""
        db_row = tx.query_one("SELECT DB_ID FROM metastore.DBS WHERE NAME=%s LOCK IN SHARE MODE", (table.dbName,))
        if db_row is None:
            raise NoSuchObject(f"Database {table.dbName} does not exist")
        if tx.query_one("SELECT 1 FROM metastore.TBLS WHERE DB_ID=%s AND TBL_NAME=%s", (db_row[0], table.tableName)):
            raise AlreadyExists(f"Table {table.dbName}.{table.tableName} already exists")
        location = table.sd.location if table.sd else None
        key = dirs.link(tx, location, create=create_dir, foreign_ok=not create_dir)
        sd_id = insert_sd(tx, table.sd, key)
        return self._insert_table(tx, db_row[0], sd_id, table)

    def _insert_table(self, tx, db_id: int, sd_id: int, table) -> int:
        tx.execute("INSERT INTO metastore.TBLS (CREATE_TIME, DB_ID, LAST_ACCESS_TIME, OWNER, RETENTION, SD_ID,"
                   " TBL_NAME, TBL_TYPE, VIEW_EXPANDED_TEXT, VIEW_ORIGINAL_TEXT, IS_REWRITE_ENABLED)"
                   " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                   (table.createTime, db_id, table.lastAccessTime or 0, table.owner, table.retention or 0, sd_id,
                    table.tableName, table.tableType, table.viewExpandedText, table.viewOriginalText,
                    bool(table.rewriteEnabled)))
        tbl_id = tx.lastrowid
        insert_params(tx, "TABLE_PARAMS", "TBL_ID", tbl_id, table.parameters)
        tx.executemany("INSERT INTO metastore.PARTITION_KEYS (TBL_ID, PKEY_COMMENT, PKEY_NAME, PKEY_TYPE, INTEGER_IDX)"
                       " VALUES (%s, %s, %s, %s, %s)",
                       [(tbl_id, k.comment, k.name.lower(), k.type, i) for i, k in enumerate(table.partitionKeys or [])])
        return tbl_id

    # -------------------------------------------------------------------- reads
    def get_table(self, db_name: str, name: str):
        def work(tx):
            rows = tx.query(_TABLE + " WHERE d.NAME=%s AND t.TBL_NAME=%s", (db_name, name))
            if not rows:
                raise NoSuchObject(f"Table {db_name}.{name} does not exist")
            return self._load_tables(tx, rows)[0]
        return self._read(work)

    def get_table_with_directory(self, db_name: str, name: str):
        def work(tx):
            rows = tx.query(_TABLE_WITH_DIRECTORY + " WHERE d.NAME=%s AND t.TBL_NAME=%s", (db_name, name))
            if not rows:
                raise NoSuchObject(f"Table {db_name}.{name} does not exist")
            return self._load_tables(tx, [rows[0][:_TABLE_WIDTH]])[0], chain_from_row(rows[0][_TABLE_WIDTH:])
        return self._read(work)

    def get_tables(self, db_name: str, names: Sequence[str]) -> list:
        def work(tx):
            rows = []
            for start in range(0, len(names), 500):
                chunk = list(names[start:start + 500])
                rows += tx.query(_TABLE + f" WHERE d.NAME=%s AND t.TBL_NAME IN ({marks(len(chunk))})", (db_name, *chunk))
            by_name = {t.tableName: t for t in self._load_tables(tx, rows)}
            return [by_name[n] for n in dict.fromkeys(names) if n in by_name]
        return self._read(work) if names else []

    def get_table_names(self, db_name: str, table_type: str | None = None) -> list[str]:
        def work(tx):
            self._database_row(tx, db_name)
            sql = ("SELECT t.TBL_NAME FROM metastore.TBLS t JOIN metastore.DBS d ON d.DB_ID=t.DB_ID"
                   " WHERE d.NAME=%s" + (" AND t.TBL_TYPE=%s" if table_type else ""))
            return sorted(r[0] for r in tx.query(sql, (db_name, table_type) if table_type else (db_name,)))
        return self._read(work)

    def get_table_meta(self) -> list[tuple]:
        return self._read(lambda tx: tx.query(
            "SELECT d.NAME, t.TBL_NAME, t.TBL_TYPE, p.PARAM_VALUE FROM metastore.TBLS t"
            " JOIN metastore.DBS d ON d.DB_ID=t.DB_ID LEFT JOIN metastore.TABLE_PARAMS p"
            " ON p.TBL_ID=t.TBL_ID AND p.PARAM_KEY='comment' ORDER BY d.NAME, t.TBL_NAME"))

    # -------------------------------------------------------------------- alter
    def alter_table(self, db_name: str, name: str, new_table, dirs, cascade: bool) -> None:
        new_db, new_name = new_table.dbName, new_table.tableName

        def work(tx):
            row = self._table_row(tx, db_name, name, " FOR UPDATE")
            old = self._load_tables(tx, tx.query(_TABLE + " WHERE t.TBL_ID=%s", (row.tbl_id,)))[0]
            old_keys = [(k.name.lower(), k.type) for k in old.partitionKeys or []]
            if old_keys != [(k.name.lower(), k.type) for k in new_table.partitionKeys or []]:
                raise InvalidOperation("partition keys can not be changed.")
            db_id = row.db_id
            renamed = (new_db, new_name) != (db_name, name)
            if renamed:
                target_db = self._database_row(tx, new_db, " LOCK IN SHARE MODE")
                db_id = target_db[0]
                if tx.query_one("SELECT 1 FROM metastore.TBLS WHERE DB_ID=%s AND TBL_NAME=%s", (db_id, new_name)):
                    raise AlreadyExists(f"new table {new_db}.{new_name} already exists")
            old_location = old.sd.location if old.sd else None
            new_sd = new_table.sd or api.StorageDescriptor()
            if not new_sd.location and old.tableType != "VIRTUAL_VIEW":
                new_sd.location = old_location   # Spark omits it for some datasource tables
            managed = is_managed(new_table.tableType)
            moved = False
            if renamed and managed and old_location and new_sd.location in (None, "", old_location):
                new_sd.location = Locations.child(target_db[2], new_name)
                moved = dirs.rename(tx, old_location, new_sd.location,
                                    self._repoint_table(row, old_location, new_sd.location))
                if not moved:
                    new_sd.location = old_location
            if moved:
                key = tx.query_one("SELECT PARTITION_ID, PARENT_ID, NAME FROM metastore.SDS WHERE SD_ID=%s",
                                   (row.sd_id,))
                key = key if key[0] is not None else None
            elif new_sd.location == old_location:
                key = self._sd_key(tx, row.sd_id)
            else:
                key = dirs.link(tx, new_sd.location, create=managed, foreign_ok=not managed)
            self._update_table(tx, row, db_id, new_table, new_sd, key, old, cascade)
            if renamed:
                tx.execute("UPDATE metastore.TAB_COL_STATS SET DB_NAME=%s, TABLE_NAME=%s WHERE TBL_ID=%s",
                           (new_db, new_name, row.tbl_id))
                tx.execute("UPDATE metastore.PART_COL_STATS s JOIN metastore.PARTITIONS p ON p.PART_ID=s.PART_ID"
                           " SET s.DB_NAME=%s, s.TABLE_NAME=%s WHERE p.TBL_ID=%s", (new_db, new_name, row.tbl_id))
        self._write(work, duplicate=f"new table {new_db}.{new_name} already exists")

    @staticmethod
    def _sd_key(tx, sd_id: int):
        key = tx.query_one("SELECT PARTITION_ID, PARENT_ID, NAME FROM metastore.SDS WHERE SD_ID=%s", (sd_id,))
        return key if key and key[0] is not None else None

    @staticmethod
    def _repoint_table(row: TableRow, old_location: str, new_location: str):
        """The rename callback: the table's SDs follow the directory's new inode key, and the
        locations of everything below it get the new prefix (their inodes keep their keys)."""
        def repoint(tx, old_key, new_key):
            tx.execute("UPDATE metastore.SDS s LEFT JOIN metastore.PARTITIONS p ON p.SD_ID=s.SD_ID"
                       " SET s.PARTITION_ID=%s, s.PARENT_ID=%s, s.NAME=%s"
                       " WHERE (s.SD_ID=%s OR p.TBL_ID=%s) AND s.PARTITION_ID=%s AND s.PARENT_ID=%s AND s.NAME=%s",
                       (*new_key, row.sd_id, row.tbl_id, *old_key))
            tx.execute("UPDATE metastore.SDS SET LOCATION=%s WHERE SD_ID=%s", (new_location, row.sd_id))
            old_prefix = old_location.rstrip("/") + "/"
            tx.execute("UPDATE metastore.SDS s JOIN metastore.PARTITIONS p ON p.SD_ID=s.SD_ID"
                       " SET s.LOCATION = CONCAT(%s, SUBSTRING(s.LOCATION, %s))"
                       " WHERE p.TBL_ID=%s AND LEFT(s.LOCATION, %s) = %s",
                       (new_location.rstrip("/") + "/", len(old_prefix) + 1, row.tbl_id, len(old_prefix), old_prefix))
        return repoint

    def _update_table(self, tx, row: TableRow, db_id: int, new, new_sd, key, old, cascade: bool) -> None:
        old_cd = tx.query_one("SELECT CD_ID FROM metastore.SDS WHERE SD_ID=%s", (row.sd_id,))[0]
        cd_id = old_cd
        if not same_columns(old.sd.cols if old.sd else None, new_sd.cols):
            cd_id = insert_columns(tx, new_sd.cols)
            if cascade:
                tx.execute("UPDATE metastore.SDS s JOIN metastore.PARTITIONS p ON p.SD_ID=s.SD_ID SET s.CD_ID=%s"
                           " WHERE p.TBL_ID=%s", (cd_id, row.tbl_id))
        update_sd(tx, row.sd_id, new_sd, key, cd_id)
        if cd_id != old_cd and old_cd is not None:
            delete_unused_cds(tx, [old_cd])
        tx.execute("UPDATE metastore.TBLS SET DB_ID=%s, TBL_NAME=%s, OWNER=%s, LAST_ACCESS_TIME=%s, RETENTION=%s,"
                   " TBL_TYPE=%s, VIEW_EXPANDED_TEXT=%s, VIEW_ORIGINAL_TEXT=%s, IS_REWRITE_ENABLED=%s WHERE TBL_ID=%s",
                   (db_id, new.tableName, new.owner, new.lastAccessTime or 0, new.retention or 0, new.tableType,
                    new.viewExpandedText, new.viewOriginalText, bool(new.rewriteEnabled), row.tbl_id))
        replace_params(tx, "TABLE_PARAMS", "TBL_ID", row.tbl_id, new.parameters)
        tx.executemany("UPDATE metastore.PARTITION_KEYS SET PKEY_COMMENT=%s WHERE TBL_ID=%s AND PKEY_NAME=%s",
                       [(k.comment, row.tbl_id, k.name.lower()) for k in new.partitionKeys or []])

    # --------------------------------------------------------------------- drop
    def drop_table(self, db_name: str, name: str, dirs, purge: bool = False) -> None:
        self._write(lambda tx: self._drop_table_tx(tx, db_name, name, dirs, purge))

    def _drop_table_tx(self, tx, db_name: str, name: str, dirs, purge: bool) -> None:
        row = self._table_row(tx, db_name, name, " FOR UPDATE")
        self._drop_indexes_tx(tx, row.tbl_id, dirs, purge)   # index tables are managed, whatever the base
        if not is_managed(row.table_type):
            dirs = None          # external tables and views keep their data
        table_location = tx.query_one("SELECT LOCATION FROM metastore.SDS WHERE SD_ID=%s", (row.sd_id,))
        table_location = table_location[0] if table_location else None
        parts = tx.query("SELECT p.SD_ID, s.LOCATION FROM metastore.PARTITIONS p"
                         " LEFT JOIN metastore.SDS s ON s.SD_ID=p.SD_ID WHERE p.TBL_ID=%s", (row.tbl_id,))
        delete_sds(tx, [sd for sd, _ in parts if sd is not None])
        tx.execute("DELETE FROM metastore.PARTITIONS WHERE TBL_ID=%s", (row.tbl_id,))
        if row.sd_id is not None:
            delete_sds(tx, [row.sd_id])
        tx.execute("DELETE FROM metastore.TBLS WHERE TBL_ID=%s", (row.tbl_id,))
        if dirs is None:
            return
        if table_location:
            dirs.delete(tx, table_location, row.owner, purge)
        for _, location in parts:
            if location and replace_prefix(location, table_location or "\0", "") == location:
                dirs.delete(tx, location, row.owner, purge)
