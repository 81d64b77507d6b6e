"""pyiceberg's HiveCatalog (Hive 3+ IDL, a client nobody here wrote): namespaces, tables,
and commits, which take a Hive lock (lock / check_lock / unlock) around alter_table."""

from __future__ import annotations

import pytest

from tests.support.metastore import invariant_violations
from tests.support.metastore_fixtures import both_stores, hbase_server, metastore  # noqa: F401

# One contract, both stores.
store_backend = both_stores

pytestmark = pytest.mark.metastore
hive = pytest.importorskip("pyiceberg.catalog.hive", reason="pyiceberg[hive] is not installed")


@pytest.fixture
def catalog(metastore, tmp_path):
    return hive.HiveCatalog("hms", **{"uri": f"thrift://127.0.0.1:{metastore.port}",
                                      "warehouse": f"file://{tmp_path}/warehouse"})


def test_namespace_table_and_commit(catalog, tmp_path, db, metastore):
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType
    catalog.create_namespace("ice", {"location": f"file://{tmp_path}/ice.db", "owner": "alice"})
    assert ("ice",) in catalog.list_namespaces()
    schema = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "name", StringType()))
    created = catalog.create_table("ice.t", schema)
    assert catalog.list_tables("ice") == [("ice", "t")]
    first_location = created.metadata_location
    with created.transaction() as transaction:
        transaction.set_properties(owner_team="data")
    loaded = catalog.load_table("ice.t")
    assert loaded.properties["owner_team"] == "data"
    assert loaded.metadata_location != first_location
    assert metastore.store.show_locks() == [], "the commit's lock was released"
    catalog.rename_table("ice.t", "ice.t2")
    assert catalog.list_tables("ice") == [("ice", "t2")]
    catalog.drop_table("ice.t2")
    catalog.drop_namespace("ice")
    assert invariant_violations(db) == {}
