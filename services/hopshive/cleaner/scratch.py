"""Scratch and staging garbage (thesis 3.3): directories left by Hive and Spark sessions.

Two places, both configurable:

* **scratch roots** (default ``/tmp/hive``): every entry of ``<root>/<user>/`` (a
  session's scratch directory) not modified for ``max_age_days``;
* **staging directories** inside table and partition directories (any directory a storage
  descriptor points at): entries named like ``staging_names`` (default ``.hive-staging*`` and
  ``_temporary``, what failed Hive and Spark writes leave) older than the same age.

They are deleted through the namespace library (``NamespaceRemover``), as a user's delete
would be: blocks are invalidated, subtree locks respected, and metadata cascades.  With
``dry_run`` they are only logged.
"""

from __future__ import annotations

import logging
import time
from typing import Iterable

from ..core.db import Database, Tx
from ..exceptions import NamespaceError
from ..metastore.fsck import InodePaths, directory_id
from ..namespace.liveness import Liveness
from ..namespace.namespace import Namespace

log = logging.getLogger(__name__)
MS = "metastore"


def like_pattern(glob: str) -> str:
    """A shell-style name pattern (only ``*`` and ``?`` are special) as a SQL LIKE pattern."""
    out = []
    for char in glob:
        if char in "%_\\":
            out.append("\\" + char)
        elif char == "*":
            out.append("%")
        elif char == "?":
            out.append("_")
        else:
            out.append(char)
    return "".join(out)


def find_garbage(tx: Tx, roots: Iterable[str], staging_names: Iterable[str], max_age_seconds: float,
                 limit: int = 1000) -> list[tuple[str, str]]:
    """(path, why) of scratch and staging directories older than ``max_age_seconds``."""
    cutoff_ms = int((time.time() - max_age_seconds) * 1000)
    paths = InodePaths(tx)
    found: list[tuple[str, str]] = []
    for root in roots:
        root_id = directory_id(tx, root)
        if root_id is None:
            continue
        for parent_id, name in tx.query(
                "SELECT e.parent_id, e.name FROM hops.hdfs_inodes u JOIN hops.hdfs_inodes e ON e.parent_id = u.id"
                " WHERE u.parent_id = %s AND u.is_dir = 1 AND e.modification_time < %s LIMIT %s",
                (root_id, cutoff_ms, limit)):
            parent = paths.directory(parent_id)
            if parent is not None:
                found.append((f"{parent}/{name}", f"scratch entry under {root} older than {max_age_seconds:g} s"))
    patterns = [like_pattern(p) for p in staging_names]
    if patterns:
        names = " OR ".join(["e.name LIKE %s"] * len(patterns))
        for parent_id, name in tx.query(
                f"SELECT e.parent_id, e.name FROM hops.hdfs_inodes e JOIN hops.hdfs_inodes d ON d.id = e.parent_id"
                f" WHERE ({names}) AND e.is_dir = 1 AND e.modification_time < %s"
                f" AND EXISTS (SELECT 1 FROM {MS}.SDS s WHERE s.PARTITION_ID = d.partition_id"
                f"  AND s.PARENT_ID = d.parent_id AND s.NAME = d.name) LIMIT %s",
                (*patterns, cutoff_ms, limit)):
            parent = paths.directory(parent_id)
            if parent is not None:
                found.append((f"{parent}/{name}", f"staging directory of a table or partition older than "
                                                  f"{max_age_seconds:g} s"))
    return found


class NamespaceRemover:
    """Deletes directories through the namespace library, as a superuser, skipping the
    trash.  Registers in hops.hdfs_namenodes (subtree locks name their holder) only while
    it exists; ``heartbeat`` keeps the registration alive, ``close`` removes it."""

    def __init__(self, db: Database, config: dict, owner: str):
        self.liveness = Liveness(db, f"cleaner:{owner}", dead_after=float(config["dead_after_seconds"]))
        self.liveness.register()
        ns_config = {"superusers": [config["superuser"]], "supergroup": config["supergroup"],
                     "data_dir": config["data_dir"], "umask": "022", "small_file_limit": 0}
        self.namespace = Namespace(db, ns_config, self.liveness.address, self.liveness)
        self.caller = self.namespace.caller(config["superuser"])

    def delete(self, path: str) -> bool:
        return self.namespace.delete(self.caller, path, recursive=True, skip_trash=True)

    def heartbeat(self) -> None:
        self.liveness.heartbeat()

    def close(self) -> None:
        self.liveness.unregister()


def collect(db: Database, remover: NamespaceRemover | None, roots: list[str], staging_names: list[str],
            max_age_seconds: float, dry_run: bool, fence) -> int:
    """Delete (or with ``dry_run`` only log) old scratch and staging directories."""
    found = db.run(lambda tx: find_garbage(tx, roots, staging_names, max_age_seconds), readonly=True)
    done = 0
    for path, why in found:
        if dry_run or remover is None:
            log.info("would remove (dry run)", extra={"kind": "scratch", "path": path, "why": why})
            continue
        db.run(fence, readonly=True)
        try:
            deleted = remover.delete(path)
        except NamespaceError as exc:  # e.g. a subtree lock: the next pass retries
            log.warning("cannot remove now", extra={"kind": "scratch", "path": path, "error": str(exc)})
            continue
        if deleted:
            done += 1
            log.info("removed", extra={"kind": "scratch", "path": path, "why": why})
    return done

