"""Indexes: IDXS with INDEX_PARAMS and the index's own descriptor (the covered columns, no
location), and the index table -- a TBLS row of type INDEX_TABLE made, and with ``dirs``
removed, in the index's transaction.

Locks: the base table's TBLS row first (``FOR UPDATE``), then the index table's, the order
drop_table and drop_partitions of the base table use too.  The foreign keys do the rest:
the base table's or the index table's row going (a directory deleted behind the
metastore's back) takes IDXS and INDEX_PARAMS with it; the index's descriptor is then an
orphan SD, and an index table left by its base table an ``orphan_index_table``, for the
cleaner and fsck (``metastore.orphans``)."""

from __future__ import annotations

from typing import Sequence

from ...api import api
from ...exceptions import AlreadyExists, InvalidObject, NoSuchObject
from ...indexes import Index, index_key
from ...warehouse import Directories
from .sds import delete_sds, insert_params, insert_sd, load_params, load_sds, replace_params
from .sql import bit

_INDEX = ("SELECT i.INDEX_ID, i.INDEX_NAME, i.INDEX_HANDLER_CLASS, i.CREATE_TIME, i.LAST_ACCESS_TIME,"
          " i.DEFERRED_REBUILD, i.SD_ID, it.TBL_NAME, t.TBL_NAME, d.NAME"
          " FROM metastore.IDXS i JOIN metastore.TBLS t ON t.TBL_ID = i.ORIG_TBL_ID"
          " JOIN metastore.DBS d ON d.DB_ID = t.DB_ID LEFT JOIN metastore.TBLS it ON it.TBL_ID = i.INDEX_TBL_ID"
          " WHERE d.NAME=%s AND t.TBL_NAME=%s")


def _not_found(db_name: str, table_name: str, index_name: str) -> NoSuchObject:
    return NoSuchObject(f"{db_name}.{table_name} index={index_name} not found")


