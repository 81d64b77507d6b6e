"""SparkSession construction and helpers shared by the Spark scenarios."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import unquote

import pytest

from . import identity, trust
from .targets import Targets

SPARK_TIMEOUT = 900


def session(targets: Targets, warehouse: str, work: Path, app: str = "hopshive-harness"):
    """A local[2] SparkSession acting as ``targets.user`` on WebHDFS (its token file, if the
    deployment wants tokens, is written in ``work``)."""
    os.environ["HADOOP_USER_NAME"] = targets.user  # read by the JVM's UserGroupInformation at start
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    token_file = identity.token_file(targets.user, work / "token")
    tls = {"SPARK_CONF_DIR": trust.spark_conf_dir()} if trust.ca_file() else {}    # ssl-client.xml
    _stop_gateway()
    with environment(HADOOP_TOKEN_FILE_LOCATION=str(token_file) if token_file else None, **tls):
        spark = _local_session(app, warehouse)
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _stop_gateway() -> None:
    """End a JVM an earlier in-process session left (the component tests run in this
    process first): Hadoop logs its user in once per JVM, from the environment at that time,
    so a reused JVM would act as that earlier user without this session's token."""
    from pyspark import SparkContext
    gateway = SparkContext._gateway
    if gateway is None:
        return
    if SparkContext._active_spark_context is not None:
        SparkContext._active_spark_context.stop()
    gateway.shutdown()
    process = getattr(gateway, "proc", None)
    if process is not None:             # the JVM exits when its stdin closes (PythonGatewayServer)
        process.stdin.close()
        process.wait(timeout=60)
    SparkContext._gateway = SparkContext._jvm = None


@contextmanager
def environment(**values):
    """Environment variables (None: unset) for the block only: a JVM started in it keeps
    them, later subprocesses (beeline, hopshive-dfs) do not inherit them."""
    old = {name: os.environ.get(name) for name in values}
    try:
        _set_environment(values)
        yield
    finally:
        _set_environment(old)


def _set_environment(values: dict) -> None:
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def _local_session(app: str, warehouse: str):
    from pyspark.sql import SparkSession
    return (SparkSession.builder.master("local[2]").appName(app)
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.catalogImplementation", "in-memory")  # a Hive metastore comes later
            .config("spark.sql.warehouse.dir", warehouse)
            .config("spark.sql.shuffle.partitions", "4")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.driver.memory", "1g")
            .getOrCreate())


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


def spark_conf_problem(targets) -> str | None:
    """Why the deployment's Spark client configuration cannot be used, if it is expected."""
    if targets.spark_conf_dir and not (Path(targets.spark_conf_dir) / "spark-defaults.conf").exists():
        return f"no Spark client configuration in {targets.spark_conf_dir} (roles/spark)"
    return None


def remove_run_trash(webhdfs, user: str, root: str) -> None:
    """Hive serde INSERT OVERWRITE moves the old files to the user's trash, mirroring the
    path: remove what a run's workload put there."""
    trash = f"/user/{user}/.Trash"
    for entry in webhdfs.list(trash) if webhdfs.status(trash) else []:
        webhdfs.delete(f"{trash}/{entry['pathSuffix']}{root}", recursive=True)


def hive_session(targets, uris: str, warehouse: str, work: Path, extra: tuple[str, ...] = ()):
    """A Spark session with Hive support on the metastores ``uris``, in a JVM of its own,
    acting as ``targets.spark_user``.  Where the deployment wrote the Spark client
    configuration on this machine (roles/spark) it takes everything but its warehouse and
    metastores from there, as a user's pyspark would; otherwise it is configured from the
    targets.  With its token file where the deployment wants tokens, and ``extra`` arguments
    of SparkProcess last.  Started here, awaited on first use."""
    pytest.importorskip("pyspark", reason="PySpark is not installed (requirements-test.txt)")
    from hopshive.server2.server import METASTORE_TOKEN_CONF
    from tests.support.spark_extension import build_jar, session_args
    from tests.support.spark_workload import SparkProcess

    if targets.spark_conf_dir:
        args, conf_dir = ["--catalog", "defaults", "--warehouse", warehouse], targets.spark_conf_dir
        if uris != targets.metastore_uris:
            args += ["--conf", f"spark.hadoop.hive.metastore.uris={uris}"]
    else:
        args = ["--catalog", "hive", "--uris", uris, "--warehouse", warehouse,
                "--conf", f"spark.hadoop.fs.defaultFS={targets.uri('')}",
                "--conf", "spark.hadoop.hive.metastore.failure.retries=3",
                "--conf", "spark.hadoop.hive.metastore.client.connect.retry.delay=1s",
                *session_args(build_jar(work / "spark-extension"))]
        if identity.secured():
            args += [arg for key, value in METASTORE_TOKEN_CONF.items() for arg in ("--conf", f"{key}={value}")]
        conf_dir = trust.spark_conf_dir()     # ssl-client.xml and the truststore with TLS, else None
    env = {"HADOOP_USER_NAME": targets.spark_user}
    if token_file := identity.token_file(targets.spark_user, work / "token"):
        env["HADOOP_TOKEN_FILE_LOCATION"] = str(token_file)
    return SparkProcess([*args, *extra], work / "spark.log", conf_dir=conf_dir, env=env)


class Reference:
    """Spark's built-in catalog (embedded Derby) on local disk, in a JVM of its own: the
    reference every Hive session's run of the workload is compared with.  The first user
    starts its run (so it works while the Hive session does); the answers are kept."""

    def __init__(self, work: Path, prefix: str):
        from tests.support.spark_workload import SparkProcess
        self.work, self.prefix, self.answers, self.submitted = work, prefix, None, False
        self.session = SparkProcess(["--catalog", "derby", "--derby", str(work / "derby"),
                                     "--warehouse", (work / "warehouse").as_uri()], work / "spark.log")

    def start(self) -> None:
        from tests.support.spark_workload import PHASES
        if not self.submitted:
            self.session.ready(SPARK_TIMEOUT)
            self.session.submit(PHASES, (self.work / "data" / "ext").as_uri(), self.prefix)
            self.submitted = True

    def results(self) -> dict:
        if self.answers is None:
            self.start()
            self.answers = self.session.result(SPARK_TIMEOUT)
            self.session.close()   # its JVM is not needed any more
        return self.answers
