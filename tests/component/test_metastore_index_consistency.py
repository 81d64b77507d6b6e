"""Indexes stay consistent with the namespace when directories go behind the metastore's
back (thesis 3.1.3): on the MariaDB store through the foreign keys, the cleaner and
`hopshive-metatool fsck`; on the HBase store through the cleaner and `fsck-hbase`."""

from __future__ import annotations

import json

import pytest
import yaml
from pymetastore.hive_metastore import ttypes as h3

from hopshive.metastore.fsck_cli import main as metatool
from hopshive.metastore.locations import Locations
from hopshive.metastore.stores.hbase import fsck as hbase_fsck
from tests.support.cleaner import account, running, wait_leader, wait_tailing  # noqa: F401
from tests.support.hms import index
from tests.support.metastore import invariant_violations
from tests.support.metastore_fixtures import (fs, hbase_server, hms, hms2, metastore, partition,  # noqa: F401
                                               table)
from tests.support.polling import wait_until

pytestmark = pytest.mark.metastore
WAREHOUSE_PATH = "/user/hive/warehouse"
INDEX_TABLE = "default__t_x__"


@pytest.fixture
def indexed(hms, hms2):
    """default.t partitioned by ds (partitions 1, 2) with index x, whose index table holds
    partition 1 too."""
    t = table("default", "t", cols=("a int", "b string"), parts=("ds string",))
    hms.create_table(t)
    hms.add_partitions([partition(t, [d]) for d in ("1", "2")])
    hms2.add_index(*index(hms.get_table("default", "t"), "x", ["b"], params={"k": "v"}))
    hms.add_partitions([partition(hms.get_table("default", INDEX_TABLE), ["1"])])
    return t


def rows(db, table_name: str) -> int:
    with db.transaction() as tx:
        return tx.query_one(f"SELECT COUNT(*) FROM metastore.{table_name}")[0]


def fsck_json(db, tmp_path, capsys) -> dict:
    config = tmp_path / "metatool.yml"
    config.write_text(yaml.safe_dump({"database": db.config, "fsck": {"grace_seconds": 0}}))
    metatool(["fsck", "--config", str(config), "--json"])
    return json.loads(capsys.readouterr().out)["report"]


# ------------------------------------------------------------------- MariaDB store
def test_base_directory_deleted_takes_the_index_and_fsck_reports_its_index_table(indexed, hms, hms2, fs, db,
                                                                                 tmp_path, capsys):
    fs.delete(f"{WAREHOUSE_PATH}/t")
    with pytest.raises(h3.NoSuchObjectException):
        hms.get_table("default", "t")
    assert hms2.get_indexes("default", "t", -1) == []
    assert rows(db, "IDXS") == rows(db, "INDEX_PARAMS") == 0, "the foreign keys cascade to the index"
    report = fsck_json(db, tmp_path, capsys)
    found = {(f["kind"], f["what"]) for f in report["findings"]}
    assert ("orphan_index_table", f"index table default.{INDEX_TABLE} (webhdfs://127.0.0.1:1{WAREHOUSE_PATH}/"
            f"{INDEX_TABLE})") in found
    assert report["counts"]["orphan_sd"] == 1, "the index's own descriptor (no directory)"
    assert invariant_violations(db, owned=False) == {}


def test_the_cleaner_removes_the_index_table_left_behind(indexed, hms, fs, db, running):
    running()
    wait_leader(db)
    wait_tailing(db)
    fs.delete(f"{WAREHOUSE_PATH}/t")
    wait_until(lambda: hms.get_all_tables("default") == [], 30,
               lambda _: f"tables left: {hms.get_all_tables('default')}")
    wait_until(lambda: not fs.exists(f"{WAREHOUSE_PATH}/{INDEX_TABLE}"), 30,
               lambda _: "the index table's directory is still there")
    assert invariant_violations(db, owned=False) == {}


def test_index_table_directory_deleted_takes_the_index(indexed, hms, hms2, fs, db):
    fs.delete(f"{WAREHOUSE_PATH}/{INDEX_TABLE}")
    assert hms2.get_indexes("default", "t", -1) == []
    assert rows(db, "IDXS") == rows(db, "INDEX_PARAMS") == 0
    assert hms.get_partition_names("default", "t", -1) == ["ds=1", "ds=2"], "the base table stays"
    assert invariant_violations(db, owned=False) == {}


# --------------------------------------------------------------------- HBase store
@pytest.fixture
def hbase_cleaner(metastore, running, hbase_server, db):
    ms = metastore.config["metastore"]
    running(sweep_at_start=False, hbase_store={
        "enabled": True, "host": "127.0.0.1", "port": hbase_server.port,
        "table_prefix": metastore.config["hbase"]["table_prefix"], "namespace_uris": ms["namespace_uris"],
        "warehouse": ms["warehouse"]})
    wait_leader(db)
    wait_tailing(db)


def hbase_findings(metastore, db) -> dict:
    ms = metastore.config["metastore"]
    return hbase_fsck.find(metastore.store, db, Locations(ms["namespace_uris"], ms["warehouse"])).counts()


@pytest.mark.parametrize("store_backend", ["hbase"])
def test_hbase_index_table_directory_deleted_takes_the_index(store_backend, indexed, hbase_cleaner, metastore,
                                                            hms, hms2, fs, db):
    fs.delete(f"{WAREHOUSE_PATH}/{INDEX_TABLE}")
    wait_until(lambda: hms2.get_indexes("default", "t", -1) == [], 30,
               lambda _: f"indexes left: {hms2.get_index_names('default', 't', -1)}")
    assert hms.get_all_tables("default") == ["t"]
    # The index table's row goes first and its partitions' rows right after (a drop's order in
    # the HBase store, see HBaseStore.drop_table): wait for the cleaner to finish the drop.
    wait_until(lambda: hbase_findings(metastore, db) == {}, 30,
               lambda _: f"left after the index table's drop: {hbase_findings(metastore, db)}")


@pytest.mark.parametrize("store_backend", ["hbase"])
def test_hbase_base_directory_deleted_takes_indexes_and_index_tables(store_backend, indexed, hbase_cleaner,
                                                                    metastore, hms, hms2, fs, db):
    fs.delete(f"{WAREHOUSE_PATH}/t")
    wait_until(lambda: hms.get_all_tables("default") == [], 30,
               lambda _: f"tables left: {hms.get_all_tables('default')}")
    assert hms2.get_indexes("default", "t", -1) == []
    wait_until(lambda: not fs.exists(f"{WAREHOUSE_PATH}/{INDEX_TABLE}"), 30,
               lambda _: "the index table's directory is still there")
    assert hbase_findings(metastore, db) == {}


@pytest.mark.parametrize("store_backend", ["hbase"])
def test_fsck_hbase_repairs_an_index_whose_base_table_row_is_gone(store_backend, indexed, metastore, hms2, db):
    """What a crash between two HBase writes of a base table's drop can leave."""
    store = metastore.store
    store._hb(lambda t: t("tbls").delete(hbase_fsck.rowkey.encode_string("default")
                                         + hbase_fsck.rowkey.encode_string("t")))
    report = hbase_fsck.find(store)
    assert report.counts().get("orphan index") == 1
    assert report.counts().get("orphan index table") == 1, "its index table, reported only"
    done = hbase_fsck.repair(store, report)
    assert done.get("orphan index") == 1
    after = hbase_fsck.find(store).counts()
    assert "orphan index" not in after and "descriptor count" not in after and "unused descriptor" not in after
