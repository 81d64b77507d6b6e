"""Metastore fsck on the real MariaDB: what the foreign keys leave behind is found, explained,
and (where safe) removed; repair re-checks and skips what others hold."""

from __future__ import annotations

import json

import pytest
import yaml

from hopshive.metastore import fsck
from hopshive.metastore.fsck import (BROKEN_INODE_PATH, DB_LOCATION_MISMATCH, ORPHAN_CD, ORPHAN_INDEX_TABLE,
                                     ORPHAN_SD, ORPHAN_SERDE, ORPHAN_SKEWED_LIST, STALE_LOCATION, find_orphans,
                                     location_matches, repair, repair_chunk, repair_in_batches)
from hopshive.metastore.fsck_cli import main
from hopshive.namespace.inodes import partition_id
from tests.component.test_metastore_schema import NN, Catalog, count, move_inode, world  # noqa: F401 (fixture)

NOW = 0  # grace period for rows created by the test itself


def scan(db, grace: float = NOW) -> fsck.Report:
    return db.run(lambda tx: find_orphans(tx, grace))


def test_a_consistent_catalog_has_nothing_to_report(db, world):
    assert scan(db).findings == []


def test_database_moved_to_the_trash_leaves_orphans_that_repair_removes(db, world):
    with db.transaction() as tx:
        move_inode(tx, world.dirs["sales"], world.dirs["trash"], "sales.db")
    assert scan(db, grace=600).findings == []  # everything here is younger than the grace period

    report = scan(db)
    # 5 tables (orders, customers, lines, index table, view) + 3 partitions + the index's SD;
    # their CDs (partitions and the index share orders') and one serde per SD.
    assert report.counts() == {ORPHAN_SD: 9, ORPHAN_CD: 5, ORPHAN_SERDE: 9}
    orders_sd = next(f for f in report.findings if f.kind == ORPHAN_SD and f.id == world.tables["orders"].sd)
    assert orders_sd.what == f"storage descriptor {orders_sd.id} ({NN}/warehouse/sales.db/orders)"
    assert "no database, table, partition or index uses it" in orders_sd.why
    orders_cd = next(f for f in report.findings if f.kind == ORPHAN_CD and f.id == world.tables["orders"].cd)
    assert orders_cd.what == f"column descriptor {orders_cd.id} (2 columns: id, v)"
    assert orders_cd.why.startswith("used only by orphaned storage descriptors")

    with db.transaction() as tx:
        assert repair(tx, report) == {ORPHAN_SD: 9, ORPHAN_CD: 5, ORPHAN_SERDE: 9, ORPHAN_SKEWED_LIST: 0}
    assert scan(db).findings == []
    with db.transaction() as tx:
        assert count(tx, "SDS") == count(tx, "SD_PARAMS") == 2  # database `other` and its table
        assert count(tx, "TBLS", "TBL_ID=%s", world.tables["events"].id) == 1
        assert count(tx, "COLUMNS_V2") == 2 and count(tx, "SERDE_PARAMS") == 1
    with db.transaction() as tx:  # idempotent: the same report again deletes nothing
        assert repair(tx, report) == {ORPHAN_SD: 0, ORPHAN_CD: 0, ORPHAN_SERDE: 0, ORPHAN_SKEWED_LIST: 0}


def test_repair_rechecks_instead_of_trusting_the_report(db, world):
    with db.transaction() as tx:
        tx.execute("DELETE FROM hops.hdfs_inodes WHERE id=%s", (world.dirs["orders"].id,))
    report = scan(db)
    orphans = report.ids(ORPHAN_SD)
    assert len(orphans) == 4  # 3 partitions + the index's SD; the table's own SD cascaded
    reused = orphans[0]
    with db.transaction() as tx:  # between scan and repair, something starts using one SD
        tx.execute("INSERT INTO metastore.TBLS (CREATE_TIME, DB_ID, SD_ID, TBL_NAME) VALUES (1, %s, %s, 'late')",
                   (world.dbs["other"], reused))
    counts = repair_in_batches(db, report, batch_size=2)
    assert counts[ORPHAN_SD] == 3
    assert counts[ORPHAN_CD] == 0  # orders' CD is still used by the reused SD
    with db.transaction() as tx:
        assert count(tx, "SDS", "SD_ID=%s", reused) == 1
        assert count(tx, "CDS", "CD_ID=%s", world.tables["orders"].cd) == 1


