"""The HBase store's indexes (a part of ``HBaseStore``, which it relies on for ``_hb``,
``_table_record``, ``_put``, ``_writing``, descriptors and table creates and drops).

Rows: table ``idxs``, key ``<db><base table><index>`` (``rowkey.encode_string`` each: a
base table's indexes are one key range), one cell ``i:obj``: a ``Record`` of the Index
(Thrift-encoded, descriptor taken out and counted like a table's), its index table's name
as the record's name.  The index table is an ordinary table row of type INDEX_TABLE.

Order of operations (no transaction spans rows; see ``hbase_store``): add claims the
index row first (``checkAndPut``: of two instances adding one index, one wins and the
other gets AlreadyExists at once), then makes the index table (directory, then row), and
takes the row back -- and the index table -- when that fails or the base table went
meanwhile; for that moment a reader may see an index whose index table is not there yet.
Drop empties the index row with ``checkAndPut`` (one of two racing drops wins and
releases the descriptor), deletes it, then drops the index table.  A table drop takes its
indexes first (and an index table drop its index), so what a crash leaves is an index row
whose base or index table is gone, or an emptied one -- ``fsck-hbase``'s ``orphan index``
-- or an index table without an index, which fsck reports as ``orphan index table``.
"""

from __future__ import annotations

import logging
from typing import Sequence

from ...api import api
from ...exceptions import AlreadyExists, InvalidObject, NoSuchObject
from ...indexes import Index, index_key
from ...warehouse import Directories
from . import records, rowkey
from .records import RECORD as OBJ, Record, decode, string_key as _s

log = logging.getLogger("hopshive.metastore.hbase")


def _not_found(db_name: str, table_name: str, index_name: str) -> NoSuchObject:
    return NoSuchObject(f"{db_name}.{table_name} index={index_name} not found")


def index_prefix(db_name: str, table_name: str) -> bytes:
    return _s(db_name) + _s(table_name)


