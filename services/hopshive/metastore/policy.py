"""What Hive's HMSHandler decides before it touches the store: normalised names, default
locations, creation times, managed versus external, flags in environment contexts."""

from __future__ import annotations

import copy
import time

from .api import api
from .exceptions import InvalidObject
from .locations import Locations
from .names import normalize, validate_name

DDL_TIME = "transient_lastDdlTime"
EXTERNAL, MANAGED, VIEW = "EXTERNAL_TABLE", "MANAGED_TABLE", "VIRTUAL_VIEW"


def now() -> int:
    return int(time.time())


def env_flag(context, key: str) -> bool:
    """A TRUE/true flag of an EnvironmentContext (``ifPurge``, ``CASCADE``)."""
    props = getattr(context, "properties", None) or {}
    return str(props.get(key, "")).lower() == "true"


def is_external(table) -> bool:
    params = table.parameters or {}
    return table.tableType == EXTERNAL or str(params.get("EXTERNAL", "")).upper() == "TRUE"


def prepare_database(db, locations: Locations):
    db = copy.deepcopy(db)
    db.name = validate_name(db.name, "database")
    db.locationUri = db.locationUri or locations.database_default(db.name)
    db.parameters = db.parameters or {}
    return db


def prepare_table(table, database) -> tuple[object, bool]:
    """(normalised copy of ``table``, create_dir).  Views get no location; a table without one
    goes to ``<database location>/<name>`` and its directory is made, as Hive does even for
    external tables; an explicit location is made only for managed tables."""
    table = copy.deepcopy(table)
    table.tableName = validate_name(table.tableName, "table")
    table.dbName = normalize(table.dbName)
    if table.sd is None:
        raise InvalidObject(f"table {table.dbName}.{table.tableName} has no storage descriptor")
    for column in list(table.sd.cols or []) + list(table.partitionKeys or []):
        if not column.name or not column.type:
            raise InvalidObject(f"table {table.tableName}: every column needs a name and a type")
        column.name = column.name.lower()
    names = [c.name for c in list(table.sd.cols or []) + list(table.partitionKeys or [])]
    if len(set(names)) != len(names):
        raise InvalidObject(f"table {table.tableName} has duplicate column names")
    table.tableType = table.tableType or MANAGED
    if is_external(table) and table.tableType == MANAGED:
        table.tableType = EXTERNAL
    table.createTime = table.createTime or now()
    table.parameters = dict(table.parameters or {})
    table.parameters.setdefault(DDL_TIME, str(now()))
    if table.tableType == VIEW:
        table.sd.location = None
        return table, False
    if not table.sd.location:
        table.sd.location = Locations.child(database.locationUri, table.tableName)
        return table, True
    return table, not is_external(table)


def prepare_altered_table(table, db_name: str, name: str):
    table = copy.deepcopy(table)
    table.dbName = normalize(table.dbName or db_name)
    table.tableName = validate_name(table.tableName or name, "table")
    for column in list((table.sd.cols if table.sd else None) or []) + list(table.partitionKeys or []):
        column.name = (column.name or "").lower()
    if is_external(table) and table.tableType == MANAGED:
        table.tableType = EXTERNAL
    table.parameters = dict(table.parameters or {})
    table.parameters[DDL_TIME] = str(now())
    return table


def prepare_partition(part, db_name: str | None = None, table_name: str | None = None):
    part = copy.copy(part)
    part.dbName = normalize(db_name or part.dbName)
    part.tableName = normalize(table_name or part.tableName)
    part.createTime = part.createTime or now()
    part.parameters = dict(part.parameters or {})
    part.parameters.setdefault(DDL_TIME, str(now()))
    return part


def partition_from_table(table, values: list[str]):
    """append_partition: a partition with the table's descriptor and the default location."""
    sd = copy.deepcopy(table.sd) or api.StorageDescriptor()
    sd.location = None
    return prepare_partition(api.Partition(values=list(values), dbName=table.dbName, tableName=table.tableName,
                                           sd=sd, parameters={}), table.dbName, table.tableName)
