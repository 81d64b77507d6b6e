"""What only the HBase store has: typed partition identity, SDs shared by content hash,
filter plans that read only matching rows, and ``hopshive-metatool explain-filter``."""

from __future__ import annotations

import subprocess
import sys
import time

import happybase
import pytest
import yaml

from tests.support.metastore_fixtures import hbase_server, hms, metastore, partition, table  # noqa: F401

pytestmark = pytest.mark.metastore


@pytest.fixture
def store_backend():
    return "hbase"


@pytest.fixture
def sales(hms):
    tbl = table("default", "sales", parts=("y int", "region string", "d date"))
    hms.create_table(tbl)
    tbl = hms.get_table("default", "sales")
    parts = [partition(tbl, [str(y), r, f"2024-01-0{d}"]) for y in (2022, 2023, 2024) for r in ("eu", "us")
             for d in (1, 2)]
    hms.add_partitions(parts)
    return tbl


def _names(parts):
    return sorted("/".join(p.values) for p in parts)


def test_filters_on_every_column(hms, sales):
    assert _names(hms.get_partitions_by_filter("default", "sales", "y = 2023 and region = 'us' and d = '2024-01-02'",
                                               -1)) == ["2023/us/2024-01-02"]
    assert _names(hms.get_partitions_by_filter("default", "sales", "region = 'eu' and d > '2024-01-01'", -1)) == [
        "2022/eu/2024-01-02", "2023/eu/2024-01-02", "2024/eu/2024-01-02"]
    assert len(hms.get_partitions_by_filter("default", "sales", "region like 'u.*' or y < 2023", -1)) == 8
    assert hms.get_num_partitions_by_filter("default", "sales", "y >= 2024") == 4


def test_typed_identity(hms, sales):
    from pymetastore.hive_metastore.ttypes import AlreadyExistsException
    with pytest.raises(AlreadyExistsException):
        hms.add_partitions([partition(sales, ["02023", "eu", "2024-01-01"])])


def test_descriptors_are_shared_by_content(metastore, sales, hbase_server):
    conn = happybase.Connection("127.0.0.1", hbase_server.port)
    prefix = metastore.config["hbase"]["table_prefix"]
    sds = list(conn.table(f"{prefix}sds").scan())
    parts = list(conn.table(f"{prefix}parts").scan())
    conn.close()
    assert len(parts) == 12 and len(sds) == 1   # table and partitions differ only in location


def test_a_restarted_hbase_server_costs_no_call(metastore, hms, hbase_server):
    """Pooled connections the HBase server closed (restart, its read timeout) are checked
    after check_after seconds unused and replaced before a call runs on them."""
    metastore.store.config["check_after"] = 0.2
    assert hms.get_database("default").name == "default"
    assert hbase_server.stop() == 0
    hbase_server.start()
    time.sleep(0.5)      # past check_after: the next call checks its connection first
    assert hms.get_database("default").name == "default"
    assert hms.get_all_databases() == ["default"]