class IndexOps:
    def _index_rows(self, t, prefix: bytes) -> list[tuple[bytes, Record]]:
        """The index rows below ``prefix`` (a row being deleted -- an empty cell -- is none)."""
        found = ((key, Record.of(data)) for key, data in
                 self._scan(t("idxs"), prefix, rowkey.prefix_successor(prefix), columns=[OBJ]))
        return [(key, record) for key, record in found if record is not None]

    def _indexes(self, t, found: Sequence[Record]) -> list[Index]:
        shared = self._load_sds(t, [r.sd for r in found])
        return [self._with_sd(decode(Index, r.blob), shared, r) for r in found]

    # ------------------------------------------------------------------- create
    def add_index(self, index: Index, index_table: api.Table | None, dirs: Directories, create_dir: bool) -> None:
        db_name, base_name = index.dbName, index.origTableName
        key = index_prefix(db_name, base_name) + _s(index.indexName)
        with self._writing(db_name, base_name):
            def claim(t):
                self._table_record(t, db_name, base_name)
                if not self._put(t, "idxs", key, index, None, index.indexTableName or ""):
                    raise AlreadyExists(f"Index already exists: {index_key(index)}")
            self._hb(claim)
            try:
                if index_table is not None:
                    try:
                        self.create_table(index_table, dirs, create_dir)
                    except AlreadyExists as exc:
                        raise InvalidObject("Unable to add index because index table already exists") from exc
                if not self._hb(lambda t: t("tbls").row(index_prefix(db_name, base_name), columns=[OBJ])):
                    if index_table is not None:          # the base table was dropped meanwhile
                        self._drop_index_table(db_name, index_table.tableName, dirs)
                    raise NoSuchObject(f"Table {db_name}.{base_name} does not exist")
            except Exception:
                self._hb(lambda t: self._delete_index_row(t, key))
                raise

    # -------------------------------------------------------------------- reads
    def get_index(self, db_name: str, table_name: str, index_name: str) -> Index:
        def work(t):
            record = Record.of(t("idxs").row(index_prefix(db_name, table_name) + _s(index_name), columns=[OBJ]))
            if record is None:
                raise _not_found(db_name, table_name, index_name)
            return self._indexes(t, [record])[0]
        return self._hb(work)

    def get_indexes(self, db_name: str, table_name: str, max_indexes: int = -1) -> list[Index]:
        def work(t):
            found = sorted(self._indexes(t, [r for _, r in self._index_rows(t, index_prefix(db_name, table_name))]),
                           key=lambda i: i.indexName)
            return found[:max_indexes] if max_indexes is not None and max_indexes >= 0 else found
        return self._hb(work)

    # -------------------------------------------------------------------- alter
    def alter_index(self, db_name: str, table_name: str, index_name: str, new_index: Index) -> None:
        key = index_prefix(db_name, table_name) + _s(index_name)

        def work(t):
            record = Record.of(t("idxs").row(key, columns=[OBJ]))
            if record is None:
                raise _not_found(db_name, table_name, index_name)
            index = decode(Index, record.blob)
            index.parameters = dict(new_index.parameters or {})
            stored = Record(records.encode(index), record.sd, record.location, record.name).pack()
            if not records.check_and_put(t("idxs"), key, record.raw, stored):
                raise records.changed(f"Index {index_key(index)}")
        with self._writing(db_name, table_name):
            self._hb(work)

    # --------------------------------------------------------------------- drop
    def drop_index(self, db_name: str, table_name: str, index_name: str, dirs: Directories | None) -> None:
        with self._writing(db_name, table_name):
            index = self.get_index(db_name, table_name, index_name)
            if not self._hb(lambda t: self._delete_index_row(t, index_prefix(db_name, table_name) + _s(index_name))):
                raise _not_found(db_name, table_name, index_name)     # another instance dropped it
            self._drop_index_table(db_name, index.indexTableName, dirs)

    def _delete_index_row(self, t, key: bytes) -> bool:
        """Delete an index row and release its descriptor, once: the row is first emptied
        with ``checkAndPut`` against what was read, so of two instances deleting it one
        does (and releases); False for the other, or when there is no row."""
        record = Record.of(t("idxs").row(key, columns=[OBJ]))
        if record is None or not records.check_and_put(t("idxs"), key, record.raw, b""):
            return False
        t("idxs").delete(key)
        self._release_sd(t, record.sd)
        return True

    def _drop_index_table(self, db_name: str, name: str | None, dirs: Directories | None,
                          purge: bool = False) -> None:
        if not name:
            return
        try:
            self.drop_table(db_name, name, dirs, purge)
        except NoSuchObject:
            log.info("index table already gone", extra={"table": f"{db_name}.{name}"})

    def _drop_indexes(self, db_name: str, table_name: str, dirs: Directories | None, purge: bool) -> None:
        """Before a table goes: its indexes with their index tables; for an index table, its
        index."""
        def work(t):
            own = self._index_rows(t, index_prefix(db_name, table_name))
            others = [(key, record) for key, record in self._index_rows(t, _s(db_name))
                      if record.name == table_name]
            for key, _ in own + others:
                self._delete_index_row(t, key)
            return [record.name for _, record in own]
        for index_table in self._hb(work):
            self._drop_index_table(db_name, index_table, dirs, purge)

    def _drop_index_partitions(self, db_name: str, table_name: str, values_list: Sequence[Sequence[str]],
                               dirs: Directories | None, purge: bool) -> None:
        """The partitions of the same values of the index tables partitioned like the base
        table."""
        def work(t):
            base = self._table(t, db_name, table_name)
            names = [r.name for _, r in self._index_rows(t, index_prefix(db_name, table_name)) if r.name]
            return [k.name.lower() for k in base.partitionKeys or []], [k.type for k in base.partitionKeys or []], names
        if not values_list:
            return
        key_names, key_types, names = self._hb(work)
        for table in self.get_tables(db_name, names):
            keys = table.partitionKeys or []
            if [k.name.lower() for k in keys] == key_names and [k.type for k in keys] == key_types:
                self.drop_partitions(db_name, table.tableName, values_list, dirs, if_exists=True, purge=purge)

    def _rename_indexes(self, db_name: str, table_name: str, new_db: str, new_name: str) -> None:
        """A renamed base table keeps its indexes (their rows move to the new key)."""
        def work(t):
            for key, record in self._index_rows(t, index_prefix(db_name, table_name)):
                index = decode(Index, record.blob)
                index.dbName, index.origTableName = new_db, new_name
                moved = Record(records.encode(index), record.sd, record.location, record.name).pack()
                if not records.check_and_put(t("idxs"), index_prefix(new_db, new_name) + _s(index.indexName),
                                             None, moved):
                    raise AlreadyExists(f"Index already exists: {index_key(index)}")
                t("idxs").delete(key)
        self._hb(work)
