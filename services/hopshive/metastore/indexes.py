"""Hive indexes (HIVE-417, removed in Hive 3.0): the object and what the service decides
before a store sees one.

An index is the Hive 2 IDL's ``Index`` struct (only ``hmsclient``'s bindings have it: Hive
3.1's IDL dropped indexes).  Stores take and return it with its ``sd`` as the Hive 3.1
``StorageDescriptor`` of the rest of the object model; ``to_wire`` turns it back into the
Hive 2 struct a client reads.  The two descriptors are the same on the wire (Hive 3 only
adds optional fields), so converting is a Thrift round trip.

Hive's rules (``HiveMetaStore.add_index_core`` and ``Hive.createIndex``, 2.3): the index
table is a table of type ``INDEX_TABLE`` named ``<db>__<table>_<index>__`` unless the index
names its own; it is made with the index, dropped with it, and refused by DROP TABLE;
an index covers columns of its base table, which may not be a view.
"""

from __future__ import annotations

import copy
from typing import TypeVar

from hmsclient.genthrift.hive_metastore import ttypes as hive2
from thrift.protocol import TBinaryProtocol
from thrift.TSerialization import deserialize, serialize

from .api import api
from .exceptions import InvalidObject
from .names import normalize, validate_name
from .policy import DDL_TIME, VIEW, now, prepare_table

Index = hive2.Index
INDEX_TABLE = "INDEX_TABLE"
_PROTOCOL = TBinaryProtocol.TBinaryProtocolAcceleratedFactory()
T = TypeVar("T")


def convert(struct: object | None, cls: type[T]) -> T | None:
    """The same value as a struct of the other IDL generation (a Thrift round trip)."""
    if struct is None:
        return None
    return deserialize(cls(), serialize(struct, _PROTOCOL), _PROTOCOL)


def from_wire(index: hive2.Index) -> hive2.Index:
    """A client's Index with its descriptor in the object model (Hive 3.1 structs)."""
    index = copy.copy(index)
    index.sd = convert(index.sd, api.StorageDescriptor)
    return index


def to_wire(index: hive2.Index) -> hive2.Index:
    """A stored Index as the Hive 2 struct a client reads."""
    index = copy.copy(index)
    index.sd = convert(index.sd, hive2.StorageDescriptor)
    return index


def index_table_name(db_name: str, table_name: str, index_name: str) -> str:
    """Hive's MetaStoreUtils.getIndexTableName."""
    return f"{db_name}__{table_name}_{index_name}__"


def index_key(index: hive2.Index) -> str:
    return f"{index.dbName}.{index.origTableName}.{index.indexName}"


def prepare_index(index: hive2.Index, index_table: hive2.Table | None, base: api.Table,
                  database: api.Database) -> tuple[hive2.Index, api.Table | None, bool]:
    """(normalised Index, its index table or None, create_dir) after Hive's checks against
    the base table.

    Raises:
        InvalidObject: a view as the base table, no columns or columns the base table does
            not have, a malformed index or index table.
    """
    index = from_wire(index)
    index.indexName = validate_name(index.indexName, "index")
    index.dbName, index.origTableName = base.dbName, base.tableName
    if base.tableType == VIEW:
        raise InvalidObject(f"tableName={base.tableName} is a VIRTUAL VIEW. Index on VIRTUAL VIEW is not supported.")
    if base.tableType == INDEX_TABLE:
        raise InvalidObject(f"Table {base.dbName}.{base.tableName} is an index table: it cannot be indexed")
    if not index.indexHandlerClass:
        raise InvalidObject(f"index {index.indexName} names no index handler class")
    if index.sd is None:
        index.sd = api.StorageDescriptor()
    wanted = [normalize(c.name) for c in index.sd.cols or []]
    have = {normalize(c.name): c for c in base.sd.cols or []}
    if not wanted or any(name not in have for name in wanted) or len(set(wanted)) != len(wanted):
        raise InvalidObject("Check the index columns, they should appear in the table being indexed.")
    index.sd.cols = [api.FieldSchema(name, have[name].type, have[name].comment) for name in wanted]
    index.sd.location = None              # an index's own descriptor has no directory
    created = now()
    index.createTime = created
    index.lastAccessTime = index.lastAccessTime or 0
    index.parameters = dict(index.parameters or {})
    index.parameters[DDL_TIME] = str(created)
    index.deferredRebuild = bool(index.deferredRebuild)
    if index_table is None:
        index.indexTableName = None
        return index, None, False
    table = convert(index_table, api.Table)
    table.dbName = base.dbName
    table.tableName = normalize(index.indexTableName or table.tableName
                                or index_table_name(base.dbName, base.tableName, index.indexName))
    table.tableType = INDEX_TABLE
    table.owner = table.owner or base.owner
    if table.sd is None:
        table.sd = copy.deepcopy(index.sd)
    if table.sd.location == "":
        table.sd.location = None
    table, create_dir = prepare_table(table, database)
    index.indexTableName = table.tableName
    return index, table, create_dir


def altered_index(old: hive2.Index, new: hive2.Index) -> hive2.Index:
    """What alter_index changes: the parameters (Hive's ObjectStore.alterIndex), with a
    fresh DDL time."""
    altered = copy.copy(old)
    altered.parameters = dict(new.parameters or {})
    altered.parameters[DDL_TIME] = str(now())
    return altered
