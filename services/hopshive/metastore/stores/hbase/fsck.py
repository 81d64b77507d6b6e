"""fsck for the HBase store: what a crash between two HBase writes (no transaction spans
rows) can leave behind, and metadata whose directory is gone; repaired on request.

Integrity findings (``find``; all repairable): ``orphan table`` (its database is gone),
``orphan partition`` (its table is gone), ``orphan statistics`` (table or partition gone),
``orphan function`` (database gone), ``orphan index`` (its base table or index table is
gone), ``descriptor count`` (an SD's reference counter differs
from the rows, orphans not counted, that reference it; repaired by setting it), ``unused
descriptor`` (no reference but a counter above 0 or content: a crash between two writes;
deleted).  Report only: ``missing descriptor`` (a row references an SD hash that is not
stored), ``orphan index table`` (an INDEX_TABLE no index names: drop it, or delete its
directory).  Descriptors released in the normal way (counter 0, content emptied: ``records``)
are not findings; ``repair`` deletes them too.  Run those when no DDL is in flight: a write
between the reads can look like an orphan.

Directory findings (``without_directory``, with the namespace's database): ``database
without directory``, ``table without directory``, ``partition without directory`` --
metadata whose directory in the HopsHive namespace was deleted or moved behind the
metastore's back (the MariaDB store's inode foreign keys do this at once; the HBase store
has none).  Repair drops that metadata through the store, keeping the data (there is none),
as the MariaDB store's cascade does (a database takes its tables).  The cleaner runs exactly
this: limited to the directories an event names (``under``), and in full in its sweeps;
``hopshive-metatool fsck-hbase`` runs it in full.  It is safe while DDL runs: each drop
re-reads the row and the directory first (``repair``), and the store changes a directory
and its metadata in an order that never shows a live object without its directory (see
``hbase_store``'s module docstring) except at the new place of a move in flight, which the
store records first (``moves``) and a drop skips.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

from ...fsck import ROOT_ID, directory_id
from . import moves, rowkey
from .records import RECORD as OBJ, REFS, Record, decode

NO_DIRECTORY = ("database without directory", "table without directory", "partition without directory")


@dataclass
class Finding:
    kind: str
    table: str           # the store table (dbs, tbls, parts, sds, funcs, stats)
    row: bytes
    what: str
    repairable: bool = True
    value: int | None = None   # descriptor count: the right value
    target: tuple = ()         # without directory: (db,), (db, table) or (db, table, values)
    path: str = ""             # without directory: the directory that is gone


@dataclass
class HBaseReport:
    findings: list[Finding] = field(default_factory=list)
    released: list[bytes] = field(default_factory=list)     # descriptors released normally

    def counts(self) -> dict[str, int]:
        return dict(Counter(f.kind for f in self.findings))


def _strings(key: bytes, count: int) -> list[str]:
    out, pos = [], 0
    for _ in range(count):
        text, used = rowkey.decode_string(key[pos:])
        out.append(text)
        pos += used
    return out


def find(store, db=None, locations=None) -> HBaseReport:
    """Read every table of ``store`` (an HBaseStore) and report what is inconsistent; with
    ``db`` (the namespace's database) and ``locations`` (the metastore's) also metadata
    whose directory is gone."""
    from ...api import api

    report = HBaseReport()

    def work(t):
        dbs = {k for k, _ in t("dbs").scan(filter=b"KeyOnlyFilter()")}
        tables, refs = set(), Counter()
        for key, data in t("tbls").scan(columns=[OBJ]):
            db_name, name = _strings(key, 2)
            if rowkey.encode_string(db_name) not in dbs:     # its partitions go with it
                report.findings.append(Finding("orphan table", "tbls", key, f"{db_name}.{name}"))
                continue
            tables.add((db_name, name))
            refs[Record.of(data).sd] += 1
        part_names = set()
        for key, data in t("parts").scan(columns=[OBJ]):
            record = Record.of(data)
            part = decode(api.Partition, record.blob)
            if (part.dbName, part.tableName) not in tables:
                report.findings.append(Finding("orphan partition", "parts", key,
                                               f"{part.dbName}.{part.tableName} {record.name}"))
                continue
            part_names.add((part.dbName, part.tableName, record.name))
            refs[record.sd] += 1
        for key, _ in t("stats").scan(filter=b"KeyOnlyFilter()"):
            db_name, name, part = _strings(key, 3)
            if (db_name, name) not in tables or (part and (db_name, name, part) not in part_names):
                report.findings.append(Finding("orphan statistics", "stats", key, f"{db_name}.{name} {part}".strip()))
        for key, _ in t("funcs").scan(filter=b"KeyOnlyFilter()"):
            db_name, name = _strings(key, 2)
            if rowkey.encode_string(db_name) not in dbs:
                report.findings.append(Finding("orphan function", "funcs", key, f"{db_name}.{name}"))
        indexed_tables = set()
        for key, data in t("idxs").scan(columns=[OBJ]):
            db_name, name, index_name = _strings(key, 3)
            record = Record.of(data)
            if record is None:            # emptied by a drop that did not get to delete it
                report.findings.append(Finding("orphan index", "idxs", key, f"{db_name}.{name}.{index_name} (empty)"))
                continue
            if (db_name, name) not in tables or (record.name and (db_name, record.name) not in tables):
                report.findings.append(Finding("orphan index", "idxs", key, f"{db_name}.{name}.{index_name}"
                                               f" (index table {record.name or 'none'})"))
                continue
            indexed_tables.add((db_name, record.name))
            refs[record.sd] += 1
        for key, data in t("tbls").scan(columns=[OBJ]):
            db_name, name = _strings(key, 2)
            if (db_name, name) in tables and (db_name, name) not in indexed_tables \
                    and decode(api.Table, Record.of(data).blob).tableType == "INDEX_TABLE":
                report.findings.append(Finding("orphan index table", "tbls", key, f"{db_name}.{name}",
                                               repairable=False))
        stored = {}
        for key, data in t("sds").scan():
            stored[key] = int.from_bytes(data.get(REFS, b"\0" * 8), "big", signed=True)
            if stored[key] == 0 and not data.get(OBJ) and not refs.get(key):
                report.released.append(key)
                del stored[key]
        for digest, count in refs.items():
            if digest and digest not in stored:
                report.findings.append(Finding("missing descriptor", "sds", digest, f"{count} reference(s)",
                                               repairable=False))
        for digest, count in stored.items():
            if refs.get(digest, 0) == 0:
                report.findings.append(Finding("unused descriptor", "sds", digest, f"counter {count}"))
            elif refs[digest] != count:
                report.findings.append(Finding("descriptor count", "sds", digest,
                                               f"counter {count}, {refs[digest]} reference(s)", value=refs[digest]))
    store._hb(work)
    if db is not None:
        report.findings += without_directory(store, db, locations).findings
    return report


class Directories:
    """Whether directories exist, read a parent's subdirectories at a time and cached: a
    pass over 100k partitions costs one query per parent directory.  A cached answer can be
    stale; ``repair`` re-checks with a fresh lookup before it drops anything."""

    def __init__(self, db):
        self.db = db
        self._ids: dict[str, int | None] = {"": ROOT_ID}
        self._children: dict[int, dict[str, int]] = {}

    def _id(self, path: str) -> int | None:
        if path in self._ids:
            return self._ids[path]
        parent, _, name = path.rpartition("/")
        parent_id = self._id(parent)
        if parent_id is None:
            found = None
        else:
            if parent_id not in self._children:
                self._children[parent_id] = dict(self.db.run(lambda tx: tx.query(
                    "SELECT name, id FROM hops.hdfs_inodes WHERE parent_id=%s AND is_dir=1", (parent_id,)),
                    readonly=True))
            found = self._children[parent_id].get(name)
        self._ids[path] = found
        return found

    def exists(self, path: str) -> bool:
        return self._id("/".join(c for c in path.split("/") if c)) is not None


def directory_path(locations, uri: str | None) -> str | None:
    """The namespace path of a stored location; None when it is foreign or empty."""
    if not uri:
        return None
    try:
        return locations.parse(uri).path
    except Exception:  # noqa: BLE001 -- a malformed stored location is not ours to judge
        return None


def _below(path: str, prefixes: Sequence[str] | None) -> bool:
    return prefixes is None or any(p == "/" or path == p or path.startswith(p + "/") for p in prefixes)


def _above(path: str, prefixes: Sequence[str]) -> bool:
    return any(p.startswith(path.rstrip("/") + "/") for p in prefixes)


def without_directory(store, db, locations, under: Sequence[str] | None = None) -> HBaseReport:
    """Databases, tables and partitions whose location is in the namespace and whose
    directory does not exist.  With ``under`` (paths of directories deleted or moved), only
    objects at or below those paths are looked at: every database and table row (few), and
    the partitions of the tables stored above one of the paths."""
    from ...api import api

    prefixes = None if under is None else sorted({"/" + "/".join(c for c in p.split("/") if c) for p in under})
    dirs = Directories(db)
    report = HBaseReport()
    add = report.findings.append

    def work(t):
        dropped_dbs, dropped_tables, scan = set(), set(), []
        for key, data in t("dbs").scan(columns=[OBJ]):
            database = decode(api.Database, data[OBJ])
            path = directory_path(locations, database.locationUri)
            if path and path != "/" and _below(path, prefixes) and not dirs.exists(path):
                add(Finding("database without directory", "dbs", key, f"{database.name} {database.locationUri}",
                            target=(database.name,), path=path))
                dropped_dbs.add(database.name)
        for key, data in t("tbls").scan(columns=[OBJ]):
            db_name, name = _strings(key, 2)
            location = Record.of(data).location
            path = directory_path(locations, location)
            if db_name in dropped_dbs:
                continue
            if path and _below(path, prefixes) and not dirs.exists(path):
                add(Finding("table without directory", "tbls", key, f"{db_name}.{name} {location}",
                            target=(db_name, name), path=path))
                dropped_tables.add((db_name, name))
            elif prefixes is not None and path and _above(path, prefixes):
                scan.append(rowkey.table_prefix(db_name, name))
        ranges = [(b"", b"")] if prefixes is None else [(p, rowkey.prefix_successor(p)) for p in scan]
        for start, stop in ranges:
            for key, data in store._scan(t("parts"), start, stop, columns=[OBJ]):
                db_name, name = _strings(key, 2)
                record = Record.of(data)
                path = directory_path(locations, record.location)
                if db_name in dropped_dbs or (db_name, name) in dropped_tables or not path \
                        or not _below(path, prefixes) or dirs.exists(path):
                    continue
                part = decode(api.Partition, record.blob)
                add(Finding("partition without directory", "parts", key, f"{db_name}.{name} {record.location}",
                            target=(db_name, name, tuple(part.values)), path=path))
    store._hb(work)
    return report


def _directory_gone(tx, locations, path: str) -> bool:
    """No directory at ``path`` and no move of the store in flight to it or above it (its
    rows name the new place before the move commits: ``moves``).  The moves are read first:
    one recorded before the caller read its row either is still recorded, or has committed,
    and then the directory read after it sees the moved directory."""
    targets = {directory_path(locations, uri) for uri in moves.in_flight(tx)}
    if any(t and _below(path, [t]) for t in targets):
        return False
    return directory_id(tx, path) is None


def _still_gone(store, db, locations, finding: Finding) -> bool:
    """Re-read the finding's row and directory now: the row still names the same missing
    directory, and no move of the store is on its way there (a rename by the metastore
    writes the new location before its directory move commits, so a moved object is never
    taken for a lost one)."""
    from ...api import api

    def row(t):
        data = t(finding.table).row(finding.row, columns=[OBJ])
        if not data:
            return None
        if finding.table == "dbs":
            return decode(api.Database, data[OBJ]).locationUri
        return Record.of(data).location
    uri = store._hb(row)
    return bool(uri) and directory_path(locations, uri) == finding.path and \
        db.run(lambda tx: _directory_gone(tx, locations, finding.path), readonly=True)


def drop_without_directory(store, report: HBaseReport, db, locations) -> list[Finding]:
    """Drop the objects the report found without a directory, through the store (a database
    with its tables, a table with its partitions), each after a fresh re-check of its row
    and directory; returns the findings dropped."""
    done: list[Finding] = []
    gone_dbs = {f.target[0] for f in report.findings if f.kind == NO_DIRECTORY[0]}
    gone_tables = {f.target for f in report.findings if f.kind == NO_DIRECTORY[1]}
    for finding in report.findings:
        if finding.kind not in NO_DIRECTORY:
            continue
        covered = finding.target[0] in gone_dbs if finding.kind != NO_DIRECTORY[0] else False
        if covered or finding.kind == NO_DIRECTORY[2] and finding.target[:2] in gone_tables \
                or not _still_gone(store, db, locations, finding):
            continue
        if finding.kind == NO_DIRECTORY[0]:
            store.drop_database(finding.target[0], None, True)
        elif finding.kind == NO_DIRECTORY[1]:
            store.drop_table(*finding.target, None)
        else:
            store.drop_partitions(finding.target[0], finding.target[1], [list(finding.target[2])], None,
                                  if_exists=True)
        done.append(finding)
    return done


def repair(store, report: HBaseReport, db=None, locations=None) -> dict[str, int]:
    """Apply the repairable findings; returns how many of each kind."""
    done = Counter(f.kind for f in (drop_without_directory(store, report, db, locations) if db is not None else []))
    if done:      # those drops changed counters: read the store again for the rest
        report = find(store)

    def work(t):
        for finding in report.findings:
            if not finding.repairable or finding.kind in NO_DIRECTORY:
                continue
            if finding.kind == "descriptor count":
                t("sds").counter_set(finding.row, REFS, finding.value)
            else:
                t(finding.table).delete(finding.row)
            done[finding.kind] += 1
        for digest in report.released:
            t("sds").delete(digest)
    store._hb(work)
    return dict(done)
