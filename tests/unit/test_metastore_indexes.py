"""What the service decides about an index before a store sees it (hopshive.metastore.indexes)."""

from __future__ import annotations

import pytest
from hmsclient.genthrift.hive_metastore import ttypes as h2

from hopshive.metastore.api import api
from hopshive.metastore.exceptions import InvalidObject
from hopshive.metastore.indexes import altered_index, convert, index_table_name, prepare_index, to_wire
from tests.support.hms import index, table

DATABASE = api.Database(name="sales", locationUri="webhdfs://nn:9870/user/hive/warehouse/sales.db", parameters={})


def base(kind: str = "MANAGED_TABLE"):
    t = table("sales", "orders", cols=("id int", "Region string", "amount double"), parts=("ds string",))
    t.tableType = kind
    return t


def test_hive_names_the_index_table():
    assert index_table_name("sales", "orders", "by_region") == "sales__orders_by_region__"


def test_an_index_gets_its_covered_columns_a_ddl_time_and_an_index_table_in_the_database():
    idx, idx_table = index(base(), "By_Region", ["region"])
    prepared, table_out, create_dir = prepare_index(idx, idx_table, base(), DATABASE)
    assert (prepared.indexName, prepared.indexTableName) == ("by_region", "sales__orders_by_region__")
    assert [(c.name, c.type) for c in prepared.sd.cols] == [("region", "string")]
    assert prepared.sd.location is None and isinstance(prepared.sd, api.StorageDescriptor)
    assert prepared.createTime > 0 and prepared.parameters["transient_lastDdlTime"] == str(prepared.createTime)
    assert isinstance(table_out, api.Table) and table_out.tableType == "INDEX_TABLE"
    assert table_out.sd.location == f"{DATABASE.locationUri}/sales__orders_by_region__" and create_dir


def test_the_index_may_name_its_table():
    idx, idx_table = index(base(), "x", ["id"], index_table="Orders_X")
    prepared, table_out, _ = prepare_index(idx, idx_table, base(), DATABASE)
    assert prepared.indexTableName == table_out.tableName == "orders_x"


def test_no_index_table_means_none():
    idx, _ = index(base(), "x", ["id"], index_table="named")
    prepared, table_out, create_dir = prepare_index(idx, None, base(), DATABASE)
    assert prepared.indexTableName is None and table_out is None and not create_dir


@pytest.mark.parametrize("cols", [[], ["nope"], ["id", "id"], ["ds"]],
                         ids=["none", "unknown", "twice", "partition key"])
def test_columns_must_be_columns_of_the_base_table(cols):
    idx, idx_table = index(base(), "x", cols)
    with pytest.raises(InvalidObject, match="Check the index columns, they should appear in the table being indexed."):
        prepare_index(idx, idx_table, base(), DATABASE)


def test_views_and_index_tables_cannot_be_indexed():
    with pytest.raises(InvalidObject, match="tableName=orders is a VIRTUAL VIEW. Index on VIRTUAL VIEW is not"):
        prepare_index(*index(base("VIRTUAL_VIEW"), "x", ["id"]), base("VIRTUAL_VIEW"), DATABASE)
    with pytest.raises(InvalidObject, match="is an index table"):
        prepare_index(*index(base("INDEX_TABLE"), "x", ["id"]), base("INDEX_TABLE"), DATABASE)


def test_a_handler_and_a_valid_name_are_required():
    idx, idx_table = index(base(), "x", ["id"], handler="")
    with pytest.raises(InvalidObject, match="names no index handler class"):
        prepare_index(idx, idx_table, base(), DATABASE)
    idx, idx_table = index(base(), "no-dash", ["id"])
    with pytest.raises(InvalidObject, match="is not a valid index name"):
        prepare_index(idx, idx_table, base(), DATABASE)


def test_alter_changes_only_the_parameters_and_the_wire_form_is_hive2():
    prepared, _, _ = prepare_index(*index(base(), "x", ["id"]), base(), DATABASE)
    sent = to_wire(prepared)
    sent.indexHandlerClass, sent.parameters = "other", {"k": "v"}
    altered = altered_index(prepared, sent)
    assert altered.indexHandlerClass == prepared.indexHandlerClass and altered.parameters["k"] == "v"
    wire = to_wire(altered)
    assert isinstance(wire.sd, h2.StorageDescriptor) and convert(wire.sd, api.StorageDescriptor) == altered.sd
