"""What the database says at the backup's point: a private server started on a prepared
copy of the backup (no network, no grant checks, no Galera, no binary log), asked which
block files each file needs and which schema versions it holds, then stopped.  Reading the
backup itself, not the live cluster, is what makes the block list match the database that
a restore brings back."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

from .errors import BackupError

MARIADBD = "/usr/sbin/mariadbd"
SCHEMAS = ("hops", "metastore", "platform")

# Every recorded block with each holder of a sound replica (HopsHive's hdfs_replicas; the
# writing holder, hdfs_block_infos.location, when no replica row is sound).  Blocks are
# recorded in the transaction that closes their file, so a file still being written has
# none here: lease recovery removes it (or rolls its append back) after a restore.
BLOCKS_SQL = """
SELECT b.block_id, b.inode_id, b.num_bytes, b.location, IFNULL(GROUP_CONCAT(r.location), '')
FROM hops.hdfs_block_infos b
LEFT JOIN hops.hdfs_replicas r ON r.block_id = b.block_id AND r.corrupt = 0
GROUP BY b.block_id, b.inode_id, b.num_bytes, b.location
"""


def client(socket: str, sql: str, timeout: float = 60) -> list[list[str]]:
    """Rows of ``sql`` run by the mariadb client as root over ``socket`` (tab-separated batch)."""
    done = subprocess.run(["mariadb", "--no-defaults", f"--socket={socket}", "--user=root", "--batch", "--skip-column-names",
                           "--connect-timeout=2", "-e", sql], capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise BackupError(f"mariadb over {socket}: {done.stderr.strip()}")
    return [line.split("\t") for line in done.stdout.splitlines()]


class TemporaryServer:
    """``with TemporaryServer(datadir) as server: server.query(...)``; ``datadir`` must be
    a prepared backup; the server runs as ``user`` (root: a scratch copy root made)."""

    def __init__(self, datadir: Path, user: str = "root", timeout: float = 120):
        self.datadir, self.user, self.timeout = datadir, user, timeout
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> "TemporaryServer":
        self._run = tempfile.mkdtemp(prefix="hopshive-backup-")
        os.chmod(self._run, 0o755)
        self.socket = f"{self._run}/mysqld.sock"
        self.log = Path(self._run) / "error.log"
        self.process = subprocess.Popen(
            [MARIADBD, "--no-defaults", f"--datadir={self.datadir}", f"--socket={self.socket}",
             f"--pid-file={self._run}/mysqld.pid", f"--log-error={self.log}", f"--user={self.user}",
             "--skip-networking", "--skip-grant-tables", "--skip-log-bin", "--innodb-buffer-pool-size=64M"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                self.query("SELECT 1")
                return self
            except BackupError as exc:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.__exit__(None, None, None)
                    raise BackupError(f"a server on the prepared backup {self.datadir} did not start ({exc});"
                                      f" its log:\n{self._log_tail()}") from None
            time.sleep(0.5)

    def _log_tail(self) -> str:
        try:
            return "\n".join(self.log.read_text().splitlines()[-20:])
        except FileNotFoundError:
            return "(none)"

    def query(self, sql: str) -> list[list[str]]:
        return client(self.socket, sql)

    def __exit__(self, *exc) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(self.timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for name in os.listdir(self._run):
            os.unlink(os.path.join(self._run, name))
        os.rmdir(self._run)


def needed_blocks(server) -> dict[str, dict]:
    """{block id: {inode, bytes, holders}} of every block the snapshot's files need."""
    blocks = {}
    for block_id, inode_id, num_bytes, written_on, replicas in server.query(BLOCKS_SQL):
        holders = [h for h in replicas.split(",") if h] or [written_on]
        blocks[block_id] = {"inode": int(inode_id), "bytes": int(num_bytes), "holders": sorted(holders)}
    return blocks


def schema_versions(server) -> dict[str, int]:
    """{schema: last applied migration} of the HopsHive schemas the snapshot has."""
    present = {row[0] for row in server.query(
        "SELECT TABLE_SCHEMA FROM information_schema.TABLES WHERE TABLE_NAME = 'SCHEMA_MIGRATIONS'")}
    return {schema: int(server.query(f"SELECT IFNULL(MAX(version), 0) FROM `{schema}`.SCHEMA_MIGRATIONS")[0][0])
            for schema in SCHEMAS if schema in present}


def user_data(socket: str) -> dict[str, int]:
    """How much user data a running server holds (file contents and tables): a restore
    must not overwrite it unasked.  A fresh deployment has the schemas but none of this."""
    counts = {}
    for name, table in (("blocks", "hops.hdfs_block_infos"), ("small files", "hops.hdfs_small_files"),
                        ("tables", "metastore.TBLS")):
        schema, bare = table.split(".")
        if client(socket, f"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA='{schema}'"
                          f" AND TABLE_NAME='{bare}'")[0][0] != "0":
            counts[name] = int(client(socket, f"SELECT COUNT(*) FROM {table}")[0][0])
    return {name: count for name, count in counts.items() if count}
