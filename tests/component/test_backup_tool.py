"""hopshive-backup against a real MariaDB and the real mariabackup: a full backup and an
increment of a private server, the block list read from each prepared snapshot (not from the
live server, which has moved on), manifests, and a prepared chain that starts with the
increment's data."""

from __future__ import annotations

import json
import shutil
import time

import pytest

from hopshive.backup import cli, snapshot

pytestmark = pytest.mark.skipif(not shutil.which("mariabackup"),
                                reason="mariabackup is not installed (Debian package mariadb-backup, which "
                                       "roles/mysql_cluster installs)")


def run(capsys, *argv: str) -> dict:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    assert status == 0, err
    return json.loads(out)


def add_block(db, inode: int, block_id: int, holders: list[str], corrupt: tuple = ()) -> None:
    with db.transaction() as tx:
        tx.execute("INSERT INTO hops.hdfs_block_infos (inode_id, block_index, block_id, num_bytes, location)"
                   " VALUES (%s, 0, %s, 4, %s)", (inode, block_id, holders[0]))
        for holder in holders:
            tx.execute("INSERT INTO hops.hdfs_replicas (block_id, location, corrupt) VALUES (%s, %s, %s)",
                       (block_id, holder, int(holder in corrupt)))


def take(capsys, root, mariadb, incremental: bool) -> str:
    """What backup.yml runs on the database side, on one host."""
    planned = run(capsys, "plan", "--root", str(root), "--donor", "db3", *(["--incremental"] if incremental else []))
    lsn = ["--incremental-lsn", str(planned["incremental_lsn"])] if incremental else []
    run(capsys, "db-backup", "--no-defaults", "--socket", mariadb.socket,
        "--target", str(root / planned["id"] / "db"), *lsn)
    run(capsys, "snapshot", "--root", str(root), "--id", planned["id"], "--scratch", str(root / ".scratch"))
    (root / planned["id"] / "blocks").mkdir()
    sealed = run(capsys, "seal", "--root", str(root), "--id", planned["id"], "--commit", "abc123")
    assert sealed["kind"] == ("incremental" if incremental else "full") and sealed["commit"] == "abc123"
    assert sealed["schema_versions"]["hops"] >= 1 and sealed["to_lsn"] > 0
    return planned["id"]


def test_a_full_backup_and_an_increment_restore_the_database_they_were_taken_of(db, mariadb, tmp_path, capsys):
    root = tmp_path / "backups"
    add_block(db, 50, 2001, ["nn1:9870", "nn2:9870"])
    add_block(db, 51, 2002, ["nn1:9870", "nn2:9870"], corrupt=("nn2:9870",))
    full = take(capsys, root, mariadb, incremental=False)
    add_block(db, 52, 2003, ["nn2:9870"])           # after the full backup's snapshot
    blocks = json.loads((root / full / "blocks.json").read_text())
    assert blocks == {"2001": {"inode": 50, "bytes": 4, "holders": ["nn1:9870", "nn2:9870"], "stored_in": full},
                      "2002": {"inode": 51, "bytes": 4, "holders": ["nn1:9870"], "stored_in": full}}

    time.sleep(1.1)                                  # ids are whole seconds
    increment = take(capsys, root, mariadb, incremental=True)
    blocks = json.loads((root / increment / "blocks.json").read_text())
    assert {b: e["stored_in"] for b, e in blocks.items()} == {"2001": full, "2002": full, "2003": increment}

    verified = run(capsys, "verify", "--root", str(root))      # preparing left the raw backups as they were
    assert verified["chain"] == [full, increment] and verified["manifest"]["base"] == full

    prepared = tmp_path / "prepared"
    run(capsys, "prepare", "--root", str(root), "--id", increment, "--into", str(prepared))
    with snapshot.TemporaryServer(prepared) as server:
        assert server.query("SELECT block_id FROM hops.hdfs_block_infos ORDER BY block_id") == [
            ["2001"], ["2002"], ["2003"]]
    assert run(capsys, "verify", "--root", str(root))["files"] == verified["files"]


def test_the_user_data_of_a_running_server_is_counted(db, mariadb):
    assert snapshot.user_data(mariadb.socket) == {}
    add_block(db, 60, 3001, ["nn1:9870"])
    assert snapshot.user_data(mariadb.socket) == {"blocks": 1}
