"""The HBase store's column statistics (a part of ``HBaseStore``, which it relies on for
``_hb``, ``_table``, ``_table_record`` and ``get_partition``): one row per table or
partition, one cell per column."""

from __future__ import annotations

import copy
from typing import Sequence

from ...api import api
from ...exceptions import InvalidObject
from ...names import make_part_name, parse_part_name
from . import rowkey
from .records import decode, encode, string_key


class StatisticsOps:
    @staticmethod
    def _stats_key(db_name: str, table_name: str, part_name: str | None) -> bytes:
        return string_key(db_name) + string_key(table_name) + string_key(part_name or "")

    def update_column_statistics(self, stats, part_values: Sequence[str] | None = None) -> None:
        desc = stats.statsDesc

        def work(t):
            table = self._table(t, desc.dbName.lower(), desc.tableName.lower())
            part_name = None
            columns = {c.name.lower(): c for c in (table.sd.cols if table.sd else [])}
            if not desc.isTblLevel:
                values = part_values or parse_part_name(desc.partName, [k.name for k in table.partitionKeys])
                part = self.get_partition(table.dbName, table.tableName, values)
                part_name = make_part_name([k.name for k in table.partitionKeys], part.values)
                columns = {c.name.lower(): c for c in (part.sd.cols if part.sd else [])}
            cells = {}
            for obj in stats.statsObj or []:
                if obj.colName.lower() not in columns:
                    raise InvalidObject(f"column {obj.colName} is not a column of {table.dbName}.{table.tableName}")
                stored = copy.copy(obj)
                stored.colName = obj.colName.lower()
                cells[b"c:" + stored.colName.encode()] = encode(stored)
            if cells:
                t("stats").put(self._stats_key(table.dbName, table.tableName, part_name), cells)
        self._hb(work)

    def get_table_column_statistics(self, db_name: str, table_name: str, columns: Sequence[str]) -> list:
        def work(t):
            self._table_record(t, db_name, table_name)
            wanted = [b"c:" + c.lower().encode() for c in columns]
            data = t("stats").row(self._stats_key(db_name, table_name, None), columns=wanted) if wanted else {}
            return [decode(api.ColumnStatisticsObj, data[c]) for c in wanted if c in data]
        return self._hb(work)

    def get_partition_column_statistics(self, db_name: str, table_name: str, part_names: Sequence[str],
                                        columns: Sequence[str]) -> dict[str, list]:
        def work(t):
            self._table_record(t, db_name, table_name)
            wanted = [b"c:" + c.lower().encode() for c in columns]
            out = {}
            for name in dict.fromkeys(part_names):
                data = t("stats").row(self._stats_key(db_name, table_name, name), columns=wanted) if wanted else {}
                objs = [decode(api.ColumnStatisticsObj, data[c]) for c in wanted if c in data]
                if objs:
                    out[name] = objs
            return out
        return self._hb(work)

    def delete_column_statistics(self, db_name: str, table_name: str, part_name: str | None,
                                 column: str | None) -> bool:
        def work(t):
            table = self._table(t, db_name, table_name)
            if part_name is not None:
                self.get_partition(db_name, table_name,
                                   parse_part_name(part_name, [k.name for k in table.partitionKeys]))
            key = self._stats_key(db_name, table_name, part_name)
            data = t("stats").row(key)
            doomed = [c for c in data if column is None or c == b"c:" + column.lower().encode()]
            if doomed:
                t("stats").delete(key, columns=doomed)
            return bool(doomed)
        return self._hb(work)

    def _delete_stats(self, t, db_name: str, table_name: str, part_name: str | None) -> None:
        t("stats").delete(self._stats_key(db_name, table_name, part_name))

    def _move_stats(self, t, db_name, table_name, new_db, new_table, part_name=None, new_part=None) -> None:
        """Statistics follow a renamed table (all of them) or partition (``part_name``)."""
        if part_name is not None:
            moves = [(self._stats_key(db_name, table_name, part_name), self._stats_key(new_db, new_table, new_part))]
        else:
            prefix = string_key(db_name) + string_key(table_name)
            new_prefix = string_key(new_db) + string_key(new_table)
            moves = [(k, new_prefix + k[len(prefix):]) for k, _ in
                     self._scan(t("stats"), prefix, rowkey.prefix_successor(prefix), columns=[b"c"])]
        for old, new in moves:
            data = t("stats").row(old)
            if data:
                t("stats").put(new, data)
                t("stats").delete(old)
