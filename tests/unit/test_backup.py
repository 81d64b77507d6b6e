"""The backup tool's logic on real files: manifests catch any change, retention keeps
chains whole, increments refuse a different donor, block pins survive deletion, blocks are
checked on arrival and sorted by namenode for a restore."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

import pytest

from hopshive.backup import blocks, catalog, cli, manifest, mariabackup
from hopshive.backup.errors import BackupError

NOW = datetime(2026, 11, 28, 6, 0, 0, tzinfo=timezone.utc)


def finished_backup(root: Path, backup_id: str, kind: str = "full", base: str | None = None,
                    donor: str = "db3", to_lsn: int = 100, schemas: dict | None = None) -> Path:
    """A backup directory as backup.yml leaves it: raw database files and a manifest."""
    directory = root / backup_id
    (directory / "db").mkdir(parents=True)
    (directory / "db" / "ibdata1").write_bytes(os.urandom(64))
    manifest.write(directory, {"id": backup_id, "kind": kind, "base": base, "donor": donor, "to_lsn": to_lsn,
                               "commit": "c0ffee", "schema_versions": schemas or {"hops": 5, "metastore": 4}})
    return directory


def block_disk(data_dir: Path, block_id: int, content: bytes) -> Path:
    """A finished block file and its checksum file, where a namenode keeps them."""
    path = data_dir / "current" / blocks.relative(block_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    path.with_name(path.name + ".meta").write_bytes(b"crc!")
    return path


# ------------------------------------------------------------------ manifest
def test_a_manifest_lists_every_file_and_verifies_clean(tmp_path):
    (tmp_path / "db").mkdir()
    (tmp_path / "db" / "a").write_bytes(b"x" * 10)
    (tmp_path / "blocks.json").write_text("{}")
    written = manifest.write(tmp_path, {"id": "b1"})
    assert [f["path"] for f in written["files"]] == ["blocks.json", "db/a"]
    assert written["files"][1]["size"] == 10
    assert manifest.verify(tmp_path) == []
    assert manifest.read(tmp_path)["id"] == "b1"


@pytest.mark.parametrize("damage, expected", [
    (lambda root: (root / "db" / "a").write_bytes(b"y" * 10), "db/a: SHA-256 differs from the manifest"),
    (lambda root: (root / "db" / "a").write_bytes(b"x"), "db/a: 1 bytes, the manifest says 10"),
    (lambda root: (root / "db" / "a").unlink(), "db/a: missing"),
    (lambda root: (root / "db" / "new").write_bytes(b""), "db/new: not in the manifest"),
])
def test_any_change_after_the_manifest_is_reported(tmp_path, damage, expected):
    (tmp_path / "db").mkdir()
    (tmp_path / "db" / "a").write_bytes(b"x" * 10)
    manifest.write(tmp_path, {})
    damage(tmp_path)
    assert manifest.verify(tmp_path) == [expected]


@pytest.mark.parametrize("recorded, release, newer", [
    ({"hops": 5, "metastore": 4}, {"hops": 5, "metastore": 4, "platform": 1}, []),
    ({"hops": 3}, {"hops": 5, "metastore": 4}, []),                  # older: the restore migrates it
    ({"hops": 6, "metastore": 4}, {"hops": 5, "metastore": 4}, ["hops 6 > 5"]),
    ({"hops": 5, "future": 1}, {"hops": 5}, ["future 1 > 0"]),         # a schema this release lacks
])
def test_only_schemas_beyond_the_release_are_newer(recorded, release, newer):
    assert manifest.newer_schemas(recorded, release) == newer


def test_a_backup_without_manifest_is_unfinished(tmp_path):
    with pytest.raises(BackupError, match="did not finish"):
        manifest.read(tmp_path)


# ------------------------------------------------------------------ catalog
def test_a_full_backup_needs_nothing_before_it(tmp_path):
    assert catalog.plan(tmp_path, False, "db3", NOW) == {
        "id": "20261128T060000Z", "kind": "full", "base": None, "incremental_lsn": None}


def test_an_increment_builds_on_the_newest_backup_of_the_same_node(tmp_path):
    finished_backup(tmp_path, "20261127T060000Z", to_lsn=4242)
    planned = catalog.plan(tmp_path, True, "db3", NOW)
    assert planned == {"id": "20261128T060000Z", "kind": "incremental", "base": "20261127T060000Z",
                       "incremental_lsn": 4242}
    with pytest.raises(BackupError, match="taken on db3, not on db1"):
        catalog.plan(tmp_path, True, "db1", NOW)


def test_an_increment_without_any_backup_is_refused(tmp_path):
    with pytest.raises(BackupError, match="take a full one first"):
        catalog.plan(tmp_path, True, "db3", NOW)


def test_a_chain_runs_from_the_full_backup_to_the_increment(tmp_path):
    finished_backup(tmp_path, "b1")
    finished_backup(tmp_path, "b2", "incremental", "b1")
    finished_backup(tmp_path, "b3", "incremental", "b2")
    assert catalog.chain(tmp_path, "b3") == ["b1", "b2", "b3"]
    assert catalog.resolve(tmp_path) == "b3"
    (tmp_path / "b1" / manifest.NAME).unlink()
    with pytest.raises(BackupError, match="backup b1 \\(needed by b3\\)"):
        catalog.chain(tmp_path, "b3")


def test_retention_keeps_whole_chains_and_drops_failed_backups(tmp_path):
    for backup_id, kind, base in [("b1", "full", None), ("b2", "incremental", "b1"), ("b3", "full", None),
                                  ("b4", "incremental", "b3"), ("b5", "full", None)]:
        finished_backup(tmp_path, backup_id, kind, base)
    (tmp_path / "b0-failed").mkdir()
    (tmp_path / "b6-running").mkdir()
    (tmp_path / ".incoming-b0-failed").mkdir()
    (tmp_path / ".scratch-b6-running").mkdir()
    assert catalog.prune(tmp_path, 2, keep="b6-running") == [".incoming-b0-failed", "b0-failed", "b1", "b2"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".scratch-b6-running", "b3", "b4", "b5", "b6-running"]
    with pytest.raises(BackupError, match="at least one"):
        catalog.prune(tmp_path, 0)


# ------------------------------------------------------------------ mariabackup's own files
def test_checkpoints_and_galera_position_are_read_from_the_raw_backup(tmp_path):
    (tmp_path / "xtrabackup_checkpoints").write_text(
        "backup_type = full-backuped\nfrom_lsn = 0\nto_lsn = 123456\nlast_lsn = 123470\n")
    (tmp_path / "xtrabackup_galera_info").write_text("5e2a7e4c-cd53-11ef-8d1d-3fbd6ab3a0e1:1234 1\n")  # MariaDB 10.11
    assert mariabackup.checkpoints(tmp_path) == {"backup_type": "full-backuped", "from_lsn": 0,
                                                 "to_lsn": 123456, "last_lsn": 123470}
    assert mariabackup.galera_position(tmp_path) == {"uuid": "5e2a7e4c-cd53-11ef-8d1d-3fbd6ab3a0e1", "seqno": 1234}
    (tmp_path / "xtrabackup_galera_info").write_text("garbage")
    with pytest.raises(BackupError, match="not uuid:seqno"):
        mariabackup.galera_position(tmp_path)


def test_a_server_without_galera_has_no_position_and_a_directory_without_checkpoints_is_no_backup(tmp_path):
    assert mariabackup.galera_position(tmp_path) is None
    with pytest.raises(BackupError, match="not a mariabackup backup"):
        mariabackup.checkpoints(tmp_path)


# ------------------------------------------------------------------ blocks
def test_the_namenode_configuration_names_location_and_disk(tmp_path):
    config = tmp_path / "namenode.yml"
    config.write_text('log_level: "INFO"\nnamenode:\n  bind: "0.0.0.0"\n  advertised_address: "172.30.80.21:9870"\n'
                      '  data_dir: "/var/lib/hopshive/namenode"\n')
    assert blocks.namenode(config) == {"location": "172.30.80.21:9870", "data_dir": "/var/lib/hopshive/namenode"}
    config.write_text("namenode:\n  bind: x\n")
    with pytest.raises(BackupError, match="names no namenode"):
        blocks.namenode(config)


def test_a_pinned_block_survives_its_deletion_and_is_collected_with_its_checksum(tmp_path):
    data = tmp_path / "nn"
    kept = block_disk(data, 1001, b"a" * 100)
    deleted = block_disk(data, 1002, b"b" * 50)
    (kept.parent / "blk_1003.tmp").write_bytes(b"being written")
    assert blocks.pin(data) == 4                  # data and .meta of two finished blocks
    deleted.unlink()                              # the file was deleted after the snapshot
    block_disk(data, 1004, b"late")               # closed after the snapshot: not needed
    assert blocks.pin(data) == 2
    needed = {"1001": {"inode": 7, "bytes": 100, "holders": ["nn1:9870"]},
              "1002": {"inode": 8, "bytes": 50, "holders": ["nn1:9870", "nn2:9870"]},
              "1005": {"inode": 9, "bytes": 10, "holders": ["nn1:9870"]},
              "1006": {"inode": 9, "bytes": 10, "holders": ["nn2:9870"]}}
    out = data / blocks.OUT
    assert blocks.collect(data, "nn1:9870", needed, out) == {"collected": 2, "missing": ["1005"]}
    sums = json.loads((out / blocks.COLLECTED).read_text())
    assert sums["1002"]["data"] == manifest.sha256(out / blocks.relative(1002))
    assert (out / blocks.relative(1002)).read_bytes() == b"b" * 50
    blocks.unpin(data)
    assert not (data / blocks.PIN).exists() and not out.exists() and kept.exists()


def test_a_block_shorter_than_recorded_is_not_collected(tmp_path):
    data = tmp_path / "nn"
    block_disk(data, 1001, b"short")
    blocks.pin(data)
    needed = {"1001": {"inode": 7, "bytes": 100, "holders": ["nn1:9870"]}}
    assert blocks.collect(data, "nn1:9870", needed, data / blocks.OUT)["missing"] == ["1001"]


def received(tmp_path: Path, name: str, content: dict[int, bytes]) -> Path:
    """What one namenode sent: its collected block files and their SHA-256."""
    data = tmp_path / name
    for block_id, body in content.items():
        block_disk(data, block_id, body)
    blocks.pin(data)
    needed = {str(b): {"inode": 1, "bytes": len(body), "holders": [name]} for b, body in content.items()}
    blocks.collect(data, name, needed, tmp_path / f"in-{name}")
    return tmp_path / f"in-{name}"


def test_blocks_from_every_holder_are_merged_once(tmp_path):
    nn1 = received(tmp_path, "nn1", {1001: b"a", 1002: b"b"})
    nn2 = received(tmp_path, "nn2", {1002: b"b", 1003: b"c"})
    wanted = {str(b): {"inode": 1, "bytes": 1, "holders": ["nn1"]} for b in (1001, 1002, 1003)}
    into = tmp_path / "backup" / "blocks"
    assert blocks.merge([nn1, nn2], into, wanted) == 3
    assert (into / blocks.relative(1003)).read_bytes() == b"c"
    assert (into / blocks.relative(1003)).with_suffix(".meta").read_bytes() == b"crc!"


def test_a_block_changed_in_transit_fails_the_backup(tmp_path):
    nn1 = received(tmp_path, "nn1", {1001: b"a"})
    (nn1 / blocks.relative(1001)).unlink()       # a new file, not the pinned link, then changed
    (nn1 / blocks.relative(1001)).write_bytes(b"z")
    with pytest.raises(BackupError, match="changed on its way"):
        blocks.merge([nn1], tmp_path / "blocks", {})


def test_a_needed_block_on_no_namenode_fails_the_backup_with_its_inode(tmp_path):
    nn1 = received(tmp_path, "nn1", {1001: b"a"})
    wanted = {"1001": {"inode": 1, "bytes": 1, "holders": ["nn1"]},
              "1002": {"inode": 77, "bytes": 1, "holders": ["nn1", "nn2"]}}
    with pytest.raises(BackupError, match=r"1 block\(s\).*1002 \(inode 77, on nn1/nn2\).*run the backup again"):
        blocks.merge([nn1], tmp_path / "blocks", wanted)


def test_a_restore_gives_each_namenode_the_blocks_its_address_held(tmp_path):
    full, inc = tmp_path / "b1" / "blocks", tmp_path / "b2" / "blocks"
    for store, block_id in ((full, 1001), (full, 1002), (inc, 1003)):
        block_disk(store.parent / "x", block_id, b"data")
        (store / blocks.relative(block_id)).parent.mkdir(parents=True, exist_ok=True)
        os.replace(store.parent / "x" / "current" / blocks.relative(block_id), store / blocks.relative(block_id))
    needed = {"1001": {"inode": 1, "bytes": 4, "holders": ["nn1:9870", "nn2:9870"], "stored_in": "b1"},
              "1002": {"inode": 2, "bytes": 4, "holders": ["gone:9870"], "stored_in": "b1"},
              "1003": {"inode": 3, "bytes": 4, "holders": ["nn2:9870"], "stored_in": "b2"}}
    out = tmp_path / "out"
    counts = blocks.select(needed, {"b1": full, "b2": inc}, ["nn1:9870", "nn2:9870"], out)
    assert counts == {"nn1:9870": 2, "nn2:9870": 2}      # 1002's holder is gone: 1002 % 2 -> nn1
    assert (out / "0" / blocks.relative(1002)).exists() and (out / "1" / blocks.relative(1003)).exists()
    assert not (out / "0" / blocks.relative(1003)).exists()


# ------------------------------------------------------------------ the command line
def test_errors_are_one_line_for_the_operator(tmp_path, capsys):
    assert cli.main(["verify", "--root", str(tmp_path)]) == 1
    assert capsys.readouterr().err.startswith("hopshive-backup verify: no finished backup in ")


def test_verify_checks_the_whole_chain(tmp_path, capsys):
    finished_backup(tmp_path, "b1")
    finished_backup(tmp_path, "b2", "incremental", "b1")
    assert cli.main(["verify", "--root", str(tmp_path)]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["id"] == "b2" and answer["chain"] == ["b1", "b2"] and answer["manifest"]["base"] == "b1"
    (tmp_path / "b1" / "db" / "ibdata1").write_bytes(b"rot")
    assert cli.main(["verify", "--root", str(tmp_path)]) == 1
    assert "backup b1 (needed to restore b2) is damaged" in capsys.readouterr().err


def test_verify_refuses_a_backup_of_a_newer_release_before_reading_its_files(tmp_path, capsys):
    finished_backup(tmp_path, "b1", schemas={"hops": 6, "metastore": 4})
    (tmp_path / "b1" / "db" / "ibdata1").write_bytes(b"rot")      # not even checked: refused first
    assert cli.main(["verify", "--root", str(tmp_path), "--release-schema", "hops=5",
                     "--release-schema", "metastore=4"]) == 1
    err = capsys.readouterr().err
    assert "backup b1 was taken by a newer release (commit c0ffee)" in err and "hops 6 > 5" in err


def test_verify_accepts_a_backup_of_this_or_an_older_release(tmp_path, capsys):
    finished_backup(tmp_path, "b1", schemas={"hops": 4, "metastore": 4})
    assert cli.main(["verify", "--root", str(tmp_path), "--release-schema", "hops=5",
                     "--release-schema", "metastore=4", "--release-schema", "platform=1"]) == 0
    assert json.loads(capsys.readouterr().out)["manifest"]["schema_versions"] == {"hops": 4, "metastore": 4}


@pytest.mark.parametrize("bad", ["hops", "hops=", "=5", "hops=five"])
def test_a_malformed_release_schema_is_a_usage_error(tmp_path, capsys, bad):
    with pytest.raises(SystemExit) as exited:
        cli.main(["verify", "--root", str(tmp_path), "--release-schema", bad])
    assert exited.value.code == 2 and "expected SCHEMA=VERSION" in capsys.readouterr().err
