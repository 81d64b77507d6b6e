"""The metastore over the wire, with real Thrift clients of both IDL generations."""

from __future__ import annotations

import pytest
from pymetastore.hive_metastore import ttypes as h3

from hopshive.metastore.api import api
from tests.support.metastore_fixtures import both_stores, hbase_server, WAREHOUSE, hms, hms2, metastore, partition, table  # noqa: F401

# One contract, both stores.
store_backend = both_stores

pytestmark = pytest.mark.metastore


def test_default_database_exists(hms):
    db = hms.get_database("default")
    assert db.locationUri == WAREHOUSE
    assert hms.get_all_databases() == ["default"]


def test_create_database_table_partitions(hms):
    hms.create_database(api.Database(name="Sales", description="d", locationUri=None, parameters={"k": "v"}))
    assert hms.get_database("sales").locationUri == f"{WAREHOUSE}/sales.db"
    t = table("sales", "orders", parts=("ds string", "h int"))
    hms.create_table(t)
    got = hms.get_table("sales", "orders")
    assert got.sd.location == f"{WAREHOUSE}/sales.db/orders"
    assert [c.name for c in got.partitionKeys] == ["ds", "h"]
    added = hms.add_partitions_req(api.AddPartitionsRequest(
        "sales", "orders", [partition(t, ["2024-01-0%d" % d, str(h)]) for d in (1, 2) for h in (1, 5)], False, True))
    assert len(added.partitions) == 4
    assert hms.get_partition_names("sales", "orders", -1) == [
        "ds=2024-01-01/h=1", "ds=2024-01-01/h=5", "ds=2024-01-02/h=1", "ds=2024-01-02/h=5"]
    found = hms.get_partitions_by_filter("sales", "orders", 'ds > "2024-01-01" and h < 5', -1)
    assert [p.values for p in found] == [["2024-01-02", "1"]]
    assert found[0].sd.location == f"{WAREHOUSE}/sales.db/orders/ds=2024-01-02/h=1"


def test_unknown_method_is_a_clean_error(hms2):
    from thrift.Thrift import TApplicationException
    with pytest.raises(TApplicationException) as error:
        hms2.create_role(None)
    assert error.value.type == TApplicationException.UNKNOWN_METHOD
    assert hms2.get_database("default").name == "default"


def test_hive2_get_partition_names_error_is_a_meta_exception(hms2):
    from hmsclient.genthrift.hive_metastore import ttypes as h2
    with pytest.raises(h2.MetaException):
        hms2.get_partition_names("default", "missing", -1)


def test_missing_objects(hms):
    with pytest.raises(h3.NoSuchObjectException):
        hms.get_table("default", "missing")
    with pytest.raises(h3.NoSuchObjectException):
        hms.get_database("missing")


# ------------------------------------------------------------------ the wire itself
def _raw(port: int):
    import socket
    return socket.create_connection(("127.0.0.1", port), timeout=10)


def test_unknown_oneway_call_is_swallowed(metastore):
    """Spark's fb303 `shutdown` arrives as a oneway message; no reply may be written."""
    from thrift.protocol.TBinaryProtocol import TBinaryProtocol
    from thrift.Thrift import TMessageType
    from thrift.transport.TTransport import TMemoryBuffer
    from tests.support.metastore import thrift_client
    buffer = TMemoryBuffer()
    protocol = TBinaryProtocol(buffer)
    protocol.writeMessageBegin("shutdown", TMessageType.ONEWAY, 7)
    protocol.writeStructBegin("shutdown_args")
    protocol.writeFieldStop()
    protocol.writeStructEnd()
    protocol.writeMessageEnd()
    with thrift_client(metastore.port) as client:
        client._oprot.trans.write(buffer.getvalue())      # the oneway call, then a normal one
        assert client.get_database("default").name == "default"


def test_garbage_closes_only_that_connection(metastore, hms):
    for garbage in (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"\x80\x01\x00\x01\xff\xff\xff\xff" + b"x" * 64,
                    b"\x00\x00\x00\x10\x80\x01\x00\x01" + b"\xff" * 12):
        sock = _raw(metastore.port)
        sock.sendall(garbage)
        try:
            assert sock.recv(1024) == b"", "the server closes a connection it cannot read"
        except ConnectionResetError:   # closed with unread input: a reset is a close too
            pass
        sock.close()
    assert hms.get_database("default").name == "default"


def test_framed_transport_is_understood(metastore):
    from pymetastore.hive_metastore import ThriftHiveMetastore
    from thrift.protocol.TBinaryProtocol import TBinaryProtocol
    from thrift.transport import TSocket, TTransport
    transport = TTransport.TFramedTransport(TSocket.TSocket("127.0.0.1", metastore.port))
    transport.open()
    try:
        assert ThriftHiveMetastore.Client(TBinaryProtocol(transport)).get_all_databases() == ["default"]
    finally:
        transport.close()


def test_fb303_and_session_calls(hms2, hms):
    assert hms2.getStatus() == 2
    assert hms.set_ugi("bob", ["g"]) == ["g"]
    assert hms.getMetaConf("hive.metastore.batch.retrieve.max") == "300"
    hms.setMetaConf("hive.metastore.batch.retrieve.max", "10")
    assert hms.getMetaConf("hive.metastore.batch.retrieve.max") == "10"
    with pytest.raises(h3.MetaException, match="Invalid configuration key"):
        hms.getMetaConf("no.such.key")
    assert hms.get_config_value("hive.metastore.warehouse.dir", "x") == WAREHOUSE
    assert hms.get_config_value("unknown", "fallback") == "fallback"
    assert hms.get_current_notificationEventId().eventId == 0


