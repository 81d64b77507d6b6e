"""The stack of the Spark index tests (tests/component/test_indexes_spark*.py): a namenode, the
real hopshive-metastore on either store (the HBase store on our HBase Thrift server) and a
PySpark session with HopsHive's extension, database ix of tests/support/index_workload made."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from tests.support import index_workload as ix
from tests.support.metastore_stack import metastore_stack
from tests.support.namenode import NamenodeServer
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
    with metastore_stack(mariadb, base, backend, workers=1, **metastore) as servers:
        args = ["--catalog", "hive", "--uris", f"thrift://127.0.0.1:{servers.metastore.port}",
                "--warehouse", f"webhdfs://{servers.namenode.address}/user/hive/warehouse",
                *session_args(build_jar(base / "spark-extension"))]
        spark = SparkProcess(args, base / "spark.log")
        try:
            ix.ok(spark, ix.SETUP, timeout=TIMEOUT)
            yield IndexStack(spark, servers.metastore.port, servers.namenode, args, base)
        finally:
            spark.close()
