"""The TCLIService handler: thin methods over sessions, operations and engines.  Errors of
every kind become a TStatus in one place (``_status``): the message and SQLSTATE, never a
stack trace."""

from __future__ import annotations

import functools
import logging
import re
import uuid

from impala_thrift_gen.TCLIService import ttypes as t

from .auth import PlatformAuthenticator
from .engines import Engines
from .exceptions import AuthenticationFailed, Server2Error, StatementFailed
from .metrics import Server2Metrics
from .operations import CANCELED, CLOSED, ERROR, FINISHED, Operation, Registry, Session
from .progress import progress_update
from .rowsets import list_columns, schema_of, type_info_rows
from .transport import ConnectionContext
from .wire import Fetched, encode_columns

log = logging.getLogger("hopshive.server2")
V6 = t.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V6
MAX_PROTOCOL = t.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10
USE = re.compile(r"^\s*use\s+`?([A-Za-z0-9_]+)`?\s*;?\s*$", re.I)
STATE = {0: t.TOperationState.INITIALIZED_STATE, 1: t.TOperationState.RUNNING_STATE,
         FINISHED: t.TOperationState.FINISHED_STATE, CANCELED: t.TOperationState.CANCELED_STATE,
         CLOSED: t.TOperationState.CLOSED_STATE, ERROR: t.TOperationState.ERROR_STATE}
INFO = {t.TGetInfoType.CLI_SERVER_NAME: "HopsHive server2", t.TGetInfoType.CLI_DBMS_NAME: "Spark SQL",
        t.TGetInfoType.CLI_DBMS_VER: "4.3.0", t.TGetInfoType.CLI_ODBC_KEYWORDS: "Unimplemented"}
NAME_LENGTHS = (t.TGetInfoType.CLI_MAX_COLUMN_NAME_LEN, t.TGetInfoType.CLI_MAX_SCHEMA_NAME_LEN,
                t.TGetInfoType.CLI_MAX_TABLE_NAME_LEN)     # 128 each, as HiveServer2 answers


def _ok() -> t.TStatus:
    return t.TStatus(statusCode=t.TStatusCode.SUCCESS_STATUS)


def _status(exc: BaseException) -> t.TStatus:
    if isinstance(exc, Server2Error):
        return t.TStatus(statusCode=t.TStatusCode.ERROR_STATUS, sqlState=exc.sqlstate, errorCode=0,
                         errorMessage=str(exc))
    log.exception("call failed")
    return t.TStatus(statusCode=t.TStatusCode.ERROR_STATUS, sqlState="HY000", errorCode=0,
                     errorMessage=f"internal error: {type(exc).__name__}")


def replies(response_type):
    """Run the call; any error becomes the response's status."""
    def wrap(method):
        @functools.wraps(method)
        def call(self, req):
            try:
                return method(self, req)
            except Exception as exc:            # noqa: BLE001 -- the one place errors reach the wire
                return response_type(status=_status(exc))
        return call
    return wrap


