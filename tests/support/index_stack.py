"""The stack of the Spark index tests (tests/component/test_indexes_spark*.py): a namenode, the
real hopshive-metastore on either store (the HBase store on our HBase Thrift server) and a
PySpark session with HopsHive's extension, database ix of tests/support/index_workload made."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from hopshive.core.db import Database
from tests.support import index_workload as ix
from tests.support.hbase import HBaseServerProcess
from tests.support.metastore import MetastoreProcess, settings
from tests.support.namenode import NamenodeServer
from tests.support.schemas import reset_schemas
from tests.support.spark_extension import build_jar, session_args
from tests.support.spark_workload import SparkProcess

TIMEOUT = 600


@dataclass
class IndexStack:
    spark: SparkProcess
    port: int                       # the metastore's
    namenode: NamenodeServer
    session_args: list[str]         # for another session on the same metastore
    base: Path


@contextlib.contextmanager
def index_stack(mariadb, base: Path, backend: str = "mysql", **metastore) -> Iterator[IndexStack]:
    """The stack on fresh schemas; ``metastore`` settings (e.g. lock_timeout) on top of the tests'."""
    database = Database(mariadb.config)
    reset_schemas(database)
    namenode = NamenodeServer(base / "namenode", mariadb.config, workers=1).start()
    config = settings(mariadb.config, namenode.address, workers=1, backend=backend, **metastore)
    hbase = HBaseServerProcess(base / "hbase").start() if backend == "hbase" else None
    if hbase is not None:
        config["hbase"]["port"] = hbase.port
    server = MetastoreProcess(base / "metastore", config).start()
    args = ["--catalog", "hive", "--uris", f"thrift://127.0.0.1:{server.port}",
            "--warehouse", f"webhdfs://{namenode.address}/user/hive/warehouse",
            *session_args(build_jar(base / "spark-extension"))]
    spark = SparkProcess(args, base / "spark.log")
    try:
        ix.ok(spark, ix.SETUP, timeout=TIMEOUT)
        yield IndexStack(spark, server.port, namenode, args, base)
    finally:
        spark.close()
        code = server.stop()
        if hbase is not None:
            hbase.stop()
        namenode.stop()
        database.close()
    assert code == 0, server.log_tail()
