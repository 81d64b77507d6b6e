"""Writing partitions: add (directory + metadata in one transaction), alter, rename (moves a
managed table's partition directory with ``repoint``) and drop.

alter_partition(s) of a partition that does not exist (any more) adds it.  Hive's own
INSERT OVERWRITE of a partition deletes the partition directory before renaming the new data
into place; the foreign key then removes the partition's metadata (the consistency rule for
directories deleted behind the metastore's back), and Hive finishes with alter_partition.
Re-creating the partition there makes that statement end with the partition present, as on
Apache Hive."""

from __future__ import annotations

import copy
from typing import Sequence

from ...api import api
from ...exceptions import AlreadyExists, InvalidObject, NoSuchObject
from ...filter import typed_shadow_values
from ...locations import Locations, replace_prefix
from .partreads import TableInfo, name_hash
from .sds import (delete_sds, insert_columns, insert_many_params, insert_sds, replace_params, same_columns,
                  update_sd)
from .sql import insert_returning, now, query_in


class PartitionWrites:
    def _existing(self, tx, info: TableInfo, names: Sequence[str]) -> dict[str, tuple]:
        """name -> (PART_ID, SD_ID, LOCATION) of the partitions among ``names`` that exist."""
        hashes = {name_hash(n): n for n in names}
        rows = query_in(tx, "SELECT p.PART_NAME_HASH, p.PART_ID, p.SD_ID, s.LOCATION FROM metastore.PARTITIONS p"
                            " LEFT JOIN metastore.SDS s ON s.SD_ID=p.SD_ID WHERE p.TBL_ID=%s AND p.PART_NAME_HASH IN ({})",
                        list(hashes), (info.row.tbl_id,))
        return {hashes[bytes(h)]: (part_id, sd_id, location) for h, part_id, sd_id, location in rows}

    def _check_values(self, info: TableInfo, values: Sequence[str] | None) -> list[str]:
        values = list(values or [])
        if not info.keys:
            raise InvalidObject(f"table {info.row.db_name}.{info.row.name} is not partitioned")
        if len(values) != len(info.keys) or any(v is None for v in values):
            raise InvalidObject(f"partition values {values} do not match the partition keys {info.key_names}")
        return values

    def _key_rows(self, info: TableInfo, part_id: int, values: Sequence[str]) -> list[tuple]:
        rows = []
        for i, (key, value) in enumerate(zip(info.keys, values)):
            number, day = typed_shadow_values(key.type, value)
            rows.append((part_id, info.row.tbl_id, value, number, day, i))
        return rows

    def _insert_key_values(self, tx, rows: list[tuple]) -> None:
        tx.executemany("INSERT INTO metastore.PARTITION_KEY_VALS (PART_ID, TBL_ID, PART_KEY_VAL, PART_KEY_VAL_NUM,"
                       " PART_KEY_VAL_DATE, INTEGER_IDX) VALUES (%s, %s, %s, %s, %s, %s)", rows)

    def _cd_for(self, tx, info: TableInfo, cols) -> int:
        return info.cd_id if info.cd_id is not None and same_columns(cols, info.cols) else insert_columns(tx, cols)

    # ----------------------------------------------------------------------- add
    def add_partitions(self, db_name: str, table_name: str, parts: Sequence, dirs, if_not_exists: bool) -> list:
        def work(tx):
            info = self._table_info(tx, db_name, table_name, " FOR UPDATE")
            named = [(self._check_values(info, p.values), p) for p in parts]
            names = [info.part_name(values) for values, _ in named]
            existing = self._existing(tx, info, names)
            new, seen = [], set()
            for name, (values, part) in zip(names, named):
                if name in existing or name in seen:
                    if if_not_exists:
                        continue
                    raise AlreadyExists(f"Partition already exists: {db_name}.{table_name} {name}")
                seen.add(name)
                new.append(self._new_partition(tx, info, name, values, part, dirs))
            return self._insert_partitions(tx, info, new)
        return self._write(work, duplicate=f"Partition already exists in {db_name}.{table_name}")

    def _new_partition(self, tx, info: TableInfo, name: str, values: list, part, dirs) -> tuple:
        """(name, the partition as stored, its directory's inode key): the directory exists
        (created if missing) and is locked; the metadata is _insert_partitions's."""
        part = copy.copy(part)
        part.values, part.dbName, part.tableName = values, info.row.db_name, info.row.name
        part.createTime = part.createTime or now()
        part.sd = copy.deepcopy(part.sd) if part.sd else api.StorageDescriptor(cols=info.cols)
        if not part.sd.location:
            if not info.location:
                raise InvalidObject(f"partition {name} has no location and its table none to derive it from")
            part.sd.location = Locations.child(info.location, name)
        return name, part, dirs.link(tx, part.sd.location, create=True, foreign_ok=not info.managed)

    def _insert_partitions(self, tx, info: TableInfo, new: Sequence[tuple]) -> list:
        """The metadata of _new_partition's partitions, a few statements for all of them."""
        sd_ids = insert_sds(tx, [(part.sd, key, self._cd_for(tx, info, part.sd.cols)) for _, part, key in new])
        part_ids = insert_returning(
            tx, "PARTITIONS", ("CREATE_TIME", "LAST_ACCESS_TIME", "PART_NAME", "SD_ID", "TBL_ID"),
            [(part.createTime, part.lastAccessTime or 0, name, sd_id, info.row.tbl_id)
             for (name, part, _), sd_id in zip(new, sd_ids)], "PART_ID")
        insert_many_params(tx, "PARTITION_PARAMS", "PART_ID", [(part_id, part.parameters)
                                                                for part_id, (_, part, _) in zip(part_ids, new)])
        self._insert_key_values(tx, [row for part_id, (_, part, _) in zip(part_ids, new)
                                     for row in self._key_rows(info, part_id, part.values)])
        return [part for _, part, _ in new]

    # --------------------------------------------------------------------- alter
    def alter_partitions(self, db_name: str, table_name: str, parts: Sequence, dirs) -> None:
        def work(tx):
            info = self._table_info(tx, db_name, table_name, " FOR UPDATE")
            names = [info.part_name(self._check_values(info, p.values)) for p in parts]
            existing = self._existing(tx, info, names)
            new = []
            for name, part in zip(names, parts):
                if name not in existing:
                    # Hive's loadPartition (INSERT OVERWRITE ... PARTITION) deletes the partition
                    # directory and renames the new one into place, which cascades the partition
                    # away; its closing alter_partition re-creates it here (see module doc).
                    new.append(self._new_partition(tx, info, name, list(part.values), part, dirs))
                    continue
                part_id, sd_id, old_location = existing[name]
                self._update_partition(tx, info, part_id, sd_id, old_location, part, dirs)
            self._insert_partitions(tx, info, new)
        self._write(work)

    def _update_partition(self, tx, info: TableInfo, part_id: int, sd_id: int, old_location: str | None, part,
                          dirs, key=None) -> None:
        sd = part.sd or api.StorageDescriptor(cols=info.cols)
        if key is None:
            if sd.location and sd.location != old_location:
                key = dirs.link(tx, sd.location, create=True, foreign_ok=not info.managed)
            else:
                sd.location = sd.location or old_location
                key = self._sd_key(tx, sd_id)
        old_cd = tx.query_one("SELECT CD_ID FROM metastore.SDS WHERE SD_ID=%s", (sd_id,))[0]
        current = info.cols if old_cd == info.cd_id else None
        keep = old_cd is not None and current is not None and same_columns(sd.cols, current)
        cd_id = old_cd if keep else self._cd_for(tx, info, sd.cols)
        update_sd(tx, sd_id, sd, key, cd_id)
        if cd_id != old_cd and old_cd is not None:
            tx.execute("DELETE FROM metastore.CDS WHERE CD_ID=%s AND NOT EXISTS"
                       " (SELECT 1 FROM metastore.SDS s WHERE s.CD_ID=%s)", (old_cd, old_cd))
        tx.execute("UPDATE metastore.PARTITIONS SET LAST_ACCESS_TIME=%s WHERE PART_ID=%s",
                   (part.lastAccessTime or 0, part_id))
        replace_params(tx, "PARTITION_PARAMS", "PART_ID", part_id, part.parameters)

    # -------------------------------------------------------------------- rename
    def rename_partition(self, db_name: str, table_name: str, values: Sequence[str], new_part, dirs) -> None:
        def work(tx):
            info = self._table_info(tx, db_name, table_name, " FOR UPDATE")
            old_name = info.part_name(self._check_values(info, values))
            new_values = self._check_values(info, new_part.values)
            new_name = info.part_name(new_values)
            found = self._existing(tx, info, [old_name, new_name])
            if old_name not in found:
                raise NoSuchObject(f"partition {old_name} of table {db_name}.{table_name} does not exist")
            if new_name in found and new_name != old_name:
                raise AlreadyExists(f"Partition already exists: {db_name}.{table_name} {new_name}")
            part_id, sd_id, old_location = found[old_name]
            part = copy.copy(new_part)
            part.sd = copy.deepcopy(new_part.sd) if new_part.sd else api.StorageDescriptor(cols=info.cols)
            key = None
            if info.managed and old_location and info.location:
                new_location = Locations.child(info.location, new_name)

                def repoint(t, old_key, new_key):
                    t.execute("UPDATE metastore.SDS SET PARTITION_ID=%s, PARENT_ID=%s, NAME=%s, LOCATION=%s"
                              " WHERE SD_ID=%s AND PARTITION_ID=%s AND PARENT_ID=%s AND NAME=%s",
                              (*new_key, new_location, sd_id, *old_key))
                if dirs.rename(tx, old_location, new_location, repoint):
                    part.sd.location = new_location
                    key = self._sd_key(tx, sd_id)
                elif part.sd.location == old_location:
                    part.sd.location = new_location
            tx.execute("UPDATE metastore.PARTITIONS SET PART_NAME=%s WHERE PART_ID=%s", (new_name, part_id))
            tx.execute("DELETE FROM metastore.PARTITION_KEY_VALS WHERE PART_ID=%s", (part_id,))
            self._insert_key_values(tx, self._key_rows(info, part_id, new_values))
            tx.execute("UPDATE metastore.PART_COL_STATS SET PARTITION_NAME=%s WHERE PART_ID=%s", (new_name, part_id))
            self._update_partition(tx, info, part_id, sd_id, old_location, part, dirs, key)
        self._write(work, duplicate=f"Partition already exists in {db_name}.{table_name}")

    # ---------------------------------------------------------------------- drop
    def drop_partitions(self, db_name: str, table_name: str, values_list: Sequence[Sequence[str]], dirs,
                        if_exists: bool = False, purge: bool = False) -> list:
        def work(tx):
            dropped = self._drop_partitions_tx(tx, db_name, table_name, values_list, dirs, if_exists, purge)
            if dropped:
                self._drop_index_partitions_tx(tx, db_name, table_name, [p.values for p in dropped], dirs, purge)
            return dropped
        return self._write(work)

    def _drop_partitions_tx(self, tx, db_name: str, table_name: str, values_list: Sequence[Sequence[str]], dirs,
                            if_exists: bool, purge: bool) -> list:
        info = self._table_info(tx, db_name, table_name, " FOR UPDATE")
        names = [info.part_name(self._check_values(info, v)) for v in values_list]
        found = self._existing(tx, info, names)
        missing = [n for n in names if n not in found]
        if missing and not if_exists:
            raise NoSuchObject(f"partition {missing[0]} of table {db_name}.{table_name} does not exist")
        rows = [found[n][:2] for n in dict.fromkeys(names) if n in found]
        dropped = self._load_partitions(
            tx, info, self._select(tx, info, self._by_ids([r[0] for r in rows]))) if rows else []
        delete_sds(tx, [sd for _, sd in rows if sd is not None])     # cascades to PARTITIONS and below
        if dirs is not None:
            for part in dropped:
                self._delete_partition_dir(tx, info, part.sd.location if part.sd else None, dirs, purge)
        return dropped

    @staticmethod
    def _delete_partition_dir(tx, info: TableInfo, location: str | None, dirs, purge: bool) -> None:
        if not location or not dirs.delete(tx, location, info.row.owner, purge):
            return
        if not info.location or replace_prefix(location, info.location, "") == location:
            return
        parent = location.rstrip("/").rsplit("/", 1)[0]
        while parent.rstrip("/") != info.location.rstrip("/") and parent.startswith(info.location.rstrip("/") + "/"):
            if not dirs.delete_if_empty(tx, parent):
                break
            parent = parent.rsplit("/", 1)[0]
