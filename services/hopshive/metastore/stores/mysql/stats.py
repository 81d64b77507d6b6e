"""Column statistics of tables (TAB_COL_STATS) and partitions (PART_COL_STATS).

One row per column, replaced on update.  The kind of statistics read back follows the
column's type, as in Hive's ObjectStore (long for integers and timestamps, double, decimal
as text, date as days since the epoch in the LONG columns, string, binary, boolean).
``bitVectors`` are not kept (the schema has no BIT_VECTOR column)."""

from __future__ import annotations

from decimal import Decimal
from typing import Sequence

from ...api import api
from ...exceptions import InvalidObject, NoSuchObject
from .sql import marks

_VALUES = ("LONG_LOW_VALUE", "LONG_HIGH_VALUE", "DOUBLE_LOW_VALUE", "DOUBLE_HIGH_VALUE", "BIG_DECIMAL_LOW_VALUE",
           "BIG_DECIMAL_HIGH_VALUE", "NUM_NULLS", "NUM_DISTINCTS", "AVG_COL_LEN", "MAX_COL_LEN", "NUM_TRUES",
           "NUM_FALSES")
_INTEGRAL = {"tinyint", "smallint", "int", "integer", "bigint", "timestamp"}


def _kind(column_type: str) -> str:
    base = (column_type or "").lower().split("(")[0].strip()
    if base == "boolean":
        return "boolean"
    if base in _INTEGRAL:
        return "long"
    if base in ("float", "double", "double precision"):
        return "double"
    if base in ("decimal", "numeric"):
        return "decimal"
    if base == "date":
        return "date"
    if base == "binary":
        return "binary"
    return "string"


def _decimal_text(value) -> str | None:
    if value is None or value.unscaled is None:
        return None
    unscaled = int.from_bytes(value.unscaled, "big", signed=True)
    return str(Decimal(unscaled).scaleb(-(value.scale or 0)))