class Handler:
    def __init__(self, authenticator: PlatformAuthenticator, engines: Engines, context: ConnectionContext,
                 fetch_limit: int):
        self.authenticator = authenticator
        self.engines = engines
        self.registry = Registry(engines)
        self.metrics = Server2Metrics(self.registry, engines)
        self.context = context
        self.fetch_limit = fetch_limit

    # ------------------------------------------------------------------ sessions
    @replies(t.TOpenSessionResp)
    def OpenSession(self, req: t.TOpenSessionReq) -> t.TOpenSessionResp:
        if req.client_protocol < V6:
            raise Server2Error("clients older than HiveServer2 protocol V6 are not supported", "08004")
        identity = self.context.identity or self.authenticator.authenticate(
            req.username, req.password, self.context.address)
        configuration = req.configuration or {}
        session = Session(uuid.uuid4().bytes, uuid.uuid4().bytes, identity, min(req.client_protocol, MAX_PROTOCOL))
        database = configuration.get("use:database")
        if database and database != "default":
            self._bind(session, database)
        self.registry.add_session(session)
        self.context.sessions.append(session.id)
        log.info("session opened", extra={"email": identity.email, "user": session.user, "peer": self.context.peer})
        return t.TOpenSessionResp(status=_ok(), serverProtocolVersion=session.protocol,
                                  sessionHandle=t.TSessionHandle(t.THandleIdentifier(session.id, session.secret)),
                                  configuration={})

    def _bind(self, session: Session, database: str) -> None:
        """Make ``session`` run as the project user of ``database`` (once per session)."""
        user = session.identity.session_user(database)
        if session.user is not None:
            if session.database != database:
                raise AuthenticationFailed(f"this session runs as {session.user}; open another session to use "
                                           f"project {database}")
            return
        engine = self.engines.acquire(user, lambda: self.authenticator.project_token(session.identity, database))
        try:
            conn = engine.connect()
            conn.send(("open", session.id.hex(), database))
            reply = conn.recv()
            conn.close()
        except BaseException:
            self.engines.release(engine)
            raise
        if reply[0] != "ok":
            self.engines.release(engine)
            raise StatementFailed(reply[2], reply[1])
        session.user, session.database, session.engine = user, database, engine

    def disconnected(self) -> None:
        """The client's connection ended: its sessions end with it."""
        for session_id in self.context.sessions:
            session = self.registry.sessions.get(session_id)
            if session is not None:
                self.registry.close_session(session)

    @replies(t.TCloseSessionResp)
    def CloseSession(self, req: t.TCloseSessionReq) -> t.TCloseSessionResp:
        self.registry.close_session(self.registry.session(req.sessionHandle.sessionId.guid))
        return t.TCloseSessionResp(status=_ok())

    @replies(t.TGetInfoResp)
    def GetInfo(self, req: t.TGetInfoReq) -> t.TGetInfoResp:
        self.registry.session(req.sessionHandle.sessionId.guid)
        if req.infoType in NAME_LENGTHS:
            return t.TGetInfoResp(status=_ok(), infoValue=t.TGetInfoValue(lenValue=128))
        value = INFO.get(req.infoType)
        if value is None:
            raise Server2Error(f"unsupported GetInfo type {req.infoType}", "HYC00")
        return t.TGetInfoResp(status=_ok(), infoValue=t.TGetInfoValue(stringValue=value))

    # ------------------------------------------------------------------ operations
    def _start(self, session: Session, kind: str, args: tuple, description: str, wait: bool = True,
               op_type: int = t.TOperationType.EXECUTE_STATEMENT) -> t.TOperationHandle:
        if session.engine is None:
            raise Server2Error("no project database selected: put your project's database in the connection URL "
                               "or run USE <project> first", "3D000")
        operation = Operation(session, kind, args, description, self.metrics.done)
        self.registry.add_operation(operation)
        operation.start()
        if wait:
            operation.done.wait()
            if operation.error is not None:
                self.registry.close_operation(operation)
                raise operation.error
        return t.TOperationHandle(t.THandleIdentifier(operation.id, operation.secret), op_type, hasResultSet=True)

    @replies(t.TExecuteStatementResp)
    def ExecuteStatement(self, req: t.TExecuteStatementReq) -> t.TExecuteStatementResp:
        session = self.registry.session(req.sessionHandle.sessionId.guid)
        statement = req.statement or ""
        use = USE.match(statement)
        if use and session.user is None:
            # PyHive's first statement: the engine session starts in that database already.
            self._bind(session, use.group(1))
            handle = self._local(req, [("Result", "string", "STRING_TYPE")], [], t.TOperationType.EXECUTE_STATEMENT)
            return t.TExecuteStatementResp(status=_ok(), operationHandle=handle)
        handle = self._start(session, "execute", (statement,), statement[:500], wait=not req.runAsync)
        return t.TExecuteStatementResp(status=_ok(), operationHandle=handle)

    def _meta(self, req, kind: str, args: dict, op_type: int):
        session = self.registry.session(req.sessionHandle.sessionId.guid)
        return self._start(session, "meta", (kind, args), f"{kind} {args}", True, op_type)

    @replies(t.TGetSchemasResp)
    def GetSchemas(self, req: t.TGetSchemasReq) -> t.TGetSchemasResp:
        handle = self._meta(req, "schemas", {"schema": req.schemaName}, t.TOperationType.GET_SCHEMAS)
        return t.TGetSchemasResp(status=_ok(), operationHandle=handle)

    @replies(t.TGetTablesResp)
    def GetTables(self, req: t.TGetTablesReq) -> t.TGetTablesResp:
        handle = self._meta(req, "tables", {"schema": req.schemaName, "table": req.tableName,
                                            "types": list(req.tableTypes or [])}, t.TOperationType.GET_TABLES)
        return t.TGetTablesResp(status=_ok(), operationHandle=handle)

    @replies(t.TGetColumnsResp)
    def GetColumns(self, req: t.TGetColumnsReq) -> t.TGetColumnsResp:
        handle = self._meta(req, "columns", {"schema": req.schemaName, "table": req.tableName,
                                             "column": req.columnName}, t.TOperationType.GET_COLUMNS)
        return t.TGetColumnsResp(status=_ok(), operationHandle=handle)

    @replies(t.TGetFunctionsResp)
    def GetFunctions(self, req: t.TGetFunctionsReq) -> t.TGetFunctionsResp:
        handle = self._meta(req, "functions", {"schema": req.schemaName, "function": req.functionName},
                            t.TOperationType.GET_FUNCTIONS)
        return t.TGetFunctionsResp(status=_ok(), operationHandle=handle)

    def _local(self, req, schema: list, rows: list, op_type: int) -> t.TOperationHandle:
        """An operation whose rows server2 knows without an engine."""
        session = self.registry.session(req.sessionHandle.sessionId.guid)
        operation = Operation(session, "local", (), "listing")
        operation.schema, operation.state, operation.exhausted = schema, FINISHED, True
        operation.rows = rows
        operation.done.set()
        self.registry.add_operation(operation)
        return t.TOperationHandle(t.THandleIdentifier(operation.id, operation.secret), op_type, hasResultSet=True)

    @replies(t.TGetCatalogsResp)
    def GetCatalogs(self, req: t.TGetCatalogsReq) -> t.TGetCatalogsResp:
        handle = self._local(req, [("TABLE_CAT", "string", "STRING_TYPE")], [], t.TOperationType.GET_CATALOGS)
        return t.TGetCatalogsResp(status=_ok(), operationHandle=handle)

    @replies(t.TGetTableTypesResp)
    def GetTableTypes(self, req: t.TGetTableTypesReq) -> t.TGetTableTypesResp:
        handle = self._local(req, [("TABLE_TYPE", "string", "STRING_TYPE")], [("TABLE",), ("VIEW",)],
                             t.TOperationType.GET_TABLE_TYPES)
        return t.TGetTableTypesResp(status=_ok(), operationHandle=handle)

    @replies(t.TGetTypeInfoResp)
    def GetTypeInfo(self, req: t.TGetTypeInfoReq) -> t.TGetTypeInfoResp:
        schema, rows = type_info_rows()
        handle = self._local(req, schema, rows, t.TOperationType.GET_TYPE_INFO)
        return t.TGetTypeInfoResp(status=_ok(), operationHandle=handle)

    @replies(t.TGetOperationStatusResp)
    def GetOperationStatus(self, req: t.TGetOperationStatusReq) -> t.TGetOperationStatusResp:
        operation = self.registry.operation(req.operationHandle.operationId.guid)
        operation.done.wait(0.5)     # answer at once when it ends soon: fewer client polls
        error = operation.error
        progress = (progress_update(operation.progress(), operation.done.is_set(), operation.started)
                    if req.getProgressUpdate else None)
        return t.TGetOperationStatusResp(
            status=_ok(), operationState=STATE[operation.state], hasResultSet=True,
            sqlState=error.sqlstate if error else None, errorCode=0 if error else None,
            errorMessage=str(error) if error else None, operationStarted=operation.started,
            operationCompleted=operation.completed or None, taskStatus=None, progressUpdateResponse=progress)

    @replies(t.TCancelOperationResp)
    def CancelOperation(self, req: t.TCancelOperationReq) -> t.TCancelOperationResp:
        operation = self.registry.operation(req.operationHandle.operationId.guid)
        operation.cancel(operation.session.engine.connect)
        return t.TCancelOperationResp(status=_ok())

    @replies(t.TCloseOperationResp)
    def CloseOperation(self, req: t.TCloseOperationReq) -> t.TCloseOperationResp:
        self.registry.close_operation(self.registry.operation(req.operationHandle.operationId.guid))
        return t.TCloseOperationResp(status=_ok())

    @replies(t.TGetResultSetMetadataResp)
    def GetResultSetMetadata(self, req: t.TGetResultSetMetadataReq) -> t.TGetResultSetMetadataResp:
        operation = self.registry.operation(req.operationHandle.operationId.guid)
        operation.done.wait()
        if operation.error is not None:
            raise operation.error
        return t.TGetResultSetMetadataResp(status=_ok(), schema=schema_of(operation.schema))

    @replies(t.TFetchResultsResp)
    def FetchResults(self, req: t.TFetchResultsReq) -> Fetched | t.TFetchResultsResp:
        operation = self.registry.operation(req.operationHandle.operationId.guid)
        if req.fetchType == 1:                  # the operation log
            with operation.lock:
                lines = operation.logs[operation.logs_sent:]
                operation.logs_sent = len(operation.logs)
            return Fetched(encode_columns(list_columns([("log", "string", "STRING_TYPE")], [lines])), 1, False)
        count = max(1, min(int(req.maxRows or 1000), self.fetch_limit))
        if operation.rows is not None:
            rows, operation.rows = operation.rows[:count], operation.rows[count:]
            values = [[r[i] for r in rows] for i in range(len(operation.schema))]
            columns, fetched = encode_columns(list_columns(operation.schema, values)), len(rows)
        else:
            columns, fetched = operation.fetch(count)
        self.metrics.rows.inc(fetched)
        return Fetched(columns, len(operation.schema), fetched == count)

    # ------------------------------------------------------------------ not offered
    def _unsupported(self, response_type, what: str):
        return response_type(status=_status(Server2Error(f"{what} is not supported by this server", "HYC00")))

    def GetPrimaryKeys(self, req):
        return self._unsupported(t.TGetPrimaryKeysResp, "GetPrimaryKeys")

    def GetCrossReference(self, req):
        return self._unsupported(t.TGetCrossReferenceResp, "GetCrossReference")

    def GetDelegationToken(self, req):
        return self._unsupported(t.TGetDelegationTokenResp, "delegation tokens")

    def CancelDelegationToken(self, req):
        return self._unsupported(t.TCancelDelegationTokenResp, "delegation tokens")

    def RenewDelegationToken(self, req):
        return self._unsupported(t.TRenewDelegationTokenResp, "delegation tokens")

    def GetQueryId(self, req):
        return self._unsupported(t.TGetQueryIdResp, "GetQueryId")

    def SetClientInfo(self, req):
        return t.TSetClientInfoResp(status=_ok())

    def UploadData(self, req):
        return self._unsupported(t.TUploadDataResp, "UploadData")

    def DownloadData(self, req):
        return self._unsupported(t.TDownloadDataResp, "DownloadData")
