"""Reading partitions: by values, names, partial specs, Hive filter strings and value sets.

Filters are compiled by ``hopshive.metastore.filter`` against the typed shadow columns of
PARTITION_KEY_VALS (one join per key used, each on the (TBL_ID, INTEGER_IDX, value)
indexes), so a point or range filter reads only the matching partitions.  One statement
returns each partition with its values, storage descriptor and serde; parameters and the
descriptors' other children follow, one statement each."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from operator import itemgetter
from typing import Mapping, Sequence

from ...api import CATALOG, api
from ...exceptions import InvalidInput, NoSuchObject
from ...filter import FilterError, KeyColumn, compile_filter, compile_value_sets
from ...names import make_part_name
from .sds import SD_COLUMN_COUNT, SD_COLUMNS, SERDE_JOIN, build_sds, load_params
from .sql import in_list
from .tables import TableRow, is_managed

# Partition columns, then SD_COLUMNS, then one value per partition key (_select).
_PART_COLUMNS = "p.PART_NAME, p.PART_ID, p.CREATE_TIME, p.LAST_ACCESS_TIME"
_SD_FIRST, _VALUES_FIRST = 4, 4 + SD_COLUMN_COUNT
_SD_JOIN = " LEFT JOIN metastore.SDS s ON s.SD_ID = p.SD_ID" + SERDE_JOIN


def name_hash(name: str) -> bytes:
    return hashlib.sha256(name.encode("utf-8")).digest()


@dataclass
class TableInfo:
    row: TableRow
    keys: list            # FieldSchema of the partition keys
    location: str | None
    cd_id: int | None
    cols: list

    @property
    def key_names(self) -> list[str]:
        return [k.name for k in self.keys]

    @property
    def managed(self) -> bool:
        return is_managed(self.row.table_type)

    def part_name(self, values: Sequence[str]) -> str:
        return make_part_name(self.key_names, values)


@dataclass(frozen=True)
class Selection:
    """A WHERE fragment over PARTITIONS p, and the partition keys (by index) whose values
    it reads from PARTITION_KEY_VALS k<index>."""
    keys: frozenset = frozenset()
    where: str = ""
    params: tuple = ()


def _key_joins(keys) -> str:
    return "".join(f" JOIN metastore.PARTITION_KEY_VALS k{i} ON k{i}.PART_ID=p.PART_ID AND k{i}.TBL_ID=p.TBL_ID"
                   f" AND k{i}.INTEGER_IDX={i}" for i in sorted(keys))


class PartitionReads:
    def _table_info(self, tx, db_name: str, name: str, lock: str = "") -> TableInfo:
        row = self._table_row(tx, db_name, name, lock)
        sd = tx.query_one("SELECT LOCATION, CD_ID FROM metastore.SDS WHERE SD_ID=%s", (row.sd_id,)) or (None, None)
        cols = [api.FieldSchema(*r) for r in tx.query(
            "SELECT COLUMN_NAME, TYPE_NAME, `COMMENT` FROM metastore.COLUMNS_V2 WHERE CD_ID=%s ORDER BY INTEGER_IDX",
            (sd[1],))] if sd[1] is not None else []
        return TableInfo(row, self._partition_keys(tx, [row.tbl_id])[row.tbl_id], sd[0], sd[1], cols)

    # --------------------------------------------------------------- selections
    @staticmethod
    def _by_values(info: TableInfo, values: Sequence[str]) -> Selection:
        return Selection(where=" AND p.PART_NAME_HASH=%s", params=(name_hash(info.part_name(values)),))

    @staticmethod
    def _by_names(names: Sequence[str]) -> Selection:
        if not names:
            return Selection(where=" AND FALSE")
        marks = ",".join(["%s"] * len(names))
        return Selection(where=f" AND p.PART_NAME_HASH IN ({marks})", params=tuple(name_hash(n) for n in names))

    @staticmethod
    def _by_partial(info: TableInfo, values: Sequence[str]) -> Selection:
        if len(values) > len(info.keys):
            raise InvalidInput(f"partial partition spec {list(values)} has more values than partition keys "
                               f"{info.key_names}")
        keys, where, params = set(), "", []
        for i, value in enumerate(values):
            if value:
                keys.add(i)
                where += f" AND k{i}.PART_KEY_VAL=%s"
                params.append(value)
        return Selection(frozenset(keys), where, tuple(params))

    @staticmethod
    def _by_ids(part_ids: Sequence[int]) -> Selection:
        fragment, params = in_list(part_ids)
        return Selection(where=f" AND p.PART_ID IN ({fragment})", params=params)

    @staticmethod
    def _key_columns(info: TableInfo) -> list[KeyColumn]:
        return [KeyColumn(k.name.lower(), k.type, f"k{i}.PART_KEY_VAL", f"k{i}.PART_KEY_VAL_NUM",
                          f"k{i}.PART_KEY_VAL_DATE") for i, k in enumerate(info.keys)]

    def _compiled(self, info: TableInfo, compiled) -> Selection:
        keys = frozenset(i for i, k in enumerate(info.keys) if k.name.lower() in compiled.keys_used)
        return Selection(keys, f" AND ({compiled.sql})", compiled.params)

    def _by_filter(self, info: TableInfo, text: str) -> Selection:
        if not text or not text.strip():
            return Selection()
        if not info.keys:
            raise InvalidInput(f"table {info.row.db_name}.{info.row.name} is not partitioned: no filter applies")
        try:
            return self._compiled(info, compile_filter(text, self._key_columns(info)))
        except FilterError as exc:
            raise InvalidInput(str(exc)) from None

    def _by_value_sets(self, info: TableInfo, value_sets: Mapping[str, Sequence[str]]) -> Selection:
        try:
            return self._compiled(info, compile_value_sets(value_sets, self._key_columns(info)))
        except FilterError as exc:
            raise InvalidInput(str(exc)) from None

    # -------------------------------------------------------------------- loads
    def _select(self, tx, info: TableInfo, selection: Selection, max_parts: int = -1,
                columns: str | None = None) -> list[tuple]:
        """Rows of ``columns`` (default: whole partitions, see _PART_COLUMNS; the first column is
        always PART_NAME) in name order.  Without a limit the rows are sorted here: MariaDB would
        copy the joined rows into a temporary table to sort them, a third of the statement's
        time.  (PART_NAME's collation, utf8mb4_nopad_bin, orders by code point, as Python does.)"""
        limited = max_parts is not None and max_parts >= 0
        order = f" ORDER BY p.PART_NAME LIMIT {int(max_parts)}" if limited else ""
        if columns is None:   # every key's value: the selection's joins plus the others
            keys = range(len(info.keys))
            columns = (f"SELECT {_PART_COLUMNS}, {SD_COLUMNS}{''.join(f', k{i}.PART_KEY_VAL' for i in keys)}"
                       f" FROM metastore.PARTITIONS p{_SD_JOIN}{_key_joins(keys)}")
        else:
            columns += _key_joins(selection.keys)
        rows = tx.query(f"{columns} WHERE p.TBL_ID=%s{selection.where}{order}", (info.row.tbl_id, *selection.params))
        if not limited:
            rows.sort(key=itemgetter(0))
        return rows

    def _load_partitions(self, tx, info: TableInfo, rows: list[tuple]) -> list:
        """Partitions from _select's rows."""
        if not rows:
            return []
        params = load_params(tx, "PARTITION_PARAMS", "PART_ID", [r[1] for r in rows])
        columns_cache = {info.cd_id: info.cols} if info.cd_id is not None else {}
        sds = build_sds(tx, [r[_SD_FIRST:_VALUES_FIRST] for r in rows if r[_SD_FIRST] is not None], columns_cache)
        return [api.Partition(values=list(row[_VALUES_FIRST:]), dbName=info.row.db_name, tableName=info.row.name,
                              createTime=row[2], lastAccessTime=row[3], sd=sds.get(row[_SD_FIRST]),
                              parameters=params.get(row[1], {}), catName=CATALOG)
                for row in rows]

    def _partitions(self, db_name: str, table_name: str, make_selection, max_parts: int = -1) -> list:
        def work(tx):
            info = self._table_info(tx, db_name, table_name)
            return self._load_partitions(tx, info, self._select(tx, info, make_selection(info), max_parts))
        return self._read(work)

    # ------------------------------------------------------------------- RawStore
    def get_partition(self, db_name: str, table_name: str, values: Sequence[str]):
        parts = self._partitions(db_name, table_name, lambda info: self._by_values(info, values))
        if not parts:
            raise NoSuchObject(f"partition values={list(values)} of table {db_name}.{table_name} does not exist")
        return parts[0]

    def get_partitions(self, db_name: str, table_name: str, max_parts: int = -1,
                       partial_values: Sequence[str] | None = None, names: Sequence[str] | None = None) -> list:
        def selection(info):
            if names is not None:
                return self._by_names(names)
            return self._by_partial(info, partial_values) if partial_values else Selection()
        return self._partitions(db_name, table_name, selection, max_parts)

    def get_partition_names(self, db_name: str, table_name: str, max_parts: int = -1,
                            partial_values: Sequence[str] | None = None) -> list[str]:
        def work(tx):
            info = self._table_info(tx, db_name, table_name)
            selection = self._by_partial(info, partial_values) if partial_values else Selection()
            return [r[0] for r in self._select(tx, info, selection, max_parts,
                                               "SELECT p.PART_NAME FROM metastore.PARTITIONS p")]
        return self._read(work)

    def get_partitions_by_filter(self, db_name: str, table_name: str, filter_text: str, max_parts: int = -1) -> list:
        return self._partitions(db_name, table_name, lambda info: self._by_filter(info, filter_text), max_parts)

    def count_partitions_by_filter(self, db_name: str, table_name: str, filter_text: str) -> int:
        def work(tx):
            info = self._table_info(tx, db_name, table_name)
            selection = self._by_filter(info, filter_text)
            return tx.query_one(f"SELECT COUNT(*) FROM metastore.PARTITIONS p{_key_joins(selection.keys)}"
                                f" WHERE p.TBL_ID=%s{selection.where}", (info.row.tbl_id, *selection.params))[0]
        return self._read(work)

    def get_partitions_by_value_sets(self, db_name: str, table_name: str, value_sets: Mapping[str, Sequence[str]],
                                     max_parts: int = -1) -> list:
        return self._partitions(db_name, table_name, lambda info: self._by_value_sets(info, value_sets), max_parts)
