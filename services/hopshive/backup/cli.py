"""``hopshive-backup``: the steps of playbooks/backup.yml and restore.yml that are logic
rather than orchestration, one subcommand each, each printing JSON.  Errors are one line
on stderr and exit status 1."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from datetime import datetime, timezone
from pathlib import Path

from . import blocks, catalog, manifest, mariabackup, snapshot
from .errors import BackupError

PLAN = "backup.json"       # what the backup was started as (catalog.plan), in its directory
SNAPSHOT = "snapshot.json"  # what its database said (schema versions)
BLOCKS = "blocks.json"      # every block its database needs, and the backup that stores it


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _json(path: Path) -> dict:
    return json.loads(path.read_text())


def cmd_plan(args) -> dict:
    args.root.mkdir(mode=0o700, parents=True, exist_ok=True)    # the database's secrets are in there
    planned = catalog.plan(args.root, args.incremental, args.donor)
    (args.root / planned["id"]).mkdir()
    (args.root / planned["id"] / PLAN).write_text(json.dumps({**planned, "donor": args.donor, "started": _now()}))
    return planned


def cmd_db_backup(args) -> dict:
    mariabackup.backup(args.target, args.socket, args.galera, args.incremental_lsn, defaults=not args.no_defaults)
    return {"target": str(args.target), **mariabackup.checkpoints(args.target)}


def cmd_snapshot(args) -> dict:
    """Prepare a scratch copy of the chain, read the snapshot's block list and schema versions."""
    base = _json(args.root / args.id / PLAN)["base"]
    ids = [*(catalog.chain(args.root, base) if base else []), args.id]
    shutil.rmtree(args.scratch, ignore_errors=True)
    try:
        mariabackup.prepare([args.root / i / "db" for i in ids], args.scratch)
        with snapshot.TemporaryServer(args.scratch) as server:
            needed = snapshot.needed_blocks(server)
            versions = snapshot.schema_versions(server)
    finally:
        shutil.rmtree(args.scratch, ignore_errors=True)
    stored = {}
    for earlier in ids[:-1]:
        stored.update({b: earlier for b, entry in _json(args.root / earlier / BLOCKS).items()
                       if entry["stored_in"] == earlier})
    for block_id, block in needed.items():
        block["stored_in"] = stored.get(block_id, args.id)
    (args.root / args.id / BLOCKS).write_text(json.dumps(needed))
    (args.root / args.id / SNAPSHOT).write_text(json.dumps({"schema_versions": versions}))
    return {"blocks": len(needed), "to_collect": sum(1 for b in needed.values() if b["stored_in"] == args.id),
            "schema_versions": versions}


def cmd_pin(args) -> dict:
    return {"pinned": blocks.pin(Path(blocks.namenode(args.namenode_config)["data_dir"]))}


def cmd_unpin(args) -> dict:
    blocks.unpin(Path(blocks.namenode(args.namenode_config)["data_dir"]))
    return {"unpinned": True}


def cmd_location(args) -> dict:
    return blocks.namenode(args.namenode_config)


def cmd_collect(args) -> dict:
    node = blocks.namenode(args.namenode_config)
    wanted = {b: e for b, e in _json(args.blocks).items() if e["stored_in"] == args.id}
    out = Path(node["data_dir"]) / blocks.OUT
    shutil.rmtree(out, ignore_errors=True)
    return {**blocks.collect(Path(node["data_dir"]), node["location"], wanted, out), "out": str(out)}


def cmd_merge(args) -> dict:
    wanted = {b: e for b, e in _json(args.root / args.id / BLOCKS).items() if e["stored_in"] == args.id}
    into = args.root / args.id / "blocks"
    into.mkdir(exist_ok=True)
    return {"blocks": blocks.merge(args.sources, into, wanted)}


def cmd_seal(args) -> dict:
    """Write the manifest of a complete backup, then check the backup against it."""
    root = args.root / args.id
    planned, db = _json(root / PLAN), root / "db"
    points = mariabackup.checkpoints(db)
    facts = {"id": args.id, "kind": planned["kind"], "base": planned["base"], "donor": planned["donor"],
             "started": planned["started"], "finished": _now(), "commit": args.commit,
             "schema_versions": _json(root / SNAPSHOT)["schema_versions"], "galera": mariabackup.galera_position(db),
             "from_lsn": points.get("from_lsn"), "to_lsn": points.get("to_lsn"),
             "blocks": len(_json(root / BLOCKS))}
    written = manifest.write(root, facts)
    problems = manifest.verify(root)
    if problems:
        raise BackupError(f"backup {args.id} does not match its manifest right after it was written: {problems[:10]}")
    return {**facts, "files": len(written["files"]), "bytes": sum(f["size"] for f in written["files"])}


def cmd_verify(args) -> dict:
    backup_id = catalog.resolve(args.root, args.id)
    facts = {k: v for k, v in manifest.read(args.root / backup_id).items() if k != "files"}
    release = dict(args.release_schema or [])
    newer = manifest.newer_schemas(facts.get("schema_versions") or {}, release)
    if args.release_schema and newer:
        raise BackupError(f"backup {backup_id} was taken by a newer release (commit {facts.get('commit')}): its "
                          f"schemas are beyond this release's migrations ({', '.join(newer)}); restore it with "
                          "that release's playbooks, or a later one")
    checked = {}
    for i in catalog.chain(args.root, backup_id):
        problems = manifest.verify(args.root / i)
        if problems:
            raise BackupError(f"backup {i} (needed to restore {backup_id}) is damaged: {problems[:10]}")
        checked[i] = len(manifest.read(args.root / i)["files"])
    return {"id": backup_id, "chain": list(checked), "files": sum(checked.values()), "manifest": facts}


