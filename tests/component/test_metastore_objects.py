"""Functions, column statistics, locks, table and partition alteration over Thrift."""

from __future__ import annotations

import pytest
from pymetastore.hive_metastore import ttypes as h3

from hopshive.metastore.api import api
from tests.support.metastore_fixtures import (both_stores, hbase_server, hms, metastore, partition,  # noqa: F401
                                               table)

# One contract, both stores (pyiceberg's catalog tests do the same with their backends).
store_backend = both_stores

pytestmark = pytest.mark.metastore


def test_functions(hms):
    func = api.Function("myabs", "default", "org.example.Abs", "alice", api.PrincipalType.USER, 0, 1,
                        [api.ResourceUri(api.ResourceType.JAR, "webhdfs://127.0.0.1:1/udf.jar")])
    hms.create_function(func)
    with pytest.raises(h3.AlreadyExistsException):
        hms.create_function(func)
    got = hms.get_function("default", "MyAbs")
    assert (got.className, got.resourceUris[0].uri) == ("org.example.Abs", "webhdfs://127.0.0.1:1/udf.jar")
    assert hms.get_functions("default", "my*") == ["myabs"]
    func.className = "org.example.Abs2"
    hms.alter_function("default", "myabs", func)
    assert [f.className for f in hms.get_all_functions().functions] == ["org.example.Abs2"]
    hms.drop_function("default", "myabs")
    with pytest.raises(h3.NoSuchObjectException):
        hms.get_function("default", "myabs")


def _stats(part_name=None, **values):
    desc = api.ColumnStatisticsDesc(isTblLevel=part_name is None, dbName="default", tableName="st",
                                    partName=part_name, lastAnalyzed=1700000000)
    objs = [
        api.ColumnStatisticsObj("a", "int", api.ColumnStatisticsData(
            longStats=api.LongColumnStatsData(values.get("low", 1), 99, 0, 10))),
        api.ColumnStatisticsObj("b", "string", api.ColumnStatisticsData(
            stringStats=api.StringColumnStatsData(12, 4.5, 1, 7))),
        api.ColumnStatisticsObj("c", "decimal(10,2)", api.ColumnStatisticsData(
            decimalStats=api.DecimalColumnStatsData(api.Decimal(2, (-1234).to_bytes(2, "big", signed=True)),
                                                    api.Decimal(2, (5678).to_bytes(2, "big", signed=True)), 0, 3))),
    ]
    return api.ColumnStatistics(desc, objs)


def test_column_statistics(hms):
    hms.create_table(table("default", "st", cols=("a int", "b string", "c decimal(10,2)"), parts=("ds string",)))
    hms.append_partition("default", "st", ["x"])
    assert hms.update_table_column_statistics(_stats())
    assert hms.update_table_column_statistics(_stats(low=-5))       # replaces
    got = hms.get_table_statistics_req(api.TableStatsRequest("default", "st", ["a", "b", "c"])).tableStats
    assert got[0].statsData.longStats.lowValue == -5
    assert got[1].statsData.stringStats.avgColLen == 4.5
    low = got[2].statsData.decimalStats.lowValue
    assert (int.from_bytes(low.unscaled, "big", signed=True), low.scale) == (-1234, 2)
    assert hms.update_partition_column_statistics(_stats("ds=x"))
    parts = hms.get_partitions_statistics_req(api.PartitionsStatsRequest("default", "st", ["a"], ["ds=x"])).partStats
    assert parts["ds=x"][0].statsData.longStats.highValue == 99
    assert hms.delete_partition_column_statistics("default", "st", "ds=x", "a")
    assert hms.delete_table_column_statistics("default", "st", None)
    assert hms.get_table_statistics_req(api.TableStatsRequest("default", "st", ["a"])).tableStats == []
    with pytest.raises(h3.NoSuchObjectException):
        hms.get_table_column_statistics("default", "st", "a")


def test_locks(hms):
    def request(kind):
        return api.LockRequest([api.LockComponent(kind, api.LockLevel.TABLE, "default", "t")], None, "alice", "host")
    first = hms.lock(request(api.LockType.EXCLUSIVE))
    assert first.state == api.LockState.ACQUIRED
    second = hms.lock(request(api.LockType.SHARED_READ))
    assert second.state == api.LockState.WAITING
    assert [lock.state for lock in hms.show_locks(api.ShowLocksRequest()).locks] == [
        api.LockState.ACQUIRED, api.LockState.WAITING]
    hms.heartbeat(api.HeartbeatRequest(lockid=first.lockid))
    hms.unlock(api.UnlockRequest(first.lockid))
    assert hms.check_lock(api.CheckLockRequest(second.lockid)).state == api.LockState.ACQUIRED
    hms.unlock(api.UnlockRequest(second.lockid))
    with pytest.raises(h3.NoSuchLockException):
        hms.unlock(api.UnlockRequest(second.lockid))


