"""The metastore instances on the HBase store, as deployed (local: 127.0.0.1:9085 beside the
hbase group's Thrift server; cluster: one per metastore host, all on hb1's server): a table
made through one instance is served by every other, partition filters on any column
return exactly the partitions they name, a malformed filter is refused with its position
and changes nothing, and a dropped table leaves no partition behind.  Real clients on it:
the Spark 4.3 DDL/DML workload (tests/support/spark_workload.py), compared statement by
statement with Spark's built-in catalog (the run's reference, shared with
test_metastore_spark.py), and pyiceberg's HiveCatalog."""

from __future__ import annotations

import datetime
import itertools

import pytest
from pymetastore.hive_metastore import ttypes as api

from harness.support import identity, metastore as ms, trust
from harness.support.spark import SPARK_TIMEOUT, hive_session, remove_run_trash, spark_conf_problem
from tests.support.hms import database, partition, table
from tests.support.spark_workload import PHASES, assert_same_results

pytestmark = pytest.mark.metastore
YEARS, REGIONS, DAYS = (2023, 2024, 2025), ("eu", "us", "eu-north"), ("2026-01-01", "2026-01-02")
VALUES = [(y, r, d) for y, r, d in itertools.product(YEARS, REGIONS, DAYS)]
# filter -> which (year, region, day) it keeps, said again in Python
FILTERS = {
    "y = 2024 and region = 'us' and d = '2026-01-02'": lambda y, r, d: (y, r, d) == (2024, "us", "2026-01-02"),
    "region = 'eu'": lambda y, r, d: r == "eu",                       # second column alone
    "d > '2026-01-01'": lambda y, r, d: d > "2026-01-01",             # third column alone
    "y >= 2024 and region != 'us'": lambda y, r, d: y >= 2024 and r != "us",
    "region like 'eu.*' or y < 2024": lambda y, r, d: r.startswith("eu") or y < 2024,
    "y = 2030": lambda y, r, d: False,
}


@pytest.fixture(scope="module")
def hbase_metastores(targets) -> list[tuple]:
    problems = {f"{host}:{port}": why for host, port in targets.hbase_metastores if (why := ms.probe((host, port)))}
    if problems:
        reason = f"metastore instances on the HBase store ({targets.source}) are not usable: {problems}"
        if targets.required:
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    return list(targets.hbase_metastores)


@pytest.fixture
def sales(hbase_metastores, scratch, targets):
    """A partitioned table of 18 partitions in a database of its own, made through the first
    instance; dropped (with its directories) after."""
    name = f"{scratch.prefix}hb"
    with ms.client(hbase_metastores[0], targets.user) as hive:
        hive.create_database(database(name, f"{scratch.uri}/{name}.db"))
        hive.create_table(table(name, "sales", parts=("y int", "region string", "d date"),
                                location=f"{scratch.uri}/{name}.db/sales"))
        made = hive.get_table(name, "sales")
        hive.add_partitions([partition(made, [str(y), r, d]) for y, r, d in VALUES])
    yield name
    ms.drop_databases(hbase_metastores[0], targets.user, scratch.prefix)


def kept(parts) -> list[tuple]:
    return sorted((int(p.values[0]), p.values[1], str(datetime.date.fromisoformat(p.values[2]))) for p in parts)


def test_every_instance_serves_the_same_partitions(hbase_metastores, sales, targets):
    for instance in hbase_metastores:
        with ms.client(instance, targets.user) as hive:
            assert kept(hive.get_partitions(sales, "sales", -1)) == sorted(VALUES), instance
            for text, keep in FILTERS.items():
                expected = sorted(v for v in VALUES if keep(*v))
                assert kept(hive.get_partitions_by_filter(sales, "sales", text, -1)) == expected, (instance, text)
                assert hive.get_num_partitions_by_filter(sales, "sales", text) == len(expected), (instance, text)


@pytest.mark.parametrize("text", ["y = ", "region = 'eu' and and y = 1", "nosuchcolumn = 1", "y = 'x' ) ("])
def test_a_malformed_filter_is_refused_and_changes_nothing(hbase_metastores, sales, targets, text):
    with ms.client(hbase_metastores[-1], targets.user) as hive:
        with pytest.raises(api.MetaException) as refused:
            hive.get_partitions_by_filter(sales, "sales", text, -1)
        assert refused.value.message and "Traceback" not in refused.value.message
        assert len(hive.get_partitions(sales, "sales", -1)) == len(VALUES)