def _schema_version(text: str) -> tuple[str, int]:
    """``hops=5`` -> ("hops", 5)."""
    name, equals, version = text.partition("=")
    if not (name and equals and version.isdigit()):
        raise argparse.ArgumentTypeError(f"expected SCHEMA=VERSION, e.g. hops=5, not {text!r}")
    return name, int(version)


def cmd_prune(args) -> dict:
    return {"deleted": catalog.prune(args.root, args.keep_full, args.keep)}


def cmd_prepare(args) -> dict:
    ids = catalog.chain(args.root, args.id)
    mariabackup.prepare([args.root / i / "db" for i in ids], args.into)
    return {"prepared": str(args.into), "chain": ids}


def cmd_select(args) -> dict:
    needed = _json(args.root / args.id / BLOCKS)
    stores = {i: args.root / i / "blocks" for i in catalog.chain(args.root, args.id)}
    shutil.rmtree(args.out, ignore_errors=True)
    return {"blocks": blocks.select(needed, stores, args.location, args.out)}


def cmd_holds_data(args) -> dict:
    """What user data the database server on ``--socket`` or the namenode of
    ``--namenode-config`` holds ({} when none)."""
    if args.socket:
        if not os.path.exists(args.socket):
            return {"data": {}, "running": False}
        return {"data": snapshot.user_data(args.socket), "running": True}
    current = Path(blocks.namenode(args.namenode_config)["data_dir"]) / "current"
    count = sum(1 for _, _, names in os.walk(current) for n in names if n.startswith("blk_") and n[4:].isdigit())
    return {"data": {"block files": count} if count else {}}


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="hopshive-backup", description=__doc__)
    sub = top.add_subparsers(dest="command", required=True)
    root = argparse.ArgumentParser(add_help=False)
    root.add_argument("--root", type=Path, required=True, help="the backup directory on the backup host")
    one = argparse.ArgumentParser(add_help=False, parents=[root])
    one.add_argument("--id", required=True, help="a backup's id (its directory name)")
    nn = argparse.ArgumentParser(add_help=False)
    nn.add_argument("--namenode-config", type=Path, default=Path("/etc/hopshive/namenode.yml"))

    def add(name, function, parents, text):
        command = sub.add_parser(name, parents=parents, help=text, description=text)
        command.set_defaults(run=function)
        return command

    command = add("plan", cmd_plan, [root], "start a backup: choose its id, kind and base")
    command.add_argument("--donor", required=True, help="the database node mariabackup runs on")
    command.add_argument("--incremental", action="store_true", help="build on the newest backup")
    command = add("db-backup", cmd_db_backup, [], "run mariabackup --backup on this database node")
    command.add_argument("--target", type=Path, required=True, help="a new directory for the raw backup")
    command.add_argument("--socket", default="/run/mysqld/mysqld.sock")
    command.add_argument("--galera", action="store_true", help="record the Galera position (--galera-info)")
    command.add_argument("--incremental-lsn", type=int, help="copy only pages changed since this LSN")
    command.add_argument("--no-defaults", action="store_true", help="ignore the option files (a private server)")
    command = add("snapshot", cmd_snapshot, [one], "read the block list and schema versions of a raw backup")
    command.add_argument("--scratch", type=Path, required=True, help="a directory to prepare a copy in (removed)")
    add("pin", cmd_pin, [nn], "hard-link this namenode's finished block files (before and after mariabackup)")
    add("unpin", cmd_unpin, [nn], "drop this namenode's pins")
    add("location", cmd_location, [nn], "this namenode's block location and data directory")
    command = add("collect", cmd_collect, [nn], "link the pinned blocks a backup stores that this namenode holds into <data_dir>/backup-out")
    command.add_argument("--blocks", type=Path, required=True, help="the backup's blocks.json")
    command.add_argument("--id", required=True, help="the backup's id")
    command = add("merge", cmd_merge, [one], "check and move the blocks received from the namenodes into place")
    command.add_argument("sources", type=Path, nargs="+", help="received collect directories")
    command = add("seal", cmd_seal, [one], "write the manifest of a complete backup and verify it")
    command.add_argument("--commit", required=True, help="the git commit of the deployment")
    command = add("verify", cmd_verify, [root], "check a backup and its chain against their manifests")
    command.add_argument("--id", default="", help="default: the newest finished backup")
    command.add_argument("--release-schema", type=_schema_version, action="append", metavar="SCHEMA=VERSION",
                         help="the newest migration of a schema in the release restoring (repeated): a backup "
                              "beyond it is refused")
    command = add("prune", cmd_prune, [root], "delete backups beyond the retention")
    command.add_argument("--keep-full", type=int, required=True, help="full backups (with increments) to keep")
    command.add_argument("--keep", default="", help="an unfinished backup not to delete (the one running)")
    command = add("prepare", cmd_prepare, [one], "prepare a backup's database chain into a new datadir")
    command.add_argument("--into", type=Path, required=True)
    command = add("select", cmd_select, [one], "link the blocks of each restored namenode into OUT/<index>/")
    command.add_argument("--location", action="append", required=True, help="each namenode's location, in order")
    command.add_argument("--out", type=Path, required=True)
    command = add("holds-data", cmd_holds_data, [nn], "what user data a database server or a namenode holds")
    command.add_argument("--socket", default="", help="a running server's socket (default: ask the namenode)")
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        print(json.dumps(args.run(args), sort_keys=True))
    except BackupError as exc:
        print(f"hopshive-backup {args.command}: {exc}", file=sys.stderr)
        return 1
    return 0
