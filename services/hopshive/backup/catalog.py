"""The backup directory on the backup host: one subdirectory per backup, named by its UTC
start time (``20261128T061500Z``, so names sort by age).  A full backup stands alone; an
incremental one names its ``base`` (the backup before it) and needs the whole chain back
to a full one.  Retention keeps the newest N chains whole."""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path

from . import manifest
from .errors import BackupError


_WORK = (".incoming-", ".scratch-")     # a backup's working directories (backup.yml)


def new_id(now: datetime | None = None) -> str:
    return (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")


def finished(root: Path) -> list[str]:
    """Ids of the backups that have a manifest, oldest first."""
    if not root.is_dir():
        return []
    return sorted(entry.name for entry in root.iterdir() if (entry / manifest.NAME).is_file())


def chain(root: Path, backup_id: str) -> list[str]:
    """The ids a restore of ``backup_id`` needs: its full backup first, then each increment."""
    ids, current = [], backup_id
    while current:
        if current in ids:
            raise BackupError(f"the backups in {root} name each other as base in a loop at {current}")
        if not (root / current / manifest.NAME).is_file():
            raise BackupError(f"backup {current} (needed by {backup_id}) is not in {root} or did not finish")
        ids.append(current)
        current = manifest.read(root / current).get("base")
    return ids[::-1]


def resolve(root: Path, backup_id: str = "") -> str:
    """``backup_id``, or the newest finished backup when it is empty."""
    if backup_id:
        return backup_id
    done = finished(root)
    if not done:
        raise BackupError(f"no finished backup in {root}: run playbooks/backup.yml first, or name another "
                          "directory with -e hopshive_backup_dir=...")
    return done[-1]


def plan(root: Path, incremental: bool, donor: str, now: datetime | None = None) -> dict:
    """What the next backup is: its id, and for an incremental one the base and the log
    sequence number to copy from.  InnoDB's LSNs are each server's own, so an increment must
    come from the same Galera node as its base."""
    backup_id = new_id(now)
    if not incremental:
        return {"id": backup_id, "kind": "full", "base": None, "incremental_lsn": None}
    done = finished(root)
    if not done:
        raise BackupError(f"an incremental backup needs a finished backup in {root} to build on; take a full one "
                          "first (leave out -e hopshive_backup_incremental=true)")
    base = manifest.read(root / done[-1])
    if base.get("donor") != donor:
        raise BackupError(f"the newest backup {done[-1]} was taken on {base.get('donor')}, not on {donor}: InnoDB "
                          f"log positions differ between Galera nodes, so take a full backup, or set "
                          f"hopshive_backup_db_host={base.get('donor')}")
    return {"id": backup_id, "kind": "incremental", "base": done[-1], "incremental_lsn": base["to_lsn"]}


def prune(root: Path, keep_full: int, keep: str = "") -> list[str]:
    """Delete all but the newest ``keep_full`` chains, and unfinished directories and working
    directories (a backup that failed) other than ``keep``'s; returns the names deleted."""
    if keep_full < 1:
        raise BackupError(f"retention must keep at least one full backup, not {keep_full}")
    done = finished(root)
    fulls = [i for i in done if manifest.read(root / i).get("kind") == "full"]
    oldest_kept = fulls[-keep_full] if len(fulls) >= keep_full else (fulls[0] if fulls else "")
    doomed = [i for i in done if i < oldest_kept]
    doomed += [entry.name for entry in root.iterdir()
               if entry.is_dir() and entry.name not in done and entry.name != keep and not entry.name.startswith(".")]
    doomed += [entry.name for entry in root.iterdir()     # working files a failed backup left
               if entry.name.startswith(_WORK) and entry.name.split("-", 1)[1] != keep]
    for backup_id in doomed:
        shutil.rmtree(root / backup_id)
    return sorted(doomed)
