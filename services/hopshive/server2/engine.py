"""A Spark engine: one process (one SparkContext, one JVM) per project user, started by
server2 with HADOOP_USER_NAME=<project>__<user> and, in a secured deployment, that user's
delegation token (on stdin, after the authentication key; written to the engine's own home
as its Hadoop token file), so every metastore call and every WebHDFS request the session
makes is proven as that user.  In a sandbox it runs as an OS account of its own, whose home
is emptied at start (engines.py).

It listens on a Unix socket (multiprocessing.connection, with an authentication key from
server2) and serves each connection in a thread.  A connection is one request:

- ``("open", session_id, database)``: a SparkSession of its own (``newSession``) using
  ``database``;
- ``("execute", session_id, operation_id, sql)`` then ``("fetch", n)``... ``("close",)``:
  a statement, run in a job group named by the operation, its rows pulled in batches of at
  most ``n`` rows, each ``("ok", (columns, rows))``: the TRowSet columns already encoded
  (results.py, from Arrow batches or from rows; one partition in memory at a time), the
  next fetch made ahead while a reply travels;
- ``("meta", session_id, operation_id, kind, args)``: JDBC metadata listings (listings.py),
  served the same way;
- ``("cancel", operation_id)``: cancel the job group;  ``("close_session", session_id)``;
- ``("progress", operation_id)``: the task counts of the job group's stages.

Replies are ``("ok", payload)`` or ``("error", sqlstate, message)``.
"""

from __future__ import annotations

import argparse
import base64
import itertools
import logging
import os
import shutil
import sys
import threading
from multiprocessing.connection import Connection, Listener
from typing import Any

from ..core.logs import setup_logging
from ..security.token_files import write_private
from .listings import listing
from .results import ArrowResult, RowResult, arrow_fits, arrow_result
from .values import type_name

log = logging.getLogger("hopshive.server2.engine")
DDL_SCHEMA = [("Result", "string", "STRING_TYPE")]


def _java_message(java) -> str:
    """A JVM exception as its class and message, with its root cause (a wrapper such as
    "Exception thrown in awaitResult" says nothing by itself); never the stack."""
    message, root, cause = str(java.toString()), None, java.getCause()
    for _ in range(32):
        if cause is None:
            break
        root, cause = cause, cause.getCause()
    return f"{message} (caused by {root.toString()})" if root is not None else message


def _error(exc: BaseException) -> tuple:
    sqlstate = None
    getter = getattr(exc, "getSqlState", None)
    if callable(getter):
        try:
            sqlstate = getter()
        except Exception:               # noqa: BLE001 -- best effort, the message still goes back
            sqlstate = None
    java = getattr(exc, "java_exception", None)     # a JVM exception PySpark does not convert
    if java is not None:
        message = _java_message(java)
    else:
        message = getattr(exc, "desc", None) or str(exc)
    message = message.split("\nJVM stacktrace:", 1)[0].strip()
    return ("error", sqlstate or "42000", message or type(exc).__name__)