class IndexOps:
    def _load_indexes(self, tx, rows: Sequence[tuple]) -> list[Index]:
        sds = load_sds(tx, [r[6] for r in rows if r[6] is not None])
        params = load_params(tx, "INDEX_PARAMS", "INDEX_ID", [r[0] for r in rows])
        return [Index(indexName=name, indexHandlerClass=handler, dbName=db_name, origTableName=table_name,
                      createTime=created, lastAccessTime=accessed, indexTableName=index_table, sd=sds.get(sd_id),
                      parameters=params.get(index_id, {}), deferredRebuild=bit(deferred))
                for index_id, name, handler, created, accessed, deferred, sd_id, index_table, table_name, db_name
                in rows]

    # ------------------------------------------------------------------- create
    def add_index(self, index: Index, index_table: api.Table | None, dirs: Directories, create_dir: bool) -> None:
        def work(tx):
            base = self._table_row(tx, index.dbName, index.origTableName, " FOR UPDATE")
            if tx.query_one("SELECT 1 FROM metastore.IDXS WHERE ORIG_TBL_ID=%s AND INDEX_NAME=%s",
                            (base.tbl_id, index.indexName)):
                raise AlreadyExists(f"Index already exists: {index_key(index)}")
            index_tbl_id = None
            if index_table is not None:
                try:
                    index_tbl_id = self._create_table_tx(tx, index_table, dirs, create_dir)
                except AlreadyExists as exc:
                    raise InvalidObject("Unable to add index because index table already exists") from exc
            sd_id = insert_sd(tx, index.sd, None)
            tx.execute("INSERT INTO metastore.IDXS (CREATE_TIME, DEFERRED_REBUILD, INDEX_HANDLER_CLASS, INDEX_NAME,"
                       " INDEX_TBL_ID, LAST_ACCESS_TIME, ORIG_TBL_ID, SD_ID) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                       (index.createTime, bool(index.deferredRebuild), index.indexHandlerClass, index.indexName,
                        index_tbl_id, index.lastAccessTime or 0, base.tbl_id, sd_id))
            insert_params(tx, "INDEX_PARAMS", "INDEX_ID", tx.lastrowid, index.parameters)
        self._write(work, duplicate=f"Index already exists: {index_key(index)}")

    # -------------------------------------------------------------------- reads
    def get_index(self, db_name: str, table_name: str, index_name: str) -> Index:
        def work(tx):
            rows = tx.query(_INDEX + " AND i.INDEX_NAME=%s", (db_name, table_name, index_name))
            if not rows:
                raise _not_found(db_name, table_name, index_name)
            return self._load_indexes(tx, rows)[0]
        return self._snapshot(work)

    def get_indexes(self, db_name: str, table_name: str, max_indexes: int = -1) -> list[Index]:
        limit = f" LIMIT {int(max_indexes)}" if max_indexes is not None and max_indexes >= 0 else ""
        return self._snapshot(lambda tx: self._load_indexes(
            tx, tx.query(_INDEX + " ORDER BY i.INDEX_NAME" + limit, (db_name, table_name))))

    # -------------------------------------------------------------------- alter
    def alter_index(self, db_name: str, table_name: str, index_name: str, new_index: Index) -> None:
        def work(tx):
            base = self._table_row(tx, db_name, table_name, " FOR UPDATE")
            row = tx.query_one("SELECT INDEX_ID FROM metastore.IDXS WHERE ORIG_TBL_ID=%s AND INDEX_NAME=%s FOR UPDATE",
                               (base.tbl_id, index_name))
            if row is None:
                raise _not_found(db_name, table_name, index_name)
            replace_params(tx, "INDEX_PARAMS", "INDEX_ID", row[0], new_index.parameters)
        self._write(work)

    # --------------------------------------------------------------------- drop
    def drop_index(self, db_name: str, table_name: str, index_name: str, dirs: Directories | None) -> None:
        def work(tx):
            base = self._table_row(tx, db_name, table_name, " FOR UPDATE")
            row = tx.query_one("SELECT i.SD_ID, it.TBL_NAME FROM metastore.IDXS i LEFT JOIN metastore.TBLS it"
                               " ON it.TBL_ID = i.INDEX_TBL_ID WHERE i.ORIG_TBL_ID=%s AND i.INDEX_NAME=%s FOR UPDATE",
                               (base.tbl_id, index_name))
            if row is None:
                raise _not_found(db_name, table_name, index_name)
            sd_id, index_table = row
            delete_sds(tx, [sd_id])                    # cascades to IDXS and INDEX_PARAMS
            if index_table is not None:
                self._drop_table_tx(tx, db_name, index_table, dirs, False)
        self._write(work)

    def _drop_indexes_tx(self, tx, tbl_id: int, dirs: Directories | None, purge: bool) -> None:
        """Before a table goes: the indexes of a base table, with their index tables, or
        the index of an index table."""
        rows = tx.query("SELECT i.SD_ID, i.ORIG_TBL_ID, d.NAME, it.TBL_NAME FROM metastore.IDXS i"
                        " LEFT JOIN metastore.TBLS it ON it.TBL_ID = i.INDEX_TBL_ID"
                        " LEFT JOIN metastore.DBS d ON d.DB_ID = it.DB_ID"
                        " WHERE i.ORIG_TBL_ID=%s OR i.INDEX_TBL_ID=%s", (tbl_id, tbl_id))
        delete_sds(tx, [sd_id for sd_id, *_ in rows if sd_id is not None])
        for _, orig_tbl_id, db_name, index_table in rows:
            if orig_tbl_id == tbl_id and index_table is not None:
                self._drop_table_tx(tx, db_name, index_table, dirs, purge)

    def _drop_index_partitions_tx(self, tx, db_name: str, table_name: str,
                                  values_list: Sequence[Sequence[str]],
                                  dirs: Directories | None, purge: bool) -> None:
        """The partitions of the same values of the base table's index tables that are
        partitioned like it (an index table partitioned otherwise is left alone, as the
        seed says)."""
        index_tables = tx.query(
            "SELECT it.TBL_ID, it.TBL_NAME, t.TBL_ID FROM metastore.IDXS i JOIN metastore.TBLS t"
            " ON t.TBL_ID = i.ORIG_TBL_ID JOIN metastore.DBS d ON d.DB_ID = t.DB_ID"
            " JOIN metastore.TBLS it ON it.TBL_ID = i.INDEX_TBL_ID"
            " WHERE d.NAME=%s AND t.TBL_NAME=%s ORDER BY it.TBL_ID",
            (db_name, table_name))
        if not index_tables:
            return
        keys = self._partition_keys(tx, [index_tables[0][2], *(r[0] for r in index_tables)])
        base_keys = [(k.name, k.type) for k in keys[index_tables[0][2]]]
        for tbl_id, index_table, _ in index_tables:
            if [(k.name, k.type) for k in keys[tbl_id]] == base_keys:
                self._drop_partitions_tx(tx, db_name, index_table, values_list, dirs, True, purge)