def _decimal_struct(text: str | None):
    if text is None:
        return None
    value = Decimal(text)
    sign, digits, exponent = value.as_tuple()
    scale = max(-exponent, 0)
    unscaled = int(value.scaleb(scale))
    length = max(1, (unscaled.bit_length() + 8) // 8)
    return api.Decimal(scale=scale, unscaled=unscaled.to_bytes(length, "big", signed=True))


def _to_row(data) -> tuple:
    """The twelve value columns for one ColumnStatisticsData."""
    v = dict.fromkeys(_VALUES)
    if data.booleanStats:
        s = data.booleanStats
        v.update(NUM_TRUES=s.numTrues, NUM_FALSES=s.numFalses, NUM_NULLS=s.numNulls)
    elif data.longStats:
        s = data.longStats
        v.update(LONG_LOW_VALUE=s.lowValue, LONG_HIGH_VALUE=s.highValue, NUM_NULLS=s.numNulls, NUM_DISTINCTS=s.numDVs)
    elif data.doubleStats:
        s = data.doubleStats
        v.update(DOUBLE_LOW_VALUE=s.lowValue, DOUBLE_HIGH_VALUE=s.highValue, NUM_NULLS=s.numNulls,
                 NUM_DISTINCTS=s.numDVs)
    elif data.stringStats:
        s = data.stringStats
        v.update(MAX_COL_LEN=s.maxColLen, AVG_COL_LEN=s.avgColLen, NUM_NULLS=s.numNulls, NUM_DISTINCTS=s.numDVs)
    elif data.binaryStats:
        s = data.binaryStats
        v.update(MAX_COL_LEN=s.maxColLen, AVG_COL_LEN=s.avgColLen, NUM_NULLS=s.numNulls)
    elif data.decimalStats:
        s = data.decimalStats
        v.update(BIG_DECIMAL_LOW_VALUE=_decimal_text(s.lowValue), BIG_DECIMAL_HIGH_VALUE=_decimal_text(s.highValue),
                 NUM_NULLS=s.numNulls, NUM_DISTINCTS=s.numDVs)
    elif data.dateStats:
        s = data.dateStats
        v.update(LONG_LOW_VALUE=s.lowValue.daysSinceEpoch if s.lowValue else None,
                 LONG_HIGH_VALUE=s.highValue.daysSinceEpoch if s.highValue else None,
                 NUM_NULLS=s.numNulls, NUM_DISTINCTS=s.numDVs)
    else:
        raise InvalidObject("column statistics without data")
    v["NUM_NULLS"] = v["NUM_NULLS"] or 0
    return tuple(v[c] for c in _VALUES)


def _to_obj(name: str, column_type: str, row: tuple):
    (long_low, long_high, double_low, double_high, dec_low, dec_high, nulls, distinct, avg_len, max_len,
     trues, falses) = row
    kind = _kind(column_type)
    data = api.ColumnStatisticsData()
    if kind == "boolean":
        data.booleanStats = api.BooleanColumnStatsData(numTrues=trues, numFalses=falses, numNulls=nulls)
    elif kind == "long":
        data.longStats = api.LongColumnStatsData(lowValue=long_low, highValue=long_high, numNulls=nulls, numDVs=distinct)
    elif kind == "double":
        data.doubleStats = api.DoubleColumnStatsData(lowValue=double_low, highValue=double_high, numNulls=nulls,
                                                     numDVs=distinct)
    elif kind == "decimal":
        data.decimalStats = api.DecimalColumnStatsData(lowValue=_decimal_struct(dec_low),
                                                       highValue=_decimal_struct(dec_high), numNulls=nulls,
                                                       numDVs=distinct)
    elif kind == "date":
        data.dateStats = api.DateColumnStatsData(
            lowValue=api.Date(long_low) if long_low is not None else None,
            highValue=api.Date(long_high) if long_high is not None else None, numNulls=nulls, numDVs=distinct)
    elif kind == "binary":
        data.binaryStats = api.BinaryColumnStatsData(maxColLen=max_len, avgColLen=avg_len, numNulls=nulls)
    else:
        data.stringStats = api.StringColumnStatsData(maxColLen=max_len or 0, avgColLen=avg_len or 0.0,
                                                     numNulls=nulls, numDVs=distinct or 0)
    return api.ColumnStatisticsObj(colName=name, colType=column_type, statsData=data)


class StatsOps:
    def update_column_statistics(self, stats, part_values: Sequence[str] | None = None) -> None:
        desc = stats.statsDesc

        def work(tx):
            info = self._table_info(tx, desc.dbName, desc.tableName, " FOR UPDATE")
            columns = {c.name.lower() for c in info.cols}
            if desc.isTblLevel:
                owner_sql, owner_id, names = "TAB_COL_STATS", ("TBL_ID", info.row.tbl_id), ()
            else:
                name = info.part_name(part_values)
                found = self._existing(tx, info, [name])
                if name not in found:
                    raise NoSuchObject(f"partition {name} of table {desc.dbName}.{desc.tableName} does not exist")
                owner_sql, owner_id, names = "PART_COL_STATS", ("PART_ID", found[name][0]), (name,)
            for obj in stats.statsObj or []:
                column = (obj.colName or "").lower()
                if column not in columns:
                    raise NoSuchObject(f"column {column} of table {desc.dbName}.{desc.tableName} does not exist")
                tx.execute(f"DELETE FROM metastore.{owner_sql} WHERE {owner_id[0]}=%s AND COLUMN_NAME=%s",
                           (owner_id[1], column))
                extra = ", PARTITION_NAME" if names else ""
                fields = f"DB_NAME, TABLE_NAME{extra}, COLUMN_NAME, COLUMN_TYPE, {owner_id[0]}, {', '.join(_VALUES)}, LAST_ANALYZED"
                values = (desc.dbName, desc.tableName, *names, column, obj.colType, owner_id[1],
                          *_to_row(obj.statsData), desc.lastAnalyzed or 0)
                tx.execute(f"INSERT INTO metastore.{owner_sql} ({fields}) VALUES ({marks(len(values))})", values)
        self._write(work)

    def get_table_column_statistics(self, db_name: str, table_name: str, columns: Sequence[str]) -> list:
        def work(tx):
            info = self._table_info(tx, db_name, table_name)
            wanted = [c.lower() for c in columns]
            if not wanted:
                return []
            rows = tx.query(f"SELECT COLUMN_NAME, COLUMN_TYPE, {', '.join(_VALUES)} FROM metastore.TAB_COL_STATS"
                            f" WHERE TBL_ID=%s AND COLUMN_NAME IN ({marks(len(wanted))})", (info.row.tbl_id, *wanted))
            by_name = {r[0]: _to_obj(r[0], r[1], r[2:]) for r in rows}
            return [by_name[c] for c in wanted if c in by_name]
        return self._read(work)

    def get_partition_column_statistics(self, db_name: str, table_name: str, part_names: Sequence[str],
                                        columns: Sequence[str]) -> dict[str, list]:
        def work(tx):
            info = self._table_info(tx, db_name, table_name)
            wanted = [c.lower() for c in columns]
            found = self._existing(tx, info, list(part_names))
            result: dict[str, list] = {}
            if not wanted or not found:
                return result
            ids = {v[0]: name for name, v in found.items()}
            rows = tx.query(f"SELECT PART_ID, COLUMN_NAME, COLUMN_TYPE, {', '.join(_VALUES)} FROM metastore.PART_COL_STATS"
                            f" WHERE PART_ID IN ({marks(len(ids))}) AND COLUMN_NAME IN ({marks(len(wanted))})",
                            (*ids, *wanted))
            for row in sorted(rows, key=lambda r: (r[0], wanted.index(r[1]))):
                result.setdefault(ids[row[0]], []).append(_to_obj(row[1], row[2], row[3:]))
            return result
        return self._read(work)

    def delete_column_statistics(self, db_name: str, table_name: str, part_name: str | None,
                                 column: str | None) -> bool:
        def work(tx):
            info = self._table_info(tx, db_name, table_name, " FOR UPDATE")
            if part_name is None:
                table, owner = "TAB_COL_STATS", ("TBL_ID", info.row.tbl_id)
            else:
                found = self._existing(tx, info, [part_name])
                if part_name not in found:
                    raise NoSuchObject(f"partition {part_name} of table {db_name}.{table_name} does not exist")
                table, owner = "PART_COL_STATS", ("PART_ID", found[part_name][0])
            sql = f"DELETE FROM metastore.{table} WHERE {owner[0]}=%s"
            params = (owner[1],)
            if column:
                sql, params = sql + " AND COLUMN_NAME=%s", (owner[1], column.lower())
            return tx.execute(sql, params) > 0
        return self._write(work)