def test_a_dropped_table_leaves_no_partition(hbase_metastores, sales, scratch, targets):
    """Partition rows are keyed by database and table name: a table made again under the same
    name would show any row the drop left behind."""
    with ms.client(hbase_metastores[0], targets.user) as hive:
        hive.drop_table(sales, "sales", True)
        hive.create_table(table(sales, "sales", parts=("y int", "region string", "d date"),
                                location=f"{scratch.uri}/{sales}.db/sales"))
    for instance in hbase_metastores:
        with ms.client(instance, targets.user) as hive:
            assert hive.get_partitions(sales, "sales", -1) == [], instance
            assert hive.get_num_partitions_by_filter(sales, "sales", "y >= 2023") == 0, instance


@pytest.fixture(scope="module")
def hbase_spark(hbase_metastores, targets, root, spark_home, webhdfs, tmp_path_factory):
    """A Spark session like the run's Hive session (the deployed client configuration where
    there is one), on the HBase-store instances, with a warehouse of its own."""
    if problem := spark_conf_problem(targets):
        pytest.skip(problem)
    warehouse = f"{root}/hive-warehouse-hbase"
    webhdfs.mkdirs(warehouse, "755")
    webhdfs.chown(warehouse, targets.spark_user)
    uris = ",".join(f"thrift://{host}:{port}" for host, port in hbase_metastores)
    process = hive_session(targets, uris, targets.uri(warehouse), tmp_path_factory.mktemp("hbase-spark"))
    yield process
    process.close()


@pytest.fixture(scope="module")
def hbase_workload(hbase_spark, spark_reference, hbase_metastores, targets, root, spark_home, webhdfs,
                   workload_prefix):
    """(ours on the HBase store, reference): the workload in the same database names as the
    reference's run -- names of the HBase store's own catalog, directories in its warehouse."""
    ms.drop_databases(hbase_metastores[0], targets.user, workload_prefix)
    spark_reference.start()
    hbase_spark.ready(SPARK_TIMEOUT)
    hbase_spark.submit(PHASES, targets.uri(f"{spark_home}/ext-hbase"), workload_prefix)
    results = hbase_spark.result(SPARK_TIMEOUT), spark_reference.results()
    hbase_spark.close()      # its JVM is not needed any more
    yield results
    ms.drop_databases(hbase_metastores[0], targets.user, workload_prefix)
    remove_run_trash(webhdfs, targets.spark_user, root)


@pytest.mark.spark
@pytest.mark.parametrize("phase", list(PHASES))
def test_spark_workload_on_the_hbase_store(hbase_workload, phase):
    assert_same_results(hbase_workload[0], hbase_workload[1], phase)


def test_pyiceberg_hive_catalog(hbase_metastores, scratch, targets, tmp_path):
    """pyiceberg's HiveCatalog (Hive 3+ IDL): namespaces, tables, a commit (which takes a
    Hive lock around alter_table), seen by every instance; rename and drops.  Where the
    metastores believe only tokens, through hopshive.clients.pyiceberg's TokenHiveCatalog
    (pyiceberg's catalog, connecting with SASL DIGEST-MD5) and the user's token."""
    pytest.importorskip("pyiceberg.catalog.hive", reason="pyiceberg[hive] is not installed")
    from pyiceberg.catalog import load_catalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    host, port = hbase_metastores[0]
    properties = {"uri": f"thrift://{host}:{port}", "warehouse": f"file://{tmp_path}/wh"}
    if token := identity.token(targets.user):
        properties.update({"py-catalog-impl": "hopshive.clients.pyiceberg.TokenHiveCatalog", "hopshive.token": token})
        if trust.ca_file():
            properties["hopshive.ca-file"] = trust.ca_file()
    else:
        properties["type"] = "hive"
    catalog = load_catalog("hms", **properties)
    namespace = f"{scratch.prefix}ice"
    try:
        catalog.create_namespace(namespace, {"location": f"file://{tmp_path}/{namespace}.db"})
        created = catalog.create_table(f"{namespace}.t", Schema(NestedField(1, "id", LongType(), required=False),
                                                                NestedField(2, "name", StringType())))
        first_location = created.metadata_location
        with created.transaction() as transaction:
            transaction.set_properties(owner_team="data")
        loaded = catalog.load_table(f"{namespace}.t")
        assert loaded.properties["owner_team"] == "data"
        assert loaded.metadata_location != first_location
        for instance in hbase_metastores:
            with ms.client(instance, targets.user) as client:
                assert client.get_table(namespace, "t").parameters["metadata_location"] == \
                    loaded.metadata_location, instance
                locks = client.show_locks(api.ShowLocksRequest(dbname=namespace))
                assert not locks.locks, "the commit's lock was released"
        catalog.rename_table(f"{namespace}.t", f"{namespace}.t2")
        assert catalog.list_tables(namespace) == [(namespace, "t2")]
        catalog.drop_table(f"{namespace}.t2")
        catalog.drop_namespace(namespace)
        assert (namespace,) not in catalog.list_namespaces()
    finally:
        ms.drop_databases(hbase_metastores[0], targets.user, namespace)
