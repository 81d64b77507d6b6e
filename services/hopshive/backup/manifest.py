"""A backup's manifest (``manifest.json``): what the backup is of (commit, schema versions,
Galera position, log sequence numbers, time) and every file it holds with its size and
SHA-256.  Written once the backup is complete and verified straight after, so a backup that
exists with a manifest was whole when taken; verified again before a restore."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from .errors import BackupError

FORMAT = 1
NAME = "manifest.json"
_CHUNK = 1 << 20


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def inventory(root: Path) -> list[dict]:
    """Every file below ``root`` but the manifest, by relative path, with size and SHA-256."""
    found = []
    for directory, _, names in sorted(os.walk(root)):
        for name in sorted(names):
            path = Path(directory, name)
            relative = path.relative_to(root).as_posix()
            if relative != NAME:
                found.append({"path": relative, "size": path.stat().st_size, "sha256": sha256(path)})
    return found


def write(root: Path, facts: dict) -> dict:
    """Write the manifest of the backup in ``root`` (atomically: a backup without one is
    unfinished) and return it."""
    manifest = {"format": FORMAT, **facts, "files": inventory(root)}
    temporary = root / f".{NAME}.tmp"
    temporary.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    os.replace(temporary, root / NAME)
    return manifest


def newer_schemas(recorded: dict[str, int], release: dict[str, int]) -> list[str]:
    """The schemas a backup holds at a migration this release does not have ("hops 6 > 5"):
    its code would run on a schema it does not know.  An older schema is fine: the restore
    brings it forward with hopshive-schematool upgrade, as a deployment would."""
    return [f"{schema} {version} > {release.get(schema, 0)}"
            for schema, version in sorted(recorded.items()) if version > release.get(schema, 0)]


def read(root: Path) -> dict:
    try:
        manifest = json.loads((root / NAME).read_text())
    except FileNotFoundError:
        raise BackupError(f"{root} has no {NAME}: the backup did not finish; take a new one") from None
    except json.JSONDecodeError as exc:
        raise BackupError(f"{root / NAME} is not JSON ({exc})") from None
    if manifest.get("format") != FORMAT:
        raise BackupError(f"{root / NAME} has format {manifest.get('format')!r}; this tool reads {FORMAT}")
    return manifest


def verify(root: Path) -> list[str]:
    """What differs between the backup in ``root`` and its manifest (empty: it is whole)."""
    listed = {entry["path"]: entry for entry in read(root)["files"]}
    problems = []
    for path, entry in listed.items():
        file = root / path
        if not file.is_file():
            problems.append(f"{path}: missing")
        elif file.stat().st_size != entry["size"]:
            problems.append(f"{path}: {file.stat().st_size} bytes, the manifest says {entry['size']}")
        elif sha256(file) != entry["sha256"]:
            problems.append(f"{path}: SHA-256 differs from the manifest")
    for directory, _, names in os.walk(root):
        for name in names:
            relative = Path(directory, name).relative_to(root).as_posix()
            if relative != NAME and relative not in listed:
                problems.append(f"{relative}: not in the manifest")
    return problems
