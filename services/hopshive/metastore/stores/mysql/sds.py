"""Storage descriptors: SDS with its serde, columns, parameters, bucketing, sorting and
skew rows -- written per object, read in batches (a get_partitions of 10k partitions reads
each child table once per 1000 descriptors, and shared column descriptors once)."""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable, Sequence

from ...api import api
from .sql import bit, execute_in, insert_returning, query_in

COMMENT_MAX = 256
# A descriptor and its serde, read in one row: SDS s joined to SERDES se (build_sds's input).
SD_COLUMNS = ("s.SD_ID, s.CD_ID, s.INPUT_FORMAT, s.IS_COMPRESSED, s.IS_STOREDASSUBDIRECTORIES, s.LOCATION,"
              " s.NUM_BUCKETS, s.OUTPUT_FORMAT, s.SERDE_ID, se.NAME, se.SLIB")
SD_COLUMN_COUNT = SD_COLUMNS.count(",") + 1
SERDE_JOIN = " LEFT JOIN metastore.SERDES se ON se.SERDE_ID = s.SERDE_ID"
_SDS = f"SELECT {SD_COLUMNS} FROM metastore.SDS s{SERDE_JOIN} WHERE s.SD_ID IN ({{}})"
# The child tables of SDS (table -> its SD_ID column) that most descriptors have no rows in.
_SD_CHILDREN = {"SD_PARAMS": "SD_ID", "BUCKETING_COLS": "SD_ID", "SORT_COLS": "SD_ID",
                "SKEWED_COL_NAMES": "SD_ID", "SKEWED_VALUES": "SD_ID_OID", "SKEWED_COL_VALUE_LOC_MAP": "SD_ID"}


def insert_columns(tx, cols: Sequence | None) -> int:
    tx.execute("INSERT INTO metastore.CDS () VALUES ()")
    cd_id = tx.lastrowid
    tx.executemany("INSERT INTO metastore.COLUMNS_V2 (CD_ID, `COMMENT`, COLUMN_NAME, TYPE_NAME, INTEGER_IDX)"
                   " VALUES (%s, %s, %s, %s, %s)",
                   [(cd_id, (c.comment or None) and c.comment[:COMMENT_MAX], (c.name or "").lower(), c.type, i)
                    for i, c in enumerate(cols or [])])
    return cd_id


def same_columns(a: Sequence | None, b: Sequence | None) -> bool:
    def key(cols):
        return [((c.name or "").lower(), c.type, c.comment or None) for c in cols or []]
    return key(a) == key(b)


def _insert_serdes(tx, serdes: Sequence) -> list[int]:
    serdes = [serde or api.SerDeInfo() for serde in serdes]
    serde_ids = insert_returning(tx, "SERDES", ("NAME", "SLIB"), [(s.name, s.serializationLib) for s in serdes],
                                 "SERDE_ID")
    insert_many_params(tx, "SERDE_PARAMS", "SERDE_ID", [(i, s.parameters) for i, s in zip(serde_ids, serdes)])
    return serde_ids


def insert_many_params(tx, table: str, id_column: str, owners: Iterable[tuple[int, dict | None]]) -> None:
    """The parameters of several owners (id, params), in one statement."""
    tx.executemany(f"INSERT INTO metastore.{table} ({id_column}, PARAM_KEY, PARAM_VALUE) VALUES (%s, %s, %s)",
                   [(ident, k, v) for ident, params in owners for k, v in (params or {}).items()])


def insert_params(tx, table: str, id_column: str, ident: int, params: dict | None) -> None:
    insert_many_params(tx, table, id_column, [(ident, params)])


def replace_params(tx, table: str, id_column: str, ident: int, params: dict | None) -> None:
    tx.execute(f"DELETE FROM metastore.{table} WHERE {id_column}=%s", (ident,))
    insert_params(tx, table, id_column, ident, params)


