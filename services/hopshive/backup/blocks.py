"""Block files in a backup.  The database names the blocks each file needs
(snapshot.needed_blocks); closed blocks never change (an append writes a new block), so
a copy taken any time after they closed is right.  The race is with deletion: a file
deleted after the database snapshot loses its block files while the backup still needs
them.  So every namenode *pins* its finished block files (hard links, no copying, same
disk) before mariabackup starts and again when it ends; blocks are then collected from the
pins.  A block the snapshot needs that is in no pin on any of its holders (closed and then
deleted inside the few seconds between mariabackup's end and the second pin) fails the
backup with its id: run it again.  Block files written after the snapshot are ignored:
the snapshot does not name them.

Layout, as on a namenode's disk (namespace/blocks.py): ``subdirXX/blk_N`` and
``subdirXX/blk_N.meta`` (its CRC32C per 64 KiB)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

from . import manifest
from .errors import BackupError

PIN = "backup-pin"
OUT = "backup-out"     # the links a namenode sends, beside the pins (same disk)
COLLECTED = "collected.json"
_BLOCK_FILE = re.compile(r"^blk_(\d+)(\.meta)?$")
_SETTING = re.compile(r"^\s+(advertised_address|data_dir):\s*(.+?)\s*$")


def namenode(config: Path) -> dict:
    """{location, data_dir} of the namenode configured by ``config`` (/etc/hopshive/namenode.yml,
    whose values roles/configure writes as JSON)."""
    found = {}
    for line in config.read_text().splitlines():
        match = _SETTING.match(line)
        if match:
            found[match[1]] = json.loads(match[2])
    if set(found) != {"advertised_address", "data_dir"}:
        raise BackupError(f"{config} names no namenode advertised_address and data_dir")
    return {"location": found["advertised_address"], "data_dir": found["data_dir"]}


def relative(block_id: str | int) -> str:
    """The block file's path below a block root (namespace.blocks.BlockStore.path)."""
    return f"subdir{(int(block_id) >> 8) & 0xFF:02x}/blk_{block_id}"


def pin(data_dir: Path) -> int:
    """Hard-link every finished block file of ``data_dir`` into its pin; returns how many
    were new."""
    current, pinned, count = data_dir / "current", data_dir / PIN, 0
    for subdir in sorted(current.iterdir()) if current.is_dir() else []:
        for entry in os.scandir(subdir):
            if _BLOCK_FILE.match(entry.name):
                target = pinned / subdir.name / entry.name
                if not target.exists():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    try:
                        os.link(entry.path, target)
                        count += 1
                    except FileNotFoundError:    # deleted since it was listed: not needed then
                        pass
    return count


def unpin(data_dir: Path) -> None:
    """Drop the pins and the links collected from them (blocks deleted meanwhile free their space)."""
    for name in (PIN, OUT):
        shutil.rmtree(data_dir / name, ignore_errors=True)


def collect(data_dir: Path, location: str, blocks: dict, out: Path) -> dict:
    """Link the pinned block files (data and .meta) that ``location`` holds of the
    ``blocks`` into ``out``, with their SHA-256 in ``out/collected.json``; returns
    {collected: n, missing: [ids it should hold but has not pinned]}."""
    out.mkdir(parents=True, exist_ok=True)
    sums, missing = {}, []
    for block_id, block in blocks.items():
        if location not in block["holders"]:
            continue
        source = data_dir / PIN / relative(block_id)
        if not source.is_file() or source.stat().st_size != block["bytes"]:
            missing.append(block_id)
            continue
        sums[block_id] = {}
        for suffix in ("", ".meta"):
            file = source.with_name(source.name + suffix)
            if file.is_file():
                target = out / relative(block_id)
                target = target.with_name(target.name + suffix)
                target.parent.mkdir(parents=True, exist_ok=True)
                os.link(file, target)
                sums[block_id][suffix or "data"] = manifest.sha256(target)
    (out / COLLECTED).write_text(json.dumps(sums))
    return {"collected": len(sums), "missing": sorted(missing, key=int)}


def merge(sources: list[Path], into: Path, wanted: dict) -> int:
    """Move collected block files from each source (one per namenode, as received) into the
    backup's block directory ``into``, checking every file against the SHA-256 taken where it
    was collected; fail unless every ``wanted`` block arrived.  Returns the block count."""
    for source in sources:
        sums = json.loads((source / COLLECTED).read_text())
        for block_id, files in sums.items():
            for suffix, digest in files.items():
                name = relative(block_id) + ("" if suffix == "data" else suffix)
                if manifest.sha256(source / name) != digest:
                    raise BackupError(f"{source / name} changed on its way to the backup host (SHA-256 differs"
                                      " from the one taken on the namenode): run the backup again")
                target = into / name
                if not target.exists():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.move(source / name, target)
    absent = [block_id for block_id in wanted if not (into / relative(block_id)).is_file()]
    if absent:
        shown = ", ".join(f"{b} (inode {wanted[b]['inode']}, on {'/'.join(wanted[b]['holders'])})" for b in absent[:20])
        raise BackupError(f"{len(absent)} block(s) the database snapshot needs are on no namenode: {shown}.  A file "
                          "deleted while the backup ran takes its blocks with it: run the backup again.  If the "
                          "blocks were missing before (hopshive-dfs fsck / says CORRUPT), repair that first.")
    return len(wanted)


def select(blocks: dict, stores: dict[str, Path], locations: list[str], out: Path) -> dict[str, int]:
    """Link the block files each namenode of the restored cluster gets into
    ``out/<index of its location>/``: the blocks whose recorded holders include it; a block
    none of whose holders is in ``locations`` (a cluster with other addresses) goes to one of
    them, whose block report records it.  ``stores``: backup id -> its block directory.
    Returns {location: block count}."""
    counts = dict.fromkeys(locations, 0)
    for block_id, block in blocks.items():
        targets = [loc for loc in locations if loc in block["holders"]] or [locations[int(block_id) % len(locations)]]
        source = stores[block["stored_in"]] / relative(block_id)
        for location in targets:
            for suffix in ("", ".meta"):
                file = source.with_name(source.name + suffix)
                if file.is_file():
                    target = out / str(locations.index(location)) / relative(block_id)
                    target = target.with_name(target.name + suffix)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    os.link(file, target)
                elif not suffix:
                    raise BackupError(f"block {block_id} is not in backup {block['stored_in']} ({file})")
            counts[location] += 1
    return counts