def test_alter_table_and_partitions(hms):
    t = table("default", "alt", parts=("ds string",))
    hms.create_table(t)
    hms.add_partition(partition(t, ["1"]))
    new = hms.get_table("default", "alt")
    new.sd.cols.append(api.FieldSchema("c", "double", "added"))
    new.parameters["k"] = "v"
    hms.alter_table_with_environment_context("default", "alt", new, api.EnvironmentContext({"CASCADE": "true"}))
    got = hms.get_table("default", "alt")
    assert [c.name for c in got.sd.cols] == ["a", "b", "c"] and got.parameters["k"] == "v"
    assert [c.name for c in hms.get_partition("default", "alt", ["1"]).sd.cols] == ["a", "b", "c"]
    assert [c.name for c in hms.get_schema("default", "alt")] == ["a", "b", "c", "ds"]
    bad = hms.get_table("default", "alt")
    bad.partitionKeys = []
    with pytest.raises(h3.InvalidOperationException, match="partition keys"):
        hms.alter_table("default", "alt", bad)
    part = hms.get_partition("default", "alt", ["1"])
    part.parameters["numRows"] = "3"
    hms.alter_partitions("default", "alt", [part])
    assert hms.get_partition("default", "alt", ["1"]).parameters["numRows"] == "3"
    with pytest.raises(h3.AlreadyExistsException):
        hms.add_partition(partition(t, ["1"]))
    assert hms.add_partitions_req(api.AddPartitionsRequest("default", "alt", [partition(t, ["1"])], True, True)).partitions == []
    dropped = hms.drop_partitions_req(api.DropPartitionsRequest("default", "alt", api.RequestPartsSpec(names=["ds=1"]),
                                                                True, False, needResult=True))
    assert [p.values for p in dropped.partitions] == [["1"]]
    assert hms.get_tables("default", "al*") == ["alt"] and hms.get_tables_by_type("default", "*", "VIRTUAL_VIEW") == []
    assert [m.tableName for m in hms.get_table_meta("def*", "*", [])] == ["alt"]


def _detailed(sd, bucket: str, skew_value: str):
    """``sd`` with every optional part a Hive descriptor can carry."""
    sd.compressed, sd.storedAsSubDirectories, sd.numBuckets = True, True, 4
    sd.bucketCols, sd.sortCols = [bucket], [api.Order(bucket, 0), api.Order("a", 1)]
    sd.parameters = {"sd.k": f"v-{bucket}"}
    sd.serdeInfo.parameters = {"serialization.format": "1", "field.delim": "|"}
    sd.skewedInfo = api.SkewedInfo(["b"], [[skew_value], ["z"]], {(skew_value,): f"/skew/{skew_value}"})
    return sd


def _described(sd):
    skew = sd.skewedInfo or api.SkewedInfo([], [], {})   # none sent: an empty one comes back
    return (bool(sd.compressed), bool(sd.storedAsSubDirectories), sd.numBuckets, sd.bucketCols, sd.sortCols, sd.parameters,
            sd.serdeInfo.parameters, skew.skewedColNames, skew.skewedColValues, skew.skewedColValueLocationMaps)


def test_storage_descriptor_details_round_trip(hms):
    """Bucketing, sorting, skew, descriptor and serde parameters come back on tables and
    partitions, whatever other descriptors lie between theirs (partitions of another table
    with details of their own are added in between)."""
    tbl = table("default", "sdd", parts=("ds string",))
    tbl.sd = _detailed(tbl.sd, "a", "x")
    other = table("default", "sdd_other", parts=("ds string",))
    other.sd = _detailed(other.sd, "b", "y")
    hms.create_table(tbl)
    hms.create_table(other)
    plain = partition(tbl, ["2"])
    plain.sd = table("default", "sdd").sd
    for part in (partition(tbl, ["1"]), partition(other, ["1"]), plain, partition(other, ["2"]),
                 partition(tbl, ["3"])):
        hms.add_partition(part)
    assert _described(hms.get_table("default", "sdd").sd) == _described(tbl.sd)
    expected = {"1": _described(tbl.sd), "2": _described(plain.sd), "3": _described(tbl.sd)}
    for parts in (hms.get_partitions("default", "sdd", -1),
                  hms.get_partitions_by_filter("default", "sdd", "ds >= '1'", -1),
                  hms.get_partitions_by_names("default", "sdd", ["ds=1", "ds=2", "ds=3"])):
        assert {p.values[0]: _described(p.sd) for p in parts} == expected
    assert _described(hms.get_partition_by_name("default", "sdd", "ds=2").sd) == _described(plain.sd)
    assert [_described(p.sd) for p in hms.get_partitions("default", "sdd_other", -1)] == [_described(other.sd)] * 2


def test_partitions_added_in_one_call_keep_their_own_descriptors(hms):
    """add_partitions writes all descriptors, serdes and partitions of a call in a few
    multi-row statements: each partition still gets its own."""
    tbl = table("default", "sdb", parts=("ds string",))
    hms.create_table(tbl)
    parts = []
    for i in range(7):
        part = partition(tbl, [str(i)], params={"n": str(i)})
        if i % 3:
            part.sd = _detailed(part.sd, "a" if i % 2 else "b", f"x{i}")
        parts.append(part)
    hms.add_partitions(parts)
    got = {p.values[0]: p for p in hms.get_partitions("default", "sdb", -1)}
    assert {value: _described(p.sd) for value, p in got.items()} == {p.values[0]: _described(p.sd) for p in parts}
    assert {value: (p.parameters["n"], p.sd.location.rsplit("/", 1)[1]) for value, p in got.items()} == {
        str(i): (str(i), f"ds={i}") for i in range(7)}