def insert_sd(tx, sd, inode_key: tuple | None, cd_id: int | None = None) -> int:
    """Insert a storage descriptor (and its column descriptor unless ``cd_id``); returns SD_ID."""
    return insert_sds(tx, [(sd, inode_key, cd_id)])[0]


def insert_sds(tx, entries: Sequence[tuple]) -> list[int]:
    """Insert storage descriptors given as (sd, inode key, CD_ID or None for columns of its
    own), with their serdes and children, in a few statements whatever their number (adding
    1,000 partitions took 5,000 statements before); returns the SD_IDs in order."""
    sds = [sd or api.StorageDescriptor() for sd, _, _ in entries]
    cd_ids = [cd_id if cd_id is not None else insert_columns(tx, sd.cols) for sd, (_, _, cd_id) in zip(sds, entries)]
    serde_ids = _insert_serdes(tx, [sd.serdeInfo for sd in sds])
    sd_ids = insert_returning(
        tx, "SDS", ("CD_ID", "INPUT_FORMAT", "IS_COMPRESSED", "IS_STOREDASSUBDIRECTORIES", "LOCATION", "NUM_BUCKETS",
                    "OUTPUT_FORMAT", "SERDE_ID", "PARTITION_ID", "PARENT_ID", "NAME"),
        [(cd_id, sd.inputFormat, bool(sd.compressed), bool(sd.storedAsSubDirectories), sd.location or None,
          sd.numBuckets if sd.numBuckets is not None else -1, sd.outputFormat, serde_id, *(key or (None, None, None)))
         for sd, (_, key, _), cd_id, serde_id in zip(sds, entries, cd_ids, serde_ids)], "SD_ID")
    _insert_children(tx, list(zip(sd_ids, sds)))
    return sd_ids


def insert_location_sd(tx, location: str | None, inode_key: tuple | None) -> int:
    """A database's descriptor: only the location and the inode key (thesis 3.1.2.1)."""
    key = inode_key or (None, None, None)
    tx.execute("INSERT INTO metastore.SDS (LOCATION, PARTITION_ID, PARENT_ID, NAME) VALUES (%s, %s, %s, %s)",
               (location, *key))
    return tx.lastrowid


def _insert_children(tx, described: Sequence[tuple[int, object]]) -> None:
    """Parameters, bucketing, sorting and skew of (SD_ID, sd) pairs."""
    insert_many_params(tx, "SD_PARAMS", "SD_ID", [(sd_id, sd.parameters) for sd_id, sd in described])
    tx.executemany("INSERT INTO metastore.BUCKETING_COLS (SD_ID, BUCKET_COL_NAME, INTEGER_IDX) VALUES (%s, %s, %s)",
                   [(sd_id, c, i) for sd_id, sd in described for i, c in enumerate(sd.bucketCols or [])])
    tx.executemany("INSERT INTO metastore.SORT_COLS (SD_ID, COLUMN_NAME, `ORDER`, INTEGER_IDX) VALUES (%s, %s, %s, %s)",
                   [(sd_id, o.col, o.order if o.order is not None else 1, i)
                    for sd_id, sd in described for i, o in enumerate(sd.sortCols or [])])
    for sd_id, sd in described:
        if sd.skewedInfo:
            _insert_skew(tx, sd_id, sd.skewedInfo)


def _insert_skew(tx, sd_id: int, skew) -> None:
    tx.executemany("INSERT INTO metastore.SKEWED_COL_NAMES (SD_ID, SKEWED_COL_NAME, INTEGER_IDX) VALUES (%s, %s, %s)",
                   [(sd_id, c, i) for i, c in enumerate(skew.skewedColNames or [])])
    for i, values in enumerate(skew.skewedColValues or []):
        list_id = _insert_string_list(tx, values)
        tx.execute("INSERT INTO metastore.SKEWED_VALUES (SD_ID_OID, STRING_LIST_ID_EID, INTEGER_IDX) VALUES (%s, %s, %s)",
                   (sd_id, list_id, i))
    for values, location in (skew.skewedColValueLocationMaps or {}).items():
        list_id = _insert_string_list(tx, values)
        tx.execute("INSERT INTO metastore.SKEWED_COL_VALUE_LOC_MAP (SD_ID, STRING_LIST_ID_KID, LOCATION)"
                   " VALUES (%s, %s, %s)", (sd_id, list_id, location))


