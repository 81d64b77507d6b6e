"""The cleaner's pure logic: what binlog rows imply, GTID positions, name patterns, metrics."""

from __future__ import annotations

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from hopshive.cleaner.cli import main
from hopshive.cleaner.events import RefChange, Touches
from hopshive.cleaner.metrics import Metrics
from hopshive.cleaner.positions import GtidPosition
from hopshive.cleaner.scratch import like_pattern
from hopshive.cleaner.service import DEFAULTS, config_problems
from hopshive.core.config import load_config
from hopshive.metastore.orphans import ORPHAN_CD, ORPHAN_SERDE

DIR = {"id": 7, "partition_id": 1, "parent_id": 2, "name": "sales.db", "is_dir": 1}


def test_a_directory_delete_names_its_id_and_old_key():
    touches = Touches()
    touches.add_rows("hops", "hdfs_inodes", "delete", [{"values": DIR}])
    assert touches.inode_ids == {7} and touches.keys == {(1, 2, "sales.db")} and touches.cleaning


def test_file_deletes_and_inserts_imply_nothing_to_clean():
    touches = Touches()
    touches.add_rows("hops", "hdfs_inodes", "delete", [{"values": dict(DIR, is_dir=0)}])
    touches.add_rows("hops", "hdfs_inodes", "write", [{"values": DIR}])
    assert not touches
    touches.add_rows("metastore", "TBLS", "write", [{"values": {"TBL_ID": 2, "DB_ID": 1, "SD_ID": 3}}])
    assert touches.ref_changes == [RefChange("table", 2, ref=3)]   # recorded: its SD hangs off its database's
    assert not touches.cleaning and touches.events == 3


def test_a_key_update_of_a_directory_is_a_move_from_the_old_key_and_other_updates_are_not():
    touches = Touches()
    touches.add_rows("hops", "hdfs_inodes", "update",
                     [{"before_values": DIR, "after_values": dict(DIR, modification_time=5)}])
    assert not touches
    touches.add_rows("hops", "hdfs_inodes", "update",
                     [{"before_values": DIR, "after_values": dict(DIR, parent_id=9)}])
    assert touches.inode_ids == {7} and touches.keys == {(1, 2, "sales.db")}


def test_owner_and_sd_deletes_name_what_to_check():
    touches = Touches()
    touches.add_rows("metastore", "PARTITIONS", "delete", [{"values": {"PART_ID": 1, "SD_ID": 11}}])
    touches.add_rows("metastore", "IDXS", "delete", [{"values": {"INDEX_ID": 1, "SD_ID": 12, "INDEX_TBL_ID": 40}}])
    touches.add_rows("metastore", "SDS", "delete", [{"values": {"SD_ID": 13, "CD_ID": 5, "SERDE_ID": None}}])
    assert touches.owner_sds == {11, 12} and touches.index_tables == {40} and touches.gone_sds == {13}
    assert touches.parts == {ORPHAN_CD: {5}, ORPHAN_SERDE: set()}
    assert not touches.keys and not touches.ref_changes


def test_what_an_sd_uses_is_recorded_in_binlog_order():
    sd = {"SD_ID": 3, "CD_ID": 4, "SERDE_ID": 5, "PARTITION_ID": 1, "PARENT_ID": 2, "NAME": "t"}
    touches = Touches()
    touches.add_rows("metastore", "SDS", "write", [{"values": sd}])
    assert touches and not touches.cleaning   # recorded, nothing to clean
    touches.add_rows("metastore", "SKEWED_VALUES", "write", [{"values": {"SD_ID_OID": 3, "STRING_LIST_ID_EID": 8}}])
    touches.add_rows("metastore", "IDXS", "write", [{"values": {"ORIG_TBL_ID": 9, "SD_ID": 10, "INDEX_TBL_ID": 11}}])
    renamed = dict(sd, PARENT_ID=6, SERDE_ID=7)   # a rename that also got a new serde
    touches.add_rows("metastore", "SDS", "update", [{"before_values": sd, "after_values": renamed}])
    touches.add_rows("metastore", "SDS", "update", [{"before_values": renamed, "after_values": dict(renamed)}])
    assert touches.ref_changes == [RefChange("sd", 3, (1, 2, "t"), 4, 5), RefChange("list", 3, ref=8),
                                   RefChange("index", 9, ref=10, other=11),
                                   RefChange("sd_update", 3, (1, 6, "t"), 4, 7)]
    assert touches.parts[ORPHAN_SERDE] == {5} and touches.cleaning   # the old serde may be an orphan


