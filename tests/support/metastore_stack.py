"""A namenode and the real hopshive-metastore on fresh schemas, on either store (the HBase
store on our HBase Thrift server): what the Spark component modules run their sessions on."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from hopshive.core.db import Database
from tests.support.hbase import HBaseServerProcess
from tests.support.metastore import MetastoreProcess, settings
from tests.support.namenode import NamenodeServer
from tests.support.schemas import reset_schemas


@dataclass
class MetastoreStack:
    db: Database
    namenode: NamenodeServer
    metastore: MetastoreProcess


@contextlib.contextmanager
def metastore_stack(mariadb, base: Path, backend: str = "mysql", **metastore) -> Iterator[MetastoreStack]:
    """``metastore``: settings (e.g. workers, lock_timeout) on top of the tests'.  The
    metastore must exit cleanly when stopped."""
    database = Database(mariadb.config)
    reset_schemas(database)
    namenode = NamenodeServer(base / "namenode", mariadb.config, workers=1).start()
    config = settings(mariadb.config, namenode.address, backend=backend, **metastore)
    hbase = HBaseServerProcess(base / "hbase").start() if backend == "hbase" else None
    if hbase is not None:
        config["hbase"]["port"] = hbase.port
    server = MetastoreProcess(base / "metastore", config).start()
    try:
        yield MetastoreStack(database, namenode, server)
    finally:
        code = server.stop()
        if hbase is not None:
            hbase.stop()
        namenode.stop()
        database.close()
    assert code == 0, server.log_tail()