def test_repair_skips_rows_that_other_transactions_hold(db, world):
    with db.transaction() as tx:
        move_inode(tx, world.dirs["sales"], world.dirs["trash"], "sales.db")
    report = scan(db)
    held, other_fsck = report.ids(ORPHAN_SD)[:1], report.ids(ORPHAN_SD)[1:3]
    with db.transaction() as store, db.transaction() as fsck_a:
        # An uncommitted insert referencing an SD holds it through its foreign-key check...
        store.execute("INSERT INTO metastore.TBLS (CREATE_TIME, DB_ID, SD_ID, TBL_NAME) VALUES (1, %s, %s, 'racing')",
                      (world.dbs["other"], held[0]))
        # ...and a concurrent fsck holds the SDs it is deleting.
        assert repair_chunk(fsck_a, ORPHAN_SD, other_fsck, NOW) == 2
        counts = repair_in_batches(db, report)  # does not wait long, nor touch held rows
        # The CDs/serdes of the other fsck's two SDs depend on whether it commits: left alone.
        assert counts == {ORPHAN_SD: 9 - 3, ORPHAN_CD: 5 - 3, ORPHAN_SERDE: 9 - 3, ORPHAN_SKEWED_LIST: 0}
    with db.transaction() as tx:
        assert count(tx, "SDS", "SD_ID=%s", held[0]) == 1
        assert count(tx, "SDS", f"SD_ID IN ({','.join(map(str, other_fsck))})") == 0
    # Next run: those are free now; the racing table got an SD whose directory is in the trash.
    assert scan(db).counts() == {ORPHAN_CD: 2, ORPHAN_SERDE: 2, STALE_LOCATION: 1}


def test_skewed_value_lists_of_orphaned_descriptors_go_too(db, world):
    with db.transaction() as tx:
        skew = Catalog(tx).skew(tx.query_one("SELECT SD_ID FROM metastore.PARTITIONS WHERE PART_ID=%s",
                                             (world.parts["ds=2024-01-01/h=1"],))[0], "a", "b")
        tx.execute("DELETE FROM hops.hdfs_inodes WHERE id=%s", (world.dirs["orders"].id,))
    report = scan(db)
    finding = next(f for f in report.findings if f.kind == ORPHAN_SKEWED_LIST)
    assert (finding.id, finding.what) == (skew, f"skewed value list {skew} (a, b)")
    assert repair_in_batches(db, report)[ORPHAN_SKEWED_LIST] == 1
    with db.transaction() as tx:
        assert count(tx, "SKEWED_STRING_LIST") == count(tx, "SKEWED_STRING_LIST_VALUES") == 0


def test_index_table_left_without_its_index_is_reported_only(db, world):
    with db.transaction() as tx:
        tx.execute("DELETE FROM hops.hdfs_inodes WHERE id=%s", (world.dirs["orders"].id,))
    report = scan(db)
    [finding] = [f for f in report.findings if f.kind == ORPHAN_INDEX_TABLE]
    assert finding.id == world.tables["index_table"].id and not finding.repairable
    assert finding.what == f"index table sales.sales__orders_orders_idx__ ({NN}/warehouse/sales.db/sales__orders_orders_idx__)"
    repair_in_batches(db, report)
    assert [f.kind for f in scan(db).findings] == [ORPHAN_INDEX_TABLE]


def test_locations_that_do_not_match_their_inode_are_reported(db, world):
    orders, old, sales = world.tables["orders"], world.dirs["orders"], world.dirs["sales"]
    new_key = (partition_id(sales.id, "orders2"), sales.id, "orders2")
    with db.transaction() as tx:  # a rename that repointed the table's SD but not its partitions
        tx.execute("INSERT INTO hops.hdfs_inodes (partition_id, parent_id, name, id, is_dir)"
                   " VALUES (%s, %s, %s, %s, 1)", (*new_key, old.id))
        tx.execute("UPDATE metastore.SDS SET PARTITION_ID=%s, PARENT_ID=%s, NAME=%s, LOCATION=%s WHERE SD_ID=%s",
                   (*new_key, f"{NN}{sales.path}/orders2", orders.sd))
        tx.execute("DELETE FROM hops.hdfs_inodes WHERE partition_id=%s AND parent_id=%s AND name=%s", old.key)
        tx.execute("UPDATE metastore.DBS SET DB_LOCATION_URI='hdfs://nn:8020/elsewhere' WHERE DB_ID=%s",
                   (world.dbs["other"],))
    report = scan(db)
    stale = [f for f in report.findings if f.kind == STALE_LOCATION]
    assert sorted(f.why for f in stale) == [
        f"its inode is at {sales.path}/orders2/ds=2024-01-01/h=1",
        f"its inode is at {sales.path}/orders2/ds=2024-01-01/h=2",
        f"its inode is at {sales.path}/orders2/ds=2024-01-02/h=1"]
    [mismatch] = [f for f in report.findings if f.kind == DB_LOCATION_MISMATCH]
    assert mismatch.what == "database other" and "hdfs://nn:8020/elsewhere" in mismatch.why
    assert not any(f.repairable for f in report.findings)
    with db.transaction() as tx:
        assert repair(tx, report) == dict.fromkeys(fsck.REPAIR_ORDER, 0)


