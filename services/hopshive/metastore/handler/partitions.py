"""Partition calls."""

from __future__ import annotations

from ..api import api
from ..exceptions import InvalidObject, Unsupported
from ..authorization import WRITE_ACCESS
from ..names import make_part_name, parse_part_name
from ..policy import env_flag, partition_from_table, prepare_partition


def _max(value) -> int:
    return -1 if value is None else int(value)


class PartitionCalls:
    def _keys(self, session, db_name, tbl_name) -> list[str]:
        return [k.name for k in self.readable_table(session, db_name, tbl_name).partitionKeys or []]

    def _writable_keys(self, session, db_name, tbl_name):
        """(partition key names, access) of a table the caller may change."""
        table, access = self.writable_table(session, db_name, tbl_name)
        return [k.name for k in table.partitionKeys or []], access

    def _placed(self, table, parts):
        """The partitions, after refusing locations no partition may have (the table's or its
        database's own directory, the warehouse and its parents).  The usual location, below
        the table's directory, needs no look at the database."""
        table_dir = self.table_dir(table)
        below = self.locations.child(table_dir, "") if table_dir else None
        for part in parts:
            location = part.sd.location if part.sd else None
            if location and not (below and location.startswith(below)):
                database = self.store.get_database(table.dbName).locationUri
                self.authorizer.check_placement(location, "partition", table_dir, database)
        return parts

    # --------------------------------------------------------------------- add
    def _add(self, session, parts, if_not_exists=False):
        if not parts:
            return []
        first = parts[0]
        db_name, tbl_name = self.n(first.dbName), self.n(first.tableName)
        if any(self.n(p.dbName) != db_name or self.n(p.tableName) != tbl_name for p in parts):
            raise InvalidObject("all partitions of one call must belong to the same table")
        table, access = self.writable_table(session, db_name, tbl_name)
        prepared = self._placed(table, [prepare_partition(p, db_name, tbl_name) for p in parts])
        return self.store.add_partitions(db_name, tbl_name, prepared, self.dirs(session, access), if_not_exists)

    def add_partition(self, session, new_part):
        return self._add(session, [new_part])[0]

    def add_partition_with_environment_context(self, session, new_part, environment_context):
        return self.add_partition(session, new_part)

    def add_partitions(self, session, new_parts):
        return len(self._add(session, new_parts or []))

    def add_partitions_req(self, session, request):
        parts = [prepare_partition(p, request.dbName, request.tblName) for p in request.parts or []]
        added = self._add(session, parts, bool(request.ifNotExists))
        return api.AddPartitionsResult(partitions=added if request.needResult is not False else None)

    def append_partition(self, session, db_name, tbl_name, part_vals, environment_context=None):
        table = self.store.get_table(self.n(db_name), self.n(tbl_name))
        return self._add(session, [partition_from_table(table, part_vals or [])])[0]

    def append_partition_with_environment_context(self, session, db_name, tbl_name, part_vals, environment_context):
        return self.append_partition(session, db_name, tbl_name, part_vals)

    def append_partition_by_name(self, session, db_name, tbl_name, part_name, environment_context=None):
        table = self.store.get_table(self.n(db_name), self.n(tbl_name))
        values = parse_part_name(part_name, [k.name for k in table.partitionKeys or []])
        return self._add(session, [partition_from_table(table, values)])[0]

    def append_partition_by_name_with_environment_context(self, session, db_name, tbl_name, part_name,
                                                          environment_context):
        return self.append_partition_by_name(session, db_name, tbl_name, part_name)

    # -------------------------------------------------------------------- drop
    def _drop(self, session, db_name, tbl_name, values_list, delete_data, context=None, if_exists=False):
        db_name, tbl_name = self.n(db_name), self.n(tbl_name)
        keys, access = self._writable_keys(session, db_name, tbl_name)
        names = [make_part_name(keys, values) for values in values_list if len(values) == len(keys)]
        access.require_all((p.sd.location, WRITE_ACCESS)
                           for p in self.store.get_partitions(db_name, tbl_name, names=names) if p.sd)
        return self.store.drop_partitions(db_name, tbl_name, values_list,
                                          self.dirs(session, access) if delete_data else None, if_exists,
                                          env_flag(context, "ifPurge"))

    def drop_partition(self, session, db_name, tbl_name, part_vals, deleteData, environment_context=None):
        return bool(self._drop(session, db_name, tbl_name, [part_vals or []], deleteData, environment_context))

    def drop_partition_with_environment_context(self, session, db_name, tbl_name, part_vals, deleteData,
                                                environment_context):
        return self.drop_partition(session, db_name, tbl_name, part_vals, deleteData, environment_context)

    def drop_partition_by_name(self, session, db_name, tbl_name, part_name, deleteData, environment_context=None):
        values = parse_part_name(part_name, self._keys(session, db_name, tbl_name))
        return bool(self._drop(session, db_name, tbl_name, [values], deleteData, environment_context))

    def drop_partition_by_name_with_environment_context(self, session, db_name, tbl_name, part_name, deleteData,
                                                        environment_context):
        return self.drop_partition_by_name(session, db_name, tbl_name, part_name, deleteData, environment_context)

    def drop_partitions_req(self, session, req):
        if req.parts is None or req.parts.names is None:
            raise Unsupported("drop_partitions_req by expression is not supported; send partition names")
        keys = self._keys(session, req.dbName, req.tblName)
        values = [parse_part_name(name, keys) for name in req.parts.names]
        dropped = self._drop(session, req.dbName, req.tblName, values, req.deleteData is not False,
                             req.environmentContext, bool(req.ifExists))
        return api.DropPartitionsResult(partitions=dropped if req.needResult is not False else None)

    # ------------------------------------------------------------------- reads
    def get_partition(self, session, db_name, tbl_name, part_vals):
        self.readable_table(session, db_name, tbl_name)
        return self.store.get_partition(self.n(db_name), self.n(tbl_name), part_vals or [])

    def get_partition_with_auth(self, session, db_name, tbl_name, part_vals, user_name, group_names):
        return self.get_partition(session, db_name, tbl_name, part_vals)

    def get_partition_by_name(self, session, db_name, tbl_name, part_name):
        values = parse_part_name(part_name, self._keys(session, db_name, tbl_name))
        return self.store.get_partition(self.n(db_name), self.n(tbl_name), values)

    def get_partitions(self, session, db_name, tbl_name, max_parts):
        self.readable_table(session, db_name, tbl_name)
        return self.store.get_partitions(self.n(db_name), self.n(tbl_name), _max(max_parts))

    def get_partitions_with_auth(self, session, db_name, tbl_name, max_parts, user_name, group_names):
        return self.get_partitions(session, db_name, tbl_name, max_parts)

    def get_partitions_ps(self, session, db_name, tbl_name, part_vals, max_parts):
        self.readable_table(session, db_name, tbl_name)
        return self.store.get_partitions(self.n(db_name), self.n(tbl_name), _max(max_parts),
                                         partial_values=part_vals or [])

    def get_partitions_ps_with_auth(self, session, db_name, tbl_name, part_vals, max_parts, user_name, group_names):
        return self.get_partitions_ps(session, db_name, tbl_name, part_vals, max_parts)

    def get_partition_names(self, session, db_name, tbl_name, max_parts):
        self.readable_table(session, db_name, tbl_name)
        return self.store.get_partition_names(self.n(db_name), self.n(tbl_name), _max(max_parts))

    def get_partition_names_ps(self, session, db_name, tbl_name, part_vals, max_parts):
        self.readable_table(session, db_name, tbl_name)
        return self.store.get_partition_names(self.n(db_name), self.n(tbl_name), _max(max_parts), part_vals or [])

    def get_partitions_by_filter(self, session, db_name, tbl_name, filter, max_parts):
        self.readable_table(session, db_name, tbl_name)
        return self.store.get_partitions_by_filter(self.n(db_name), self.n(tbl_name), filter, _max(max_parts))

    def get_num_partitions_by_filter(self, session, db_name, tbl_name, filter):
        self.readable_table(session, db_name, tbl_name)
        return self.store.count_partitions_by_filter(self.n(db_name), self.n(tbl_name), filter)

    def get_partitions_by_names(self, session, db_name, tbl_name, names):
        self.readable_table(session, db_name, tbl_name)
        return self.store.get_partitions(self.n(db_name), self.n(tbl_name), names=list(names or []))

    @staticmethod
    def partition_name_to_vals(session, part_name):
        return parse_part_name(part_name)

    @staticmethod
    def partition_name_to_spec(session, part_name):
        return {component.split("=", 1)[0]: value
                for component, value in zip(part_name.split("/"), parse_part_name(part_name))}

    # ------------------------------------------------------------------- alter
    def alter_partitions(self, session, db_name, tbl_name, new_parts, environment_context=None):
        table, access = self.writable_table(session, db_name, tbl_name)
        parts = self._placed(table, [prepare_partition(p, db_name, tbl_name) for p in new_parts or []])
        self.store.alter_partitions(self.n(db_name), self.n(tbl_name), parts, self.dirs(session, access))

    def alter_partition(self, session, db_name, tbl_name, new_part):
        self.alter_partitions(session, db_name, tbl_name, [new_part])

    def alter_partition_with_environment_context(self, session, db_name, tbl_name, new_part, environment_context):
        self.alter_partitions(session, db_name, tbl_name, [new_part])

    def alter_partitions_with_environment_context(self, session, db_name, tbl_name, new_parts, environment_context):
        self.alter_partitions(session, db_name, tbl_name, new_parts)

    def rename_partition(self, session, db_name, tbl_name, part_vals, new_part):
        if not part_vals:
            return self.alter_partition(session, db_name, tbl_name, new_part)
        table, access = self.writable_table(session, db_name, tbl_name)
        new_part = self._placed(table, [prepare_partition(new_part, db_name, tbl_name)])[0]
        self.store.rename_partition(self.n(db_name), self.n(tbl_name), part_vals, new_part, self.dirs(session, access))
