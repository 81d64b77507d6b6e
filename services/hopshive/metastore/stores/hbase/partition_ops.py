"""The HBase store's partitions (a part of ``HBaseStore``, which it relies on for ``_hb``,
``_table``, ``_put``, ``_moving``, descriptors and the statistics it moves): adds,
reads by values, names and filters (the planner's Gets and Scans), alters, renames, drops.
Row layout and the order of operations: ``hbase_store``'s module docstring."""

from __future__ import annotations

import copy
import logging
from collections import Counter
from typing import Mapping, Sequence

from ...api import api
from ...exceptions import AlreadyExists, InvalidInput, InvalidObject, MetastoreError, NoSuchObject
from ...filter import FilterError, KeyColumn, compile_value_sets
from ...filter.keytypes import key_type
from ...locations import Locations, replace_prefix
from ...names import make_part_name, parse_part_name
from ..mysql.tables import is_managed
from . import calls as hbase_calls, explain, planner, records, rowkey
from .records import RECORD as OBJ, Record, changed, decode, now, string_key

log = logging.getLogger("hopshive.metastore.hbase")


class PartitionOps:
    @staticmethod
    def _part_range(db_name: str, table_name: str) -> tuple[bytes, bytes]:
        prefix = rowkey.table_prefix(db_name, table_name)
        return prefix, rowkey.prefix_successor(prefix)

    def _check_values(self, table, values) -> list[str]:
        values = list(values or [])
        keys = table.partitionKeys or []
        if not keys:
            raise InvalidObject(f"table {table.dbName}.{table.tableName} is not partitioned")
        if len(values) != len(keys) or any(v is None for v in values):
            raise InvalidObject(f"partition values {values} do not match the partition keys {[k.name for k in keys]}")
        return values

    @staticmethod
    def _kinds(table) -> list:
        return [key_type(k.type) for k in table.partitionKeys or []]

    def _part_key(self, table, values) -> bytes:
        return rowkey.row_key(table.dbName, table.tableName, self._kinds(table), values)

    def _partitions(self, t, found: list[Record]) -> list:
        blobs = self._load_sds(t, [r.sd for r in found])
        return [self._with_sd(decode(api.Partition, r.blob), blobs, r) for r in found]

    @staticmethod
    def _part_rows(rows) -> list[tuple[bytes, Record]]:
        return [(key, Record.of(data)) for key, data in rows]

    def add_partitions(self, db_name: str, table_name: str, parts: Sequence, dirs, if_not_exists: bool) -> list:
        def work(t):
            table = self._table(t, db_name, table_name)
            names = [k.name for k in table.partitionKeys or []]
            wanted = [(self._part_key(table, values), make_part_name(names, values), values, part)
                      for part in parts for values in [self._check_values(table, part.values)]]
            existing = {key for key, _ in t("parts").rows([w[0] for w in wanted], columns=[OBJ])} if wanted else set()
            new, seen = [], set()
            for key, name, values, part in wanted:
                if key in seen or key in existing:
                    if if_not_exists:
                        continue
                    raise AlreadyExists(f"Partition already exists: {db_name}.{table_name} {name}")
                seen.add(key)
                new.append((key, name, self._new_partition(table, name, values, part)))
            managed = is_managed(table.tableType)
            self._dirs(lambda tx: [dirs.link(tx, p.sd.location, create=True, foreign_ok=not managed)
                                   for _, _, p in new])
            shared = [self._shared(p.sd) for _, _, p in new]
            digests = {blob: records.acquire(t("sds"), blob, count)     # one increment per descriptor
                       for blob, count in Counter(blob for blob, _ in shared).items()}
            added = []
            for (key, name, part), (blob, location) in zip(new, shared):
                if self._put(t, "parts", key, part, None, name, (digests[blob], location)):
                    added.append((key, part))
                elif not if_not_exists:     # another instance added it meanwhile: undo ours
                    for made, _ in added:
                        self._release_sd(t, Record.of(t("parts").row(made)).sd)
                        t("parts").delete(made)
                    raise AlreadyExists(f"Partition already exists: {db_name}.{table_name} {name}")
            self._attached(t, db_name, table_name, [key for key, _ in added])
            return [p for _, p in added]
        with self._writing(db_name, table_name):
            return self._hb(work)

    def _attached(self, t, db_name: str, table_name: str, keys) -> None:
        """After creating partition rows: if their table was dropped meanwhile, take them
        back.  A drop deletes the table row before it scans the partitions, so either the drop
        sees ours or we see the table gone -- no partition outlives its table."""
        if not keys or t("tbls").row(string_key(db_name) + string_key(table_name), columns=[OBJ]):
            return
        for key in keys:
            record = Record.of(t("parts").row(key))
            if record is not None:
                t("parts").delete(key)
                self._release_sd(t, record.sd)
        raise NoSuchObject(f"Table {db_name}.{table_name} was dropped meanwhile")

    @staticmethod
    def _new_partition(table, name: str, values: list, part):
        part = copy.copy(part)
        part.values, part.dbName, part.tableName = values, table.dbName, table.tableName
        part.createTime = part.createTime or now()
        part.sd = copy.deepcopy(part.sd) if part.sd else api.StorageDescriptor(cols=table.sd.cols if table.sd else [])
        if not part.sd.location:
            if not (table.sd and table.sd.location):
                raise InvalidObject(f"partition {name} has no location and its table none to derive it from")
            part.sd.location = Locations.child(table.sd.location, name)
        part.parameters = part.parameters or {}
        return part

    def get_partition(self, db_name: str, table_name: str, values: Sequence[str]):
        def work(t):
            table = self._table(t, db_name, table_name)
            record = Record.of(t("parts").row(self._part_key(table, self._check_values(table, values))))
            if record is None:
                raise NoSuchObject(f"partition values={list(values)} of table {db_name}.{table_name} does not exist")
            return self._partitions(t, [record])[0]
        return self._hb(work)

    def _all_rows(self, t, db_name: str, table_name: str) -> list[tuple[bytes, Record]]:
        return self._part_rows(self._scan(t("parts"), *self._part_range(db_name, table_name)))

    @staticmethod
    def _by_name(found, max_parts: int) -> list[Record]:
        """Records in partition-name order, at most ``max_parts`` (negative: all)."""
        found = sorted(found, key=lambda r: r.name)
        return found[:max_parts] if max_parts is not None and max_parts >= 0 else found

    def _select(self, t, table, keep, max_parts: int) -> list:
        found = [r for _, r in self._all_rows(t, table.dbName, table.tableName)
                 if keep(decode(api.Partition, r.blob).values)]
        return self._partitions(t, self._by_name(found, max_parts))

    def get_partitions(self, db_name: str, table_name: str, max_parts: int = -1,
                       partial_values: Sequence[str] | None = None, names: Sequence[str] | None = None) -> list:
        def work(t):
            table = self._table(t, db_name, table_name)
            if names is not None:
                keys = [k.name for k in table.partitionKeys or []]
                wanted = []
                for name in names:
                    try:
                        wanted.append(self._part_key(table, parse_part_name(name, keys)))
                    except (ValueError, InvalidObject, MetastoreError):
                        continue
                rows = self._part_rows(t("parts").rows(list(dict.fromkeys(wanted)))) if wanted else []
                return self._partitions(t, self._by_name([r for _, r in rows], max_parts))
            return self._select(t, table, _partial(partial_values), max_parts)
        return self._hb(work)

    def get_partition_names(self, db_name: str, table_name: str, max_parts: int = -1,
                            partial_values: Sequence[str] | None = None) -> list[str]:
        return [make_part_name([k.name for k in self.get_table(db_name, table_name).partitionKeys], p.values)
                for p in self.get_partitions(db_name, table_name, max_parts, partial_values)]

    @staticmethod
    def plan(table, filter_text: str) -> tuple[planner.Plan, tuple]:
        """The planner's plan of ``filter_text`` for ``table`` and the HBase calls that run it."""
        keys = tuple((k.name, k.type) for k in table.partitionKeys or [])
        if not keys:
            raise InvalidInput(f"table {table.dbName}.{table.tableName} is not partitioned: no filter applies")
        try:
            return hbase_calls.plan_calls(filter_text, keys, rowkey.table_prefix(table.dbName, table.tableName))
        except FilterError as exc:
            raise InvalidInput(str(exc)) from None

    def explain(self, db_name: str, table_name: str, filter_text: str) -> str:
        """The plan of a filter: the seed's notation, then each HBase call in values."""
        return explain.render(*self.plan(self.get_table(db_name, table_name), filter_text))

    def _filtered_rows(self, t, table, filter_text: str) -> list[Record]:
        if not filter_text or not filter_text.strip():
            return [r for _, r in self._all_rows(t, table.dbName, table.tableName)]
        plan, calls = self.plan(table, filter_text)
        if log.isEnabledFor(logging.DEBUG):
            log.debug("partition filter plan", extra={"table": f"{table.dbName}.{table.tableName}",
                                                      "filter": filter_text, "plan": explain.render(plan, calls)})
        found: dict[bytes, Record] = {}
        for call in calls:
            if call.kind == "get":
                found.update(self._part_rows(t("parts").rows(list(call.rows))))
                continue
            check = hbase_calls.residual_predicate(call, plan.generator.kinds)
            for key, record in self._part_rows(self._scan(t("parts"), call.start, call.stop, call.filter)):
                if check is None or check(decode(api.Partition, record.blob).values):
                    found[key] = record
        return list(found.values())

    def get_partitions_by_filter(self, db_name: str, table_name: str, filter_text: str, max_parts: int = -1) -> list:
        def work(t):
            table = self._table(t, db_name, table_name)
            return self._partitions(t, self._by_name(self._filtered_rows(t, table, filter_text), max_parts))
        return self._hb(work)

    def count_partitions_by_filter(self, db_name: str, table_name: str, filter_text: str) -> int:
        return self._hb(lambda t: len(self._filtered_rows(t, self._table(t, db_name, table_name), filter_text)))

    def get_partitions_by_value_sets(self, db_name: str, table_name: str, value_sets: Mapping[str, Sequence[str]],
                                     max_parts: int = -1) -> list:
        def work(t):
            table = self._table(t, db_name, table_name)
            try:
                compiled = compile_value_sets(value_sets, [KeyColumn(k.name.lower(), k.type, "")
                                                           for k in table.partitionKeys or []])
            except FilterError as exc:
                raise InvalidInput(str(exc)) from None
            return self._select(t, table, compiled.matches, max_parts)
        return self._hb(work)

    def alter_partitions(self, db_name: str, table_name: str, parts: Sequence, dirs) -> None:
        def work(t):
            table = self._table(t, db_name, table_name)
            keys = [k.name for k in table.partitionKeys or []]
            managed = is_managed(table.tableType)
            created = []
            for part in parts:
                values = self._check_values(table, part.values)
                key, name = self._part_key(table, values), make_part_name(keys, values)
                record = Record.of(t("parts").row(key))
                if record is None:
                    new = self._new_partition(table, name, values, part)
                    self._dirs(lambda tx: dirs.link(tx, new.sd.location, create=True, foreign_ok=not managed))
                    if not self._put(t, "parts", key, new, None, name):
                        raise changed(f"Partition {name} of {db_name}.{table_name}")
                    created.append(key)
                    continue
                old = self._partitions(t, [record])[0]
                updated = copy.copy(part)
                updated.values, updated.dbName, updated.tableName = values, db_name, table_name
                updated.createTime = old.createTime
                updated.sd = copy.deepcopy(part.sd) if part.sd else old.sd
                if updated.sd is not None:
                    if updated.sd.location and old.sd and updated.sd.location != old.sd.location:
                        location = updated.sd.location
                        self._dirs(lambda tx: dirs.link(tx, location, create=True, foreign_ok=not managed))
                    updated.sd.location = updated.sd.location or (old.sd.location if old.sd else None)
                if not self._put(t, "parts", key, updated, record.raw, name):
                    raise changed(f"Partition {name} of {db_name}.{table_name}")
                self._release_sd(t, record.sd)
            self._attached(t, db_name, table_name, created)
        with self._writing(db_name, table_name):
            self._hb(work)

    def rename_partition(self, db_name: str, table_name: str, values: Sequence[str], new_part, dirs) -> None:
        def work(t):
            table = self._table(t, db_name, table_name)
            keys = [k.name for k in table.partitionKeys or []]
            old_values = self._check_values(table, values)
            new_values = self._check_values(table, new_part.values)
            old_key, new_key = self._part_key(table, old_values), self._part_key(table, new_values)
            record = Record.of(t("parts").row(old_key))
            if record is None:
                raise NoSuchObject(f"partition {make_part_name(keys, old_values)} of table {db_name}.{table_name}"
                                   " does not exist")
            new_name = make_part_name(keys, new_values)
            exists = AlreadyExists(f"Partition already exists: {db_name}.{table_name} {new_name}")
            if new_key != old_key and t("parts").row(new_key, columns=[OBJ]):
                raise exists
            old = self._partitions(t, [record])[0]
            part = copy.copy(new_part)
            part.values, part.dbName, part.tableName = new_values, db_name, table_name
            part.sd = copy.deepcopy(new_part.sd) if new_part.sd else copy.deepcopy(old.sd)
            old_location = old.sd.location if old.sd else None
            with self._moving() as in_move:
                if is_managed(table.tableType) and old_location and table.sd and table.sd.location:
                    target = Locations.child(table.sd.location, new_name)
                    if in_move(lambda tx: dirs.rename(tx, old_location, target, lambda *a: None), target) \
                            or part.sd.location == old_location:
                        part.sd.location = target
                part.sd.location = part.sd.location or old_location
                if not self._put(t, "parts", new_key, part, None if new_key != old_key else record.raw, new_name):
                    if new_key != old_key:
                        raise exists
                    raise changed(f"Partition {new_name} of {db_name}.{table_name}")
                if new_key != old_key:
                    t("parts").delete(old_key)
                    self._move_stats(t, db_name, table_name, db_name, table_name, make_part_name(keys, old_values),
                                     new_name)
                    self._attached(t, db_name, table_name, [new_key])
                self._release_sd(t, record.sd)
        with self._writing(db_name, table_name):
            self._hb(work)

    def drop_partitions(self, db_name: str, table_name: str, values_list: Sequence[Sequence[str]], dirs,
                        if_exists: bool = False, purge: bool = False) -> list:
        def work(t):
            table = self._table(t, db_name, table_name)
            keys = [k.name for k in table.partitionKeys or []]
            wanted = {}
            for values in values_list:
                checked = self._check_values(table, values)
                wanted[self._part_key(table, checked)] = make_part_name(keys, checked)
            found = dict(self._part_rows(t("parts").rows(list(wanted))))
            missing = [name for key, name in wanted.items() if key not in found]
            if missing and not if_exists:
                raise NoSuchObject(f"partition {missing[0]} of table {db_name}.{table_name} does not exist")
            dropped = self._partitions(t, list(found.values()))
            with t("parts").batch() as batch:
                for key in found:
                    batch.delete(key)
            for record in found.values():
                self._delete_stats(t, db_name, table_name, record.name)
                self._release_sd(t, record.sd)
            if dirs is not None and is_managed(table.tableType):
                table_location = table.sd.location if table.sd else None

                def remove(tx):
                    for part in dropped:
                        location = part.sd.location if part.sd else None
                        if not location or not dirs.delete(tx, location, table.owner, purge):
                            continue
                        if not table_location or replace_prefix(location, table_location, "") == location:
                            continue
                        parent = location.rstrip("/").rsplit("/", 1)[0]
                        while parent.rstrip("/") != table_location.rstrip("/") and \
                                parent.startswith(table_location.rstrip("/") + "/"):
                            if not dirs.delete_if_empty(tx, parent):
                                break
                            parent = parent.rsplit("/", 1)[0]
                self._dirs(remove)
            return sorted(dropped, key=lambda p: make_part_name(keys, p.values))
        with self._writing(db_name, table_name):
            dropped = self._hb(work)
            self._drop_index_partitions(db_name, table_name, [p.values for p in dropped], dirs, purge)
            return dropped


def _partial(partial_values: Sequence[str] | None):
    """A prefix spec ('' = any value) as a test on a partition's values."""
    spec = list(partial_values or [])

    def keep(values) -> bool:
        return all(want == "" or want == have for want, have in zip(spec, values))
    return keep
