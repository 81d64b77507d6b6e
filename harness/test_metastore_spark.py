"""PySpark 4.3 with Hive support (Hive 2.3 metastore client) against the deployed metastore
instances and WebHDFS: the DDL/DML workload of notes/facts.md (tests/support/spark_workload.py,
the same one the component tests run) compared statement by statement with Spark's
built-in catalog on local disk, then the invariant check.

The Hive session is the run's shared `hive_spark` JVM: on a machine that has the deployed
Spark client configuration it is configured by that alone (roles/spark), and the first test
checks what it read.  Its warehouse is <run root>/hive-warehouse; the workload's databases
are <prefix>w1 and <prefix>w2, unique to the run."""

from __future__ import annotations


import pytest
from pymetastore.hive_metastore import ttypes as api

from harness.support import metastore as ms
from harness.support.spark import SPARK_TIMEOUT, remove_run_trash
from tests.support.spark_workload import PHASES, assert_same_results

pytestmark = [pytest.mark.metastore, pytest.mark.spark]


@pytest.fixture(scope="module")
def prefix(workload_prefix) -> str:
    return workload_prefix


@pytest.fixture(scope="module")
def workload(hive_spark, spark_reference, targets, root, prefix, metastores, webhdfs, db, spark_home):
    """(ours, reference): the workload's results on the deployment and on the built-in
    catalog (conftest's run, shared with the HBase-store scenario), the sessions working
    side by side."""
    started = ms.now(db)
    ms.drop_databases(metastores[0], targets.user, prefix)
    spark_reference.start()
    hive_spark.ready(SPARK_TIMEOUT)
    hive_spark.submit(PHASES, targets.uri(f"{spark_home}/ext"), prefix)
    results = hive_spark.result(SPARK_TIMEOUT), spark_reference.results()
    yield results
    ms.drop_databases(metastores[0], targets.user, prefix)
    ms.sweep_orphans(targets.db, started)   # what foreign keys cannot reach (fsck repair, the cleaner's job)
    remove_run_trash(webhdfs, targets.spark_user, root)


def test_spark_uses_the_deployed_metastores(hive_spark, spark_reference, targets, metastores, root, prefix):
    """The session's catalog is the deployed metastore: what Spark creates, Thrift sees."""
    info = hive_spark.ready(SPARK_TIMEOUT)
    if targets.spark_conf_dir:   # configured by the deployment's files alone
        assert info["spark_conf_dir"] == targets.spark_conf_dir
        assert info["catalog"] == "hive", info
        assert sorted(info["uris"].split(",")) == sorted(targets.metastore_uris.split(",")), info
        assert info["default_fs"] == targets.uri(""), info
        assert int(info["failure_retries"]) >= 1, info
    name = f"{prefix}probe"
    result = hive_spark.run({"probe": [f"CREATE DATABASE {name}", "SHOW DATABASES"]}, timeout=SPARK_TIMEOUT)["probe"]
    try:
        assert result[f"CREATE DATABASE {name}"] == [], result
        with ms.client(metastores[-1], targets.user) as client:
            assert client.get_database(name).locationUri == targets.uri(f"{root}/hive-warehouse/{name}.db")
    finally:
        hive_spark.run({"cleanup": [f"DROP DATABASE IF EXISTS {name} CASCADE"]}, timeout=SPARK_TIMEOUT)


@pytest.mark.parametrize("phase", ["prepare", "setup", "queries", "teardown"])
def test_same_results_as_the_builtin_catalog(workload, phase):
    assert_same_results(workload[0], workload[1], phase)


def test_overwrite_and_truncate_keep_the_table(workload):
    """Static and dynamic overwrites and TRUNCATE TABLE with the deployed commit protocol and
    SQL extension (roles/spark): the same rows and partitions as Spark on local disk, and the
    tables survive."""
    test_same_results_as_the_builtin_catalog(workload, "overwrite")


def test_workload_leaves_consistent_metadata(workload, db, targets, root, metastores, prefix):
    warehouse = targets.uri(f"{root}/hive-warehouse")
    assert ms.violations(db, warehouse) == {}
    with ms.client(metastores[0], targets.user) as client:
        assert [n for n in client.get_all_databases() if n.startswith(prefix)] == []
    assert ms.counts(db, warehouse) == {"databases": 0, "tables": 0, "partitions": 0, "descriptors": 0}


def test_spark_gets_hives_permission_error_on_a_database_it_cannot_write(hive_spark, targets, metastores, root,
                                                                        prefix, webhdfs):
    """The session's user owns what it made above; a database of another user (0755) it may
    read but not write, and Spark reports the metastore's error unchanged."""
    name, path = f"{prefix}locked", f"{root}/locked.db"
    with ms.client(metastores[0], targets.user) as owner:
        owner.create_database(api.Database(name=name, locationUri=targets.uri(path), parameters={}))
    try:
        result = hive_spark.run({"locked": [f"SHOW TABLES IN {name}", f"CREATE TABLE {name}.t (a INT)"]},
                                timeout=SPARK_TIMEOUT)["locked"]
        assert result[f"SHOW TABLES IN {name}"] == [], result
        refused = result[f"CREATE TABLE {name}.t (a INT)"]
        assert "error" in refused, refused
        assert f"Permission denied: user={targets.spark_user}, access=WRITE" in refused["message"], refused
    finally:
        ms.drop_databases(metastores[0], targets.user, name)