def _insert_string_list(tx, values: Iterable[str]) -> int:
    tx.execute("INSERT INTO metastore.SKEWED_STRING_LIST () VALUES ()")
    list_id = tx.lastrowid
    tx.executemany("INSERT INTO metastore.SKEWED_STRING_LIST_VALUES (STRING_LIST_ID, STRING_LIST_VALUE, INTEGER_IDX)"
                   " VALUES (%s, %s, %s)", [(list_id, v, i) for i, v in enumerate(values)])
    return list_id


def update_sd(tx, sd_id: int, sd, inode_key: tuple | None, cd_id: int) -> None:
    """Rewrite a descriptor in place (same SD_ID, so its owner row is untouched)."""
    sd = sd or api.StorageDescriptor()
    row = tx.query_one("SELECT SERDE_ID FROM metastore.SDS WHERE SD_ID=%s", (sd_id,))
    serde = sd.serdeInfo or api.SerDeInfo()
    if row and row[0] is not None:
        serde_id = row[0]
        tx.execute("UPDATE metastore.SERDES SET NAME=%s, SLIB=%s WHERE SERDE_ID=%s",
                   (serde.name, serde.serializationLib, serde_id))
        replace_params(tx, "SERDE_PARAMS", "SERDE_ID", serde_id, serde.parameters)
    else:
        serde_id = _insert_serdes(tx, [serde])[0]
    key = inode_key or (None, None, None)
    tx.execute("UPDATE metastore.SDS SET CD_ID=%s, INPUT_FORMAT=%s, IS_COMPRESSED=%s, IS_STOREDASSUBDIRECTORIES=%s,"
               " LOCATION=%s, NUM_BUCKETS=%s, OUTPUT_FORMAT=%s, SERDE_ID=%s, PARTITION_ID=%s, PARENT_ID=%s, NAME=%s"
               " WHERE SD_ID=%s",
               (cd_id, sd.inputFormat, bool(sd.compressed), bool(sd.storedAsSubDirectories), sd.location or None,
                sd.numBuckets if sd.numBuckets is not None else -1, sd.outputFormat, serde_id, *key, sd_id))
    lists = _delete_children(tx, [sd_id])
    _insert_children(tx, [(sd_id, sd)])
    _delete_string_lists(tx, lists)


def _delete_children(tx, sd_ids: Sequence[int]) -> list[int]:
    """Delete skew rows of these SDs (the rest cascades); returns string lists to delete."""
    lists = [r[0] for r in query_in(tx, "SELECT STRING_LIST_ID_EID FROM metastore.SKEWED_VALUES"
                                        " WHERE SD_ID_OID IN ({})", sd_ids)]
    lists += [r[0] for r in query_in(tx, "SELECT STRING_LIST_ID_KID FROM metastore.SKEWED_COL_VALUE_LOC_MAP"
                                         " WHERE SD_ID IN ({})", sd_ids)]
    if lists:
        execute_in(tx, "DELETE FROM metastore.SKEWED_VALUES WHERE SD_ID_OID IN ({})", sd_ids)
        execute_in(tx, "DELETE FROM metastore.SKEWED_COL_VALUE_LOC_MAP WHERE SD_ID IN ({})", sd_ids)
    for table in ("SD_PARAMS", "BUCKETING_COLS", "SORT_COLS", "SKEWED_COL_NAMES"):
        execute_in(tx, f"DELETE FROM metastore.{table} WHERE SD_ID IN ({{}})", sd_ids)
    return lists


