"""Hive naming rules, locations and the Thrift error placement (no servers)."""

from __future__ import annotations

import pytest
from hmsclient.genthrift.hive_metastore import ThriftHiveMetastore as Hive2
from pymetastore.hive_metastore import ThriftHiveMetastore as Hive3
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.transport.TTransport import TMemoryBuffer

from hopshive.metastore.exceptions import InvalidInput, InvalidObject, NoSuchObject
from hopshive.metastore.locations import Locations, replace_prefix
from hopshive.metastore.names import escape, make_part_name, matches, parse_part_name, unescape
from hopshive.metastore.thrift.errors import place_error


@pytest.mark.parametrize("value, escaped", [("2024-01-01", "2024-01-01"), ("a:b", "a%3Ab"), ("it's", "it%27s"),
                                            ("a/b=c", "a%2Fb%3Dc"), ("", "__HIVE_DEFAULT_PARTITION__"),
                                            ("é ü", "é ü"), ("50%", "50%25")])
def test_partition_value_escaping_round_trips(value, escaped):
    assert escape(value) == escaped
    if value:
        assert unescape(escaped) == value


def test_partition_names():
    assert make_part_name(["DS", "h"], ["a:b", "1"]) == "ds=a%3Ab/h=1"
    assert parse_part_name("ds=a%3Ab/h=1", ["ds", "h"]) == ["a:b", "1"]
    with pytest.raises(InvalidInput):
        parse_part_name("ds=a", ["ds", "h"])
    with pytest.raises(InvalidObject):
        make_part_name(["ds"], ["a", "b"])


@pytest.mark.parametrize("pattern, name, expected", [("*", "x", True), ("sales*", "Sales_2", True),
                                                     ("a|b", "b", True), ("a|b", "ab", False), (None, "x", True)])
def test_patterns(pattern, name, expected):
    assert matches(pattern, name) is expected


def test_locations():
    locations = Locations(["webhdfs://127.0.0.1:9870", "hdfs://nn:8020"], "webhdfs://127.0.0.1:9870/user/hive/warehouse")
    assert locations.parse("webhdfs://127.0.0.1:9870/user/hive/warehouse/t/ds=a%3Ab").path == \
        "/user/hive/warehouse/t/ds=a%3Ab"
    assert locations.parse("hdfs://NN:8020/x//y/").path == "/x/y"
    assert locations.parse("/plain/path").ours
    assert not locations.parse("s3a://bucket/x").ours
    assert not locations.parse("webhdfs://other:9870/x").ours
    assert locations.database_default("default") == "webhdfs://127.0.0.1:9870/user/hive/warehouse"
    assert locations.database_default("s") == "webhdfs://127.0.0.1:9870/user/hive/warehouse/s.db"
    with pytest.raises(InvalidObject):
        locations.parse("relative/path")
    assert replace_prefix("w/a/t/ds=1", "w/a/t", "w/b/t2") == "w/b/t2/ds=1"
    assert replace_prefix("w/a/tt/ds=1", "w/a/t", "w/b/t2") == "w/a/tt/ds=1"


def _decode_as_hive2(result) -> object:
    """Write a Hive 3 result, read it back with the Hive 2 IDL, as a Spark client would."""
    buffer = TMemoryBuffer()
    result.write(TBinaryProtocol(buffer))
    hive2 = Hive2.get_partition_names_result()
    hive2.read(TBinaryProtocol(TMemoryBuffer(buffer.getvalue())))
    return hive2


@pytest.mark.parametrize("error", [NoSuchObject("no table"), InvalidInput("bad"), RuntimeError("bug")])
def test_get_partition_names_errors_reach_hive2_as_meta_exception(error):
    result = Hive3.get_partition_names_result()
    assert place_error("get_partition_names", result, error) is result.o1
    assert result.o1 is not None and result.o2 is None
    assert _decode_as_hive2(result).o2.message == result.o1.message   # Hive 2 names field 1 "o2"


def test_errors_go_to_the_matching_field():
    result = Hive3.get_table_result()
    place_error("get_table", result, NoSuchObject("gone"))
    assert result.o2.message == "gone"
    result = Hive3.add_partition_result()
    place_error("add_partition", result, NoSuchObject("no table"))
    assert type(result.o1).__name__ == "InvalidObjectException"
    result = Hive3.get_all_databases_result()
    place_error("get_all_databases", result, RuntimeError("secret detail"))
    assert "Internal error" in result.o1.message and "secret detail" not in result.o1.message