# ------------------------------------------------------------------ partition filters
FILTERS = {  # facts.md: the exact strings Spark sends, and what they select
    'ds = "2024-01-02"': {2},
    'ds > "2024-01-01" and h < 5': {2, 4, 6},        # strings compare as strings: "it's" > "2024..."
    '(ds) in ("a", "b")': {5, 6},
    '(h) in (1, 3)': {1, 2},
    '(n) not in (5, 6)': {3, 4, 6, 7},
    'ds like "2024.*"': {1, 2, 3},
    'ds like ".*01"': {1, 7},
    'ds like ".*-01-.*"': {1, 2, 3},
    'h >= 2 and h <= 8': {2, 3, 4, 5, 6},
    'ds != "a"': {1, 2, 3, 4, 6, 7},
    '(ds = "2024-01-01" or h = 7)': {1, 3},
    'ds >= "2024-01-01" and ds <= "2024-01-15"': {1, 2, 3},
    'ds = "it\'s"': {4},
    'n = 10000000000 and s < 2': {3, 6},
}
ROWS = [(1, "2024-01-01", 1, 5, 1), (2, "2024-01-02", 3, 6, 2), (3, "2024-01-15", 7, 10000000000, 1),
        (4, "it's", 2, 7, 0), (5, "a", 8, 5, 3), (6, "b", 4, 10000000000, 1), (7, "2023-12-01", 9, 8, 1)]


@pytest.fixture
def filtered(hms):
    t = table("default", "f", cols=("v int",), parts=("ds string", "h int", "n bigint", "s int"))
    hms.create_table(t)
    hms.add_partitions([partition(t, [str(x) for x in row[1:]]) for row in ROWS])
    d = table("default", "dt", cols=("v int",), parts=("d date",))
    hms.create_table(d)
    hms.add_partitions([partition(d, [day]) for day in ("2024-01-10", "2024-01-20", "2024-02-01")])
    return {tuple(str(x) for x in row[1:]): row[0] for row in ROWS}


@pytest.mark.parametrize("text", list(FILTERS))
def test_facts_filter_strings(hms, filtered, text):
    found = {filtered[tuple(p.values)] for p in hms.get_partitions_by_filter("default", "f", text, -1)}
    assert found == FILTERS[text]
    assert hms.get_num_partitions_by_filter("default", "f", text) == len(FILTERS[text])


def test_date_key_filter(hms, filtered):
    found = hms.get_partitions_by_filter("default", "dt", 'd > "2024-01-15"', -1)
    assert [p.values for p in found] == [["2024-01-20"], ["2024-02-01"]]


def test_malformed_filter_names_position_and_reason(hms, filtered):
    with pytest.raises(h3.MetaException, match=r"position \d+"):
        hms.get_partitions_by_filter("default", "f", 'ds = "a" and and', -1)
    with pytest.raises(h3.MetaException, match="not a partition key"):
        hms.get_partitions_by_filter("default", "f", 'zz = 1', -1)


def test_partition_value_sets(metastore, filtered):
    found = metastore.store.get_partitions_by_value_sets("default", "f", {"ds": ["a", "b", "x"], "h": ["08", "4"]})
    assert sorted(p.values[0] for p in found) == ["a", "b"]


def test_partial_specs_and_names(hms, filtered):
    assert hms.get_partition_names_ps("default", "f", ["", "7"], -1) == ["ds=2024-01-15/h=7/n=10000000000/s=1"]
    assert len(hms.get_partitions_ps_with_auth("default", "f", ["a"], -1, "alice", [])) == 1
    name = "ds=it%27s/h=2/n=7/s=0"
    assert name in hms.get_partition_names("default", "f", -1)
    assert hms.get_partition_by_name("default", "f", name).values == ["it's", "2", "7", "0"]
    assert [p.values[0] for p in hms.get_partitions_by_names("default", "f", [name, "ds=a/h=8/n=5/s=3"])] == ["a", "it's"]
    assert hms.partition_name_to_vals(name) == ["it's", "2", "7", "0"]


def test_partitions_come_in_name_order_with_or_without_a_limit(hms):
    """Listings are ordered by partition name, code point by code point (as Hive's direct SQL
    orders them); a limit takes the first names in that order."""
    t = table("default", "ordered", parts=("k string",))
    hms.create_table(t)
    values = ["b", "B", "a", "é", "a b", "10", "9", "Z", "it's", "a-"]
    hms.add_partitions([partition(t, [v]) for v in values])
    names = sorted(hms.get_partition_names("default", "ordered", -1))   # Python orders by code point
    assert [n.startswith("k=") for n in names] == [True] * len(values)
    for limit in (-1, 3):
        expected = names if limit < 0 else names[:limit]
        assert hms.get_partition_names("default", "ordered", limit) == expected
        for parts in (hms.get_partitions("default", "ordered", limit),
                      hms.get_partitions_by_filter("default", "ordered", 'k != "zzz"', limit)):
            assert [f"k={p.sd.location.rsplit('k=', 1)[1]}" for p in parts] == expected
