"""Session, configuration, functions, statistics, locks, notifications and fb303 calls."""

from __future__ import annotations

import copy

from ..api import api
from ..authorization import WRITE_ACCESS
from ..exceptions import InvalidInput, InvalidObject, NoSuchObject
from ..names import filter_names, parse_part_name, validate_name

ALIVE = 2  # fb303 fb_status.ALIVE


class MiscCalls:
    # ---------------------------------------------------------- session and conf
    def set_ugi(self, session, user_name, group_names):
        """Believed as said without authentication (simple mode); on an authenticated
        connection only within the proxy-user rules (``authentication``)."""
        if session.authenticated is not None:
            self.authenticator.check_act_for(session.authenticated, user_name)
        session.user, session.groups = user_name, list(group_names or [])
        return session.groups

    def getMetaConf(self, session, key):
        return self.meta_conf(session, key)

    def setMetaConf(self, session, key, value):
        self.meta_conf(session, key)
        session.meta_conf[key] = value

    def get_config_value(self, session, name, defaultValue):
        return self.config_values().get(name, defaultValue)

    def get_current_notificationEventId(self, session):
        return api.CurrentNotificationEventId(eventId=0)

    def get_next_notification(self, session, rqst):
        return api.NotificationEventResponse(events=[])

    # fb303 (Hive 2 clients' service base)
    def getName(self, session):
        return "HopsHive metastore"

    def getVersion(self, session):
        return "2.3.10"

    def getStatus(self, session):
        return ALIVE

    def getStatusDetails(self, session):
        return "alive"

    def aliveSince(self, session):
        return self.started

    def getCounters(self, session):
        return {}

    # ---------------------------------------------------------------- functions
    def _function(self, func, session):
        func = copy.deepcopy(func)
        func.dbName = self.n(func.dbName)
        func.functionName = validate_name(func.functionName, "function")
        if not func.className:
            raise InvalidObject(f"function {func.functionName} has no class name")
        func.ownerName = func.ownerName or self.user(session)
        return func

    def _writable_database(self, session, name) -> None:
        """Functions belong to their database: changing them needs write access to it."""
        self.authorize(session, (self.store.get_database(self.n(name)).locationUri, WRITE_ACCESS))

    def create_function(self, session, func):
        self._writable_database(session, func.dbName)
        self.store.create_function(self._function(func, session))

    def get_function(self, session, dbName, funcName):
        return self.store.get_function(self.n(dbName), self.n(funcName))

    def get_functions(self, session, dbName, pattern):
        return filter_names(pattern, [f.functionName for f in self.store.get_functions(self.n(dbName))])

    def get_all_functions(self, session):
        return api.GetAllFunctionsResponse(functions=self.store.get_functions())

    def alter_function(self, session, dbName, funcName, newFunc):
        self._writable_database(session, dbName)
        self.store.alter_function(self.n(dbName), self.n(funcName), self._function(newFunc, session))

    def drop_function(self, session, dbName, funcName):
        self._writable_database(session, dbName)
        self.store.drop_function(self.n(dbName), self.n(funcName))

    # --------------------------------------------------------------- statistics
    def _update_stats(self, session, stats, table_level: bool):
        desc = stats.statsDesc
        if desc is None or not desc.dbName or not desc.tableName:
            raise InvalidInput("column statistics need dbName and tableName")
        stats = copy.deepcopy(stats)
        desc = stats.statsDesc
        desc.dbName, desc.tableName, desc.isTblLevel = self.n(desc.dbName), self.n(desc.tableName), table_level
        values = None
        table, _ = self.writable_table(session, desc.dbName, desc.tableName)
        if not table_level:
            values = parse_part_name(desc.partName or "", [k.name for k in table.partitionKeys or []])
        self.store.update_column_statistics(stats, values)
        return True

    def update_table_column_statistics(self, session, stats_obj):
        return self._update_stats(session, stats_obj, True)

    def update_partition_column_statistics(self, session, stats_obj):
        return self._update_stats(session, stats_obj, False)

    def get_table_column_statistics(self, session, db_name, tbl_name, col_name):
        self.readable_table(session, db_name, tbl_name)
        objs = self.store.get_table_column_statistics(self.n(db_name), self.n(tbl_name), [col_name])
        if not objs:
            raise NoSuchObject(f"statistics of column {col_name} of {db_name}.{tbl_name} do not exist")
        desc = api.ColumnStatisticsDesc(isTblLevel=True, dbName=self.n(db_name), tableName=self.n(tbl_name))
        return api.ColumnStatistics(statsDesc=desc, statsObj=objs)

    def get_partition_column_statistics(self, session, db_name, tbl_name, part_name, col_name):
        self.readable_table(session, db_name, tbl_name)
        stats = self.store.get_partition_column_statistics(self.n(db_name), self.n(tbl_name), [part_name], [col_name])
        if part_name not in stats:
            raise NoSuchObject(f"statistics of column {col_name} of partition {part_name} do not exist")
        desc = api.ColumnStatisticsDesc(isTblLevel=False, dbName=self.n(db_name), tableName=self.n(tbl_name),
                                        partName=part_name)
        return api.ColumnStatistics(statsDesc=desc, statsObj=stats[part_name])

    def get_table_statistics_req(self, session, request):
        self.readable_table(session, request.dbName, request.tblName)
        return api.TableStatsResult(tableStats=self.store.get_table_column_statistics(
            self.n(request.dbName), self.n(request.tblName), request.colNames or []))

    def get_partitions_statistics_req(self, session, request):
        self.readable_table(session, request.dbName, request.tblName)
        return api.PartitionsStatsResult(partStats=self.store.get_partition_column_statistics(
            self.n(request.dbName), self.n(request.tblName), request.partNames or [], request.colNames or []))

    def delete_partition_column_statistics(self, session, db_name, tbl_name, part_name, col_name):
        self.writable_table(session, db_name, tbl_name)
        return self.store.delete_column_statistics(self.n(db_name), self.n(tbl_name), part_name, col_name)

    def delete_table_column_statistics(self, session, db_name, tbl_name, col_name):
        self.writable_table(session, db_name, tbl_name)
        return self.store.delete_column_statistics(self.n(db_name), self.n(tbl_name), None, col_name)

    # -------------------------------------------------------------------- locks
    def lock(self, session, rqst):
        return self.store.lock(rqst, self.settings["lock_timeout"])

    def check_lock(self, session, rqst):
        return self.store.check_lock(rqst.lockid, self.settings["lock_timeout"])

    def unlock(self, session, rqst):
        self.store.unlock(rqst.lockid)

    def heartbeat(self, session, ids):
        if ids.lockid:
            self.store.heartbeat(ids.lockid)

    def show_locks(self, session, rqst):
        return api.ShowLocksResponse(locks=self.store.show_locks(rqst.dbname if rqst else None,
                                                                 rqst.tablename if rqst else None))