def test_explain(metastore, sales, tmp_path, db):
    text = metastore.store.explain("default", "sales", "region = 'us' and y > 2022").splitlines()
    assert text[:3] == ['plan: Scan(X2022+, X+).setFilter(region = "us")',
                        "scan start (y=2022) exclusive; stop after the table's last partition",
                        '  in HBase: region = "us"']
    assert text[3].startswith("  HBase filter: RowFilter(=, 'regexstring:^") and "residual: none" in text[4]
    assert metastore.store.explain("default", "sales", "y = 2024 and region = 'eu'").splitlines()[1] == \
        "scan start (y=2024, region=\"eu\") inclusive; stop (y=2024, region=\"eu\") inclusive"
    assert metastore.store.explain("default", "sales", "y = 2024 and region = 'eu' and d = '2024-01-02'") \
        .splitlines()[1] == "get 1 row(s): (y=2024, region=\"eu\", d='2024-01-02')"
    config = tmp_path / "metatool.yaml"
    config.write_text(yaml.safe_dump({"database": db.config, "hbase": metastore.config["hbase"]}))
    out = subprocess.run([sys.executable, "-m", "hopshive.metastore.fsck_cli", "explain-filter", "default", "sales",
                          "d like '2024.*' and region = 'us'", "--config", str(config)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "plan: Scan(X, X+).setFilter(d like \"2024.*\" and region = \"us\")"
    assert '  residual: d like "2024.*"' in out.stdout.splitlines()
    assert "the row key holds d as a typed date" in out.stdout


def test_fsck_finds_and_repairs_what_a_crash_leaves(metastore, sales, hbase_server, tmp_path, db):
    """A crash between HBase writes leaves unreferenced rows; fsck-hbase finds and repairs them."""
    import struct

    import dataclasses

    from hopshive.metastore.api import api
    from hopshive.metastore.stores.hbase import rowkey
    from hopshive.metastore.stores.hbase.records import Record
    from hopshive.metastore.stores.hbase.records import decode as _decode, encode as _encode

    prefix = metastore.config["hbase"]["table_prefix"]
    conn = happybase.Connection("127.0.0.1", hbase_server.port)
    parts = conn.table(f"{prefix}parts")
    key, data = next(iter(parts.scan(row_prefix=rowkey.table_prefix("default", "sales"))))
    record = Record.of(data)
    # a dropped table whose partition row survived, stale statistics, a counter off by two
    orphan = rowkey.table_prefix("default", "gone") + key[len(rowkey.table_prefix("default", "sales")):]
    part = _decode(api.Partition, record.blob)
    part.tableName = "gone"
    parts.put(orphan, {b"i:obj": dataclasses.replace(record, blob=_encode(part)).pack()})
    conn.table(f"{prefix}stats").put(rowkey.encode_string("default") + rowkey.encode_string("gone")
                                     + rowkey.encode_string(""), {b"c:a": b"x"})
    sds = conn.table(f"{prefix}sds")
    digest = record.sd
    sds.counter_inc(digest, b"i:refs", 2)
    conn.close()
    # a partition directory deleted behind the metastore's back (no foreign key follows it)
    gone = metastore.store.get_partition("default", "sales", ["2024", "us", "2024-01-02"])
    dirs = metastore.metastore.warehouse.service()
    db.run(lambda tx: dirs.delete(tx, gone.sd.location, "alice"))
    config = tmp_path / "metastore.yaml"
    config.write_text(yaml.safe_dump(metastore.config))
    run = lambda *extra: subprocess.run([sys.executable, "-m", "hopshive.metastore.fsck_cli", "fsck-hbase",  # noqa: E731
                                         "--config", str(config), *extra], capture_output=True, text=True)
    found = run()
    assert found.returncode == 1, found.stderr
    assert "orphan partition 1" in found.stdout and "orphan statistics 1" in found.stdout
    assert "descriptor count 1" in found.stdout      # 13 references (table + 12 partitions), counter 15
    assert "partition without directory 1" in found.stdout and "2024-01-02" in found.stdout
    repaired = run("--repair")
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert run().stdout.startswith("hbase store fsck: nothing found")
    assert len(metastore.store.get_partitions("default", "sales")) == 11
    assert struct.unpack(">q", happybase.Connection("127.0.0.1", hbase_server.port).table(f"{prefix}sds")
                         .row(digest)[b"i:refs"])[0] == 12


def test_tables_of_another_row_format_are_refused(hbase_server, db):
    """Tables a metastore of the old row format wrote (no format mark, a table row) are not
    read as garbage: the store refuses to open on them, naming the way out."""
    from hopshive.metastore.exceptions import MetastoreError
    from hopshive.metastore.stores.hbase_store import HBaseStore

    conn = happybase.Connection("127.0.0.1", hbase_server.port)
    conn.create_table("oldfmt_tbls", {"i": dict(max_versions=1)})
    conn.table("oldfmt_tbls").put(b"default\x00\x00t\x00\x00", {b"i:obj": b"\x0c\x00", b"i:sd": b"x"})
    conn.close()
    with pytest.raises(MetastoreError, match="row format 1, this metastore writes format 2"):
        HBaseStore(db, {"port": hbase_server.port, "table_prefix": "oldfmt_"})