def _delete_string_lists(tx, lists: Sequence[int]) -> None:
    execute_in(tx, "DELETE FROM metastore.SKEWED_STRING_LIST WHERE STRING_LIST_ID IN ({})", lists)


def delete_sds(tx, sd_ids: Sequence[int]) -> None:
    """Delete descriptors -- which cascades to the objects owning them -- and the serdes,
    skew lists and (now unreferenced) column descriptors they used."""
    if not sd_ids:
        return
    refs = query_in(tx, "SELECT SERDE_ID, CD_ID FROM metastore.SDS WHERE SD_ID IN ({})", sd_ids)
    lists = _delete_children(tx, sd_ids)
    execute_in(tx, "DELETE FROM metastore.SDS WHERE SD_ID IN ({})", sd_ids)
    execute_in(tx, "DELETE FROM metastore.SERDES WHERE SERDE_ID IN ({})", [r[0] for r in refs if r[0] is not None])
    _delete_string_lists(tx, lists)
    delete_unused_cds(tx, [r[1] for r in refs if r[1] is not None])


def delete_unused_cds(tx, cd_ids: Iterable[int]) -> None:
    execute_in(tx, "DELETE FROM metastore.CDS WHERE CD_ID IN ({}) AND NOT EXISTS"
                   " (SELECT 1 FROM metastore.SDS s WHERE s.CD_ID = CDS.CD_ID)", cd_ids)


def load_columns(tx, cd_ids: Iterable[int]) -> dict[int, list]:
    columns: dict[int, list] = defaultdict(list)
    for cd_id, name, type_name, comment in query_in(
            tx, "SELECT CD_ID, COLUMN_NAME, TYPE_NAME, `COMMENT` FROM metastore.COLUMNS_V2"
                " WHERE CD_ID IN ({}) ORDER BY CD_ID, INTEGER_IDX", cd_ids):
        columns[cd_id].append(api.FieldSchema(name, type_name, comment))
    return columns


def load_params(tx, table: str, id_column: str, ids: Iterable[int]) -> dict[int, dict]:
    params: dict[int, dict] = defaultdict(dict)
    for ident, key, value in query_in(tx, f"SELECT {id_column}, PARAM_KEY, PARAM_VALUE FROM metastore.{table}"
                                          f" WHERE {id_column} IN ({{}})", ids):
        params[ident][key] = value
    return params


def load_sds(tx, sd_ids: Sequence[int], columns_cache: dict[int, list] | None = None) -> dict[int, object]:
    """StorageDescriptors by SD_ID (missing ids are absent)."""
    return build_sds(tx, query_in(tx, _SDS, sd_ids), columns_cache)


def build_sds(tx, rows: Sequence[tuple], columns_cache: dict[int, list] | None = None) -> dict[int, object]:
    """StorageDescriptors by SD_ID from rows of SD_COLUMNS, with their columns, parameters,
    bucketing, sorting and skew read here (columns once per column descriptor)."""
    if not rows:
        return {}
    cache = columns_cache if columns_cache is not None else {}
    missing_cds = {r[1] for r in rows if r[1] is not None and r[1] not in cache}
    cache.update(load_columns(tx, missing_cds))
    serde_params = load_params(tx, "SERDE_PARAMS", "SERDE_ID", [r[8] for r in rows if r[8] is not None])
    ids = [r[0] for r in rows]
    present = _children_present(tx, ids)
    sd_params = load_params(tx, "SD_PARAMS", "SD_ID", ids) if "SD_PARAMS" in present else {}
    buckets: dict[int, list] = defaultdict(list)
    if "BUCKETING_COLS" in present:
        for sd_id, name in query_in(tx, "SELECT SD_ID, BUCKET_COL_NAME FROM metastore.BUCKETING_COLS"
                                        " WHERE SD_ID IN ({}) ORDER BY SD_ID, INTEGER_IDX", ids):
            buckets[sd_id].append(name)
    sorts: dict[int, list] = defaultdict(list)
    if "SORT_COLS" in present:
        for sd_id, name, order in query_in(tx, "SELECT SD_ID, COLUMN_NAME, `ORDER` FROM metastore.SORT_COLS"
                                               " WHERE SD_ID IN ({}) ORDER BY SD_ID, INTEGER_IDX", ids):
            sorts[sd_id].append(api.Order(name, order))
    skews = _load_skew(tx, ids, present)
    result = {}
    for (sd_id, cd_id, input_format, compressed, subdirs, location, buckets_n, output_format, serde_id,
         serde_name, slib) in rows:
        result[sd_id] = api.StorageDescriptor(
            cols=list(cache.get(cd_id, [])), location=location, inputFormat=input_format,
            outputFormat=output_format, compressed=bit(compressed), numBuckets=buckets_n,
            serdeInfo=api.SerDeInfo(name=serde_name, serializationLib=slib, parameters=serde_params.get(serde_id, {})),
            bucketCols=buckets.get(sd_id, []), sortCols=sorts.get(sd_id, []), parameters=sd_params.get(sd_id, {}),
            skewedInfo=skews.get(sd_id) or api.SkewedInfo([], [], {}), storedAsSubDirectories=bit(subdirs))
    return result