def test_an_inode_whose_parents_do_not_reach_the_root_is_reported(db, world):
    with db.transaction() as tx:  # a broken namespace: the ds= directory row vanished alone
        tx.execute("DELETE FROM hops.hdfs_inodes WHERE id=%s", (world.dirs["ds=2024-01-02"].id,))
        sd_id = tx.query_one("SELECT SD_ID FROM metastore.PARTITIONS WHERE PART_ID=%s",
                             (world.parts["ds=2024-01-02/h=1"],))[0]
    [finding] = scan(db).findings
    assert (finding.kind, finding.id, finding.repairable) == (BROKEN_INODE_PATH, sd_id, False)


@pytest.mark.parametrize("name, location", [
    ("ds=a b", "hdfs://nn:8020/t/ds=a%20b"),            # URI-encoded
    ("ds=a b", "hdfs://nn:8020/t/ds=a b"),              # Path.toString, raw
    ("ds=a%2Fb", "hdfs://nn:8020/t/ds=a%2Fb"),          # Hive-escaped name, stored raw
    ("ds=é", "hdfs://nn:8020/t/ds=%C3%A9"),
    ("ds=é", "/t/ds=é/"),                               # no scheme, trailing slash
    ("ds=x", "file:/t//ds=x"),
])
def test_location_comparison_accepts_both_raw_and_encoded_forms(name, location):
    assert location_matches(location, f"/t/{name}")


def test_location_comparison_rejects_another_path():
    assert not location_matches("hdfs://nn:8020/t/ds=a%2Fb", "/t/ds=a/b/c")
    assert not location_matches("hdfs://nn:8020/t/old", "/t/new")


def test_cli_reports_then_repairs(db, world, tmp_path, capsys):
    with db.transaction() as tx:
        move_inode(tx, world.dirs["sales"], world.dirs["trash"], "sales.db")
    config = tmp_path / "metatool.yaml"
    config.write_text(yaml.safe_dump({"database": db.config, "fsck": {"grace_seconds": 0}}))

    assert main(["fsck", "--config", str(config), "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["report"]["counts"] == {ORPHAN_SD: 9, ORPHAN_CD: 5, ORPHAN_SERDE: 9}
    assert document["repaired"] is None

    assert main(["fsck", "--config", str(config), "--repair", "--batch-size", "4"]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0] == "metastore fsck: orphan_cd 5, orphan_sd 9, orphan_serde 9"
    assert "repaired: orphan_sd 9, orphan_cd 5, orphan_serde 9, orphan_skewed_list 0" in text
    assert "remaining: nothing found" in text

    assert main(["fsck", "--config", str(config)]) == 0
    assert capsys.readouterr().out == "metastore fsck: nothing found\n"


def test_cli_reports_a_bad_config(tmp_path, capsys):
    config = tmp_path / "bad.yaml"
    config.write_text("database: {nope: 1}\n")
    assert main(["fsck", "--config", str(config)]) == 2
    assert "unknown setting database.nope" in capsys.readouterr().err



@pytest.mark.parametrize("other", [{"log_level": "info", "metastore": {"port": 9083}}, {"schema": {"engine": "InnoDB"}}])
def test_cli_reads_the_database_section_of_a_service_or_schematool_file(db, world, tmp_path, capsys, other):
    """A deployed host's metastore-<port>.yml or schematool.yml works as --config: only its
    `database` section is read (their other sections used to be "unknown setting" errors)."""
    config = tmp_path / "service.yml"
    config.write_text(yaml.safe_dump({"database": db.config, **other}))
    assert main(["fsck", "--config", str(config)]) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.startswith("metastore fsck: nothing found")
