"""SparkSession construction and helpers shared by the Spark scenarios."""

from __future__ import annotations

import os
from contextlib import contextmanager
from urllib.parse import unquote

from .targets import Targets


def session(targets: Targets, warehouse: str, app: str = "hopshive-harness"):
    """A local[2] SparkSession acting as ``targets.user`` on WebHDFS."""
    os.environ["HADOOP_USER_NAME"] = targets.user  # read by the JVM's UserGroupInformation at start
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").appName(app)
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.catalogImplementation", "in-memory")  # a Hive metastore comes later
             .config("spark.sql.warehouse.dir", warehouse)
             .config("spark.sql.shuffle.partitions", "4")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.driver.memory", "1g")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


@contextmanager
def conf(spark, **settings):
    """Set SQL confs for the duration of a block (dotted names given with '__' for '.')."""
    names = {k.replace("__", "."): v for k, v in settings.items()}
    old = {k: spark.conf.get(k, None) for k in names}
    for k, v in names.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)


def rows(df) -> list[tuple]:
    """A DataFrame's rows as sorted tuples (columns in name order), for exact comparison."""
    columns = sorted(df.columns)
    return sorted((tuple(r) for r in df.select(*columns).collect()), key=repr)


def partition_dirs(files: list[str], root: str) -> set[str]:
    """Relative partition directories (``k=v/...``) of data files below ``root``."""
    prefix = root.rstrip("/") + "/"
    return {f[len(prefix):].rsplit("/", 1)[0] for f in files if f.startswith(prefix)}


def input_files(df) -> list[str]:
    """Files a DataFrame reads, as plain decoded paths (scheme and authority removed)."""
    return [unquote(_strip_authority(f)) for f in df.inputFiles()]


def _strip_authority(uri: str) -> str:
    if "://" not in uri:
        return uri.split(":", 1)[-1] if uri.startswith("file:") else uri
    rest = uri.split("://", 1)[1]
    return "/" + rest.split("/", 1)[1] if "/" in rest else "/"