class Engine:
    def __init__(self, spark, socket_path: str, authkey: bytes):
        self.spark = spark
        self.sessions: dict[str, Any] = {}
        self.lock = threading.Lock()
        self.listener = Listener(socket_path, "AF_UNIX", authkey=authkey)

    def serve(self) -> None:
        while True:
            try:
                conn = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.handle, args=(conn,), daemon=True).start()

    def handle(self, conn: Connection) -> None:
        try:
            request = conn.recv()
            kind = request[0]
            if kind == "open":
                self.open(*request[1:])
                conn.send(("ok", None))
            elif kind == "close_session":
                with self.lock:
                    self.sessions.pop(request[1], None)
                conn.send(("ok", None))
            elif kind == "cancel":
                self.spark.sparkContext.cancelJobGroup(request[1])
                conn.send(("ok", None))
            elif kind == "progress":
                conn.send(("ok", self.progress(request[1])))
            elif kind in ("execute", "meta"):
                self.run(conn, request)
            elif kind == "ping":
                conn.send(("ok", "pong"))
            else:
                conn.send(("error", "HY000", f"unknown engine request {kind!r}"))
        except (EOFError, OSError):
            pass
        except Exception as exc:        # noqa: BLE001 -- every failure is reported to server2
            try:
                conn.send(_error(exc))
            except (EOFError, OSError):
                pass
        finally:
            conn.close()

    def progress(self, operation_id: str) -> list[tuple[int, int, int, int, int, int]]:
        """(stage, attempt, tasks, completed, running, failed) of every stage Spark has
        submitted for the operation's jobs (a stage not yet submitted has no counts)."""
        tracker = self.spark.sparkContext.statusTracker()
        stages = []
        for job_id in sorted(tracker.getJobIdsForGroup(operation_id)):
            job = tracker.getJobInfo(job_id)
            for stage_id in sorted(job.stageIds) if job else ():
                stage = tracker.getStageInfo(stage_id)
                if stage is not None:
                    stages.append((stage_id, stage.currentAttemptId, stage.numTasks, stage.numCompletedTasks,
                                   stage.numActiveTasks, stage.numFailedTasks))
        return stages

    def open(self, session_id: str, database: str) -> None:
        session = self.spark.newSession()
        session.catalog.setCurrentDatabase(database)
        with self.lock:
            self.sessions[session_id] = session

    def session(self, session_id: str):
        with self.lock:
            session = self.sessions.get(session_id)
        if session is None:
            raise LookupError(f"no engine session {session_id}")
        return session

    def run(self, conn: Connection, request: tuple) -> None:
        session = self.session(request[1])
        operation_id = request[2]
        context = self.spark.sparkContext
        context.setJobGroup(operation_id, f"server2 operation {operation_id}", interruptOnCancel=True)
        try:
            if request[0] == "execute":
                schema, result = self.execute(session, request[3])
            else:
                schema, rows = listing(session, request[3], request[4])
                result = RowResult(schema, iter(rows))
            conn.send(("ok", schema))
            while True:
                message = conn.recv()
                if message[0] != "fetch":
                    break
                conn.send(("ok", result.take(message[1])))
                result.prepare(message[1])      # the next fetch, made while this one travels
        finally:
            context.setLocalProperty("spark.jobGroup.id", None)

    @staticmethod
    def execute(session, sql: str) -> tuple[list, RowResult | ArrowResult]:
        frame = session.sql(sql)
        fields = frame.schema.fields
        if not fields:
            return DDL_SCHEMA, RowResult(DDL_SCHEMA, iter(()))
        schema = [(f.name, *type_name(f.dataType.simpleString())) for f in fields]
        if frame.isLocal():             # literals, local relations: no Spark job at all
            return schema, RowResult(schema, iter(frame.collect()))
        if arrow_fits(frame):
            return schema, arrow_result(session, frame, [type_id for _, _, type_id in schema])
        rows = frame.toLocalIterator(prefetchPartitions=True)   # the next partition runs while this one is sent
        first = next(rows, None)        # the query runs (and can be cancelled) before the reply
        return schema, RowResult(schema, itertools.chain([first], rows) if first is not None else iter(()))


def prepare_home(home: str, credentials: bytes, env: dict[str, str]) -> None:
    """Make ``home`` this engine's own: emptied of what an earlier engine of the same
    sandbox account left, its token file written there (0600), HOME, the working directory
    and every temporary directory (Spark's, the JVM's) inside it."""
    os.makedirs(home, mode=0o700, exist_ok=True)
    for entry in os.listdir(home):
        path = os.path.join(home, entry)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)
    tmp = os.path.join(home, "tmp")
    os.makedirs(tmp, mode=0o700)
    os.environ.pop("HADOOP_TOKEN_FILE_LOCATION", None)
    if credentials:
        write_private(os.path.join(home, "token"), credentials)
        os.environ["HADOOP_TOKEN_FILE_LOCATION"] = os.path.join(home, "token")
    os.environ.update(env, HOME=home, TMPDIR=tmp)
    os.chdir(home)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hopshive-server2-engine", description="A Spark engine of server2.")
    parser.add_argument("--socket", required=True)
    parser.add_argument("--home", required=True, help="the engine's own directory (emptied at start)")
    parser.add_argument("--app-name", default="hopshive-server2")
    parser.add_argument("--conf", action="append", default=[], help="key=value Spark setting")
    parser.add_argument("--env", action="append", default=[], help="KEY=value environment variable")
    args = parser.parse_args(argv)
    setup_logging(os.environ.get("HOPSHIVE_ENGINE_LOG_LEVEL", "info"))
    authkey = bytes.fromhex(sys.stdin.readline().strip())
    credentials = base64.b64decode(sys.stdin.readline().strip())
    prepare_home(args.home, credentials, dict(setting.partition("=")[::2] for setting in args.env))
    from pyspark.sql import SparkSession
    tmp = os.path.join(args.home, "tmp")
    builder = (SparkSession.builder.appName(args.app_name).enableHiveSupport()
               .config("spark.local.dir", tmp).config("spark.driver.extraJavaOptions", f"-Djava.io.tmpdir={tmp}"))
    for setting in args.conf:
        key, _, value = setting.partition("=")
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    engine = Engine(spark, args.socket, authkey)
    os.chmod(args.socket, 0o666)        # server2 connects from its own account; the authkey is the lock
    print("READY", flush=True)
    log.info("engine ready", extra={"user": os.environ.get("HADOOP_USER_NAME"), "socket": args.socket})
    threading.Thread(target=engine.serve, daemon=True).start()
    try:                                # server2 closes our stdin to stop us (or dies)
        sys.stdin.read()
    finally:
        engine.listener.close()
        spark.stop()
        if os.environ.get("HADOOP_TOKEN_FILE_LOCATION"):     # no token outlives its engine
            os.unlink(os.environ["HADOOP_TOKEN_FILE_LOCATION"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