def test_merge_unions_everything():
    a, b = Touches(), Touches()
    a.add_rows("metastore", "DBS", "delete", [{"values": {"SD_ID": 1}}])
    b.add_rows("hops", "hdfs_inodes", "delete", [{"values": DIR}])
    b.add_rows("metastore", "SDS", "write", [{"values": {"SD_ID": 2, "CD_ID": None, "SERDE_ID": None,
                                                        "PARTITION_ID": None, "PARENT_ID": None, "NAME": None}}])
    a.merge(b)
    assert a.owner_sds == {1} and a.inode_ids == {7} and a.keys == {(1, 2, "sales.db")} and a.events == 3
    assert a.ref_changes == [RefChange("sd", 2)]


def test_gtid_positions_keep_the_last_gtid_per_domain():
    position = GtidPosition("0-1-10, 1-3-5")
    position.advance("0-2-12")
    assert str(position) == "0-2-12,1-3-5"
    assert GtidPosition(str(position)) == position
    assert position.behind(GtidPosition("0-1-15,1-1-5,2-1-2")) == 3 + 0 + 2
    assert not GtidPosition("") and GtidPosition("0-1-1")


@pytest.mark.parametrize("bad", ["0-1", "a-b-c", "0-1-2-3"])
def test_a_malformed_gtid_is_a_clear_error(bad):
    with pytest.raises(ValueError, match="not a MariaDB GTID"):
        GtidPosition(bad)


@pytest.mark.parametrize("glob, like", [(".hive-staging*", ".hive-staging%"), ("_temporary", "\\_temporary"),
                                        ("a?b%", "a_b\\%")])
def test_name_patterns_become_escaped_like_patterns(glob, like):
    assert like_pattern(glob) == like


def test_metrics_render_counts_per_kind():
    metrics = Metrics()
    metrics.count(metrics.removed, "orphan_sd", 3)
    metrics.count(metrics.removed, "orphan_sd", 2)
    metrics.lag(0.25)
    metrics.lag(0.75)
    text = metrics.render()
    assert 'hopshive_cleaner_orphans_removed_total{kind="orphan_sd"} 5' in text
    assert "hopshive_cleaner_lag_seconds_count 2" in text and "hopshive_cleaner_lag_max_seconds 0.750000" in text


def test_lag_is_a_histogram_prometheus_reads():
    """Cumulative buckets (what histogram_quantile needs for the p99 alert of roles/monitoring)."""
    metrics = Metrics()
    for seconds in (0.25, 0.75, 7.0):
        metrics.lag(seconds)
    family = next(f for f in text_string_to_metric_families(metrics.render()) if f.name == "hopshive_cleaner_lag_seconds")
    buckets = {s.labels["le"]: s.value for s in family.samples if s.name.endswith("_bucket")}
    assert family.type == "histogram"
    assert (buckets["0.5"], buckets["1"], buckets["5"], buckets["10"], buckets["+Inf"]) == (1, 2, 2, 3, 3)


@pytest.mark.parametrize("cleaner, problem", [
    ({"lease_seconds": 2, "lease_margin_seconds": 3}, "must be positive and below cleaner.lease_seconds"),
    ({"lease_seconds": 6, "lease_margin_seconds": 2, "renew_seconds": 2.5}, "must fit twice"),
    ({"batch_size": 0}, "batch_size must be at least 1"),
])
def test_unusable_settings_are_named_before_anything_starts(tmp_path, capsys, cleaner, problem):
    path = tmp_path / "cleaner.yml"
    path.write_text(yaml.safe_dump({"cleaner": cleaner}))
    assert main(["run", "--config", str(path)]) == 2
    assert problem in capsys.readouterr().err


def test_the_defaults_are_usable():
    assert config_problems(load_config(DEFAULTS, environ={})) == []