def _children_present(tx, ids: Sequence[int]) -> set[str]:
    """The child tables of SDS holding rows for SD_IDs between min(ids) and max(ids): one
    probe of each table's index instead of a query with the whole id list per table, where
    most find nothing (listing 10k partitions spent 35 ms on six empty tables)."""
    probes = " UNION ALL ".join(f"(SELECT '{table}' FROM metastore.{table} WHERE {column} BETWEEN %s AND %s LIMIT 1)"
                                for table, column in _SD_CHILDREN.items())
    return {row[0] for row in tx.query(probes, (min(ids), max(ids)) * len(_SD_CHILDREN))}


def _load_skew(tx, ids: Sequence[int], present: set[str]) -> dict[int, object]:
    names: dict[int, list] = defaultdict(list)
    if "SKEWED_COL_NAMES" in present:
        for sd_id, name in query_in(tx, "SELECT SD_ID, SKEWED_COL_NAME FROM metastore.SKEWED_COL_NAMES"
                                        " WHERE SD_ID IN ({}) ORDER BY SD_ID, INTEGER_IDX", ids):
            names[sd_id].append(name)
    values = query_in(tx, "SELECT SD_ID_OID, STRING_LIST_ID_EID FROM metastore.SKEWED_VALUES"
                          " WHERE SD_ID_OID IN ({}) ORDER BY SD_ID_OID, INTEGER_IDX",
                      ids) if "SKEWED_VALUES" in present else []
    locations = query_in(tx, "SELECT SD_ID, STRING_LIST_ID_KID, LOCATION FROM metastore.SKEWED_COL_VALUE_LOC_MAP"
                             " WHERE SD_ID IN ({})", ids) if "SKEWED_COL_VALUE_LOC_MAP" in present else []
    if not names and not values and not locations:
        return {}
    list_ids = [r[1] for r in values] + [r[1] for r in locations]
    lists: dict[int, list] = defaultdict(list)
    for list_id, value in query_in(tx, "SELECT STRING_LIST_ID, STRING_LIST_VALUE FROM metastore.SKEWED_STRING_LIST_VALUES"
                                       " WHERE STRING_LIST_ID IN ({}) ORDER BY STRING_LIST_ID, INTEGER_IDX", list_ids):
        lists[list_id].append(value)
    result: dict[int, object] = {}
    for sd_id in set(names) | {r[0] for r in values} | {r[0] for r in locations}:
        result[sd_id] = api.SkewedInfo(names.get(sd_id, []), [], {})
    for sd_id, list_id in values:
        result[sd_id].skewedColValues.append(lists.get(list_id, []))
    for sd_id, list_id, location in locations:
        result[sd_id].skewedColValueLocationMaps[tuple(lists.get(list_id, []))] = location
    return result
