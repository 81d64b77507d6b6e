"""mariabackup, as the backups use it: what a raw backup says about itself
(``xtrabackup_checkpoints``, ``xtrabackup_galera_info``) and preparing a chain of raw
backups (a full one, then each increment in order) into one datadir a server can start on.
Raw backups stay as taken, so later increments can still build on them."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from .errors import BackupError

MARIABACKUP = "mariabackup"


def checkpoints(db_dir: Path) -> dict:
    """``xtrabackup_checkpoints``: backup_type, from_lsn, to_lsn, last_lsn (LSNs as ints)."""
    try:
        text = (db_dir / "xtrabackup_checkpoints").read_text()
    except FileNotFoundError:
        raise BackupError(f"{db_dir} has no xtrabackup_checkpoints: not a mariabackup backup") from None
    found = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            value = value.strip()
            found[key.strip()] = int(value) if value.isdigit() else value
    return found


def galera_position(db_dir: Path) -> dict | None:
    """The Galera state (cluster uuid, seqno) the backup is consistent with, from
    ``xtrabackup_galera_info`` (--galera-info); None on a server without Galera."""
    try:
        text = (db_dir / "xtrabackup_galera_info").read_text().strip()
    except FileNotFoundError:
        return None
    uuid, sep, rest = text.partition(":")
    seqno = re.split(r"[\s,]", rest.strip())[0]     # 10.11 writes "uuid:seqno <gtid domain id>"
    if not sep or not seqno.lstrip("-").isdigit():
        raise BackupError(f"{db_dir}/xtrabackup_galera_info holds {text!r}, not uuid:seqno")
    return {"uuid": uuid, "seqno": int(seqno)}


def backup(target: Path, socket: str, galera: bool, incremental_lsn: int | None = None,
           defaults: bool = True) -> None:
    """Take a raw backup of the server on ``socket`` into the new directory ``target``
    (root over the socket; ``defaults``: read the server's option files, as on a deployed
    node)."""
    _run([MARIABACKUP, *([] if defaults else ["--no-defaults"]), "--backup", "--user=root", f"--socket={socket}",
          f"--target-dir={target}", *(["--galera-info"] if galera else []),
          *([f"--incremental-lsn={incremental_lsn}"] if incremental_lsn is not None else [])])


def _run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise BackupError(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-3000:]}")


def prepare(db_dirs: list[Path], into: Path) -> None:
    """Prepare the chain ``db_dirs`` (a full raw backup, then its increments in order) into
    the new directory ``into``; the raw backups are not touched (copies are prepared)."""
    if into.exists():
        raise BackupError(f"{into} exists already; remove it or prepare elsewhere")
    full, increments = db_dirs[0], db_dirs[1:]
    if checkpoints(full).get("backup_type") != "full-backuped":
        raise BackupError(f"{full} is not a raw full backup ({checkpoints(full).get('backup_type')})")
    shutil.copytree(full, into, symlinks=True)
    _run([MARIABACKUP, "--prepare", f"--target-dir={into}"])
    for increment in increments:
        # Applying an increment moves its .delta files away: apply a copy.
        copy = into.with_name(f"{into.name}.increment")
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(increment, copy, symlinks=True)
        try:
            _run([MARIABACKUP, "--prepare", f"--target-dir={into}", f"--incremental-dir={copy}"])
        finally:
            shutil.rmtree(copy, ignore_errors=True)
