"""fsck for the HBase store: what a crash between two HBase writes (no transaction spans
rows) can leave behind, found by reading every store table, and repaired on request.

Findings (all repairable): ``orphan table`` (its database is gone), ``orphan partition``
(its table is gone), ``orphan statistics`` (table or partition gone), ``orphan function``
(database gone), ``descriptor count`` (an SD's reference counter differs from the rows, orphans not
counted, that reference it; repaired by setting it), ``unused descriptor`` (no reference but
a counter above 0 or content: a crash between two writes; deleted).  Report only:
``missing descriptor`` (a row references an SD hash that is not stored).  Descriptors
released in the normal way (counter 0, content emptied: ``records``) are not findings;
``--repair`` deletes them too.

With the namespace (``--config`` of a metastore instance): ``table without directory`` and
``partition without directory`` -- metadata whose directory in the HopsHive namespace was
deleted or moved behind the metastore's back (the MariaDB store's inode foreign keys do this
at once; the HBase store has none).  Repair drops that metadata, keeping the data (there is
none).  This is the recovery for a crash between a directory change and its HBase write,
whose order the store's module docstring gives.

Run it when no DDL is in flight: a write between the reads can look like an orphan.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from . import rowkey
from .records import RECORD as OBJ, REFS, Record, decode


def _gone(namespace, locations, record: Record) -> bool:
    """Whether the row's location is in our namespace and its directory does not exist."""
    uri = record.location
    if not uri:
        return False
    location = locations.parse(uri)
    if not location.ours:
        return False
    return namespace.db.run(lambda tx: namespace.resolve(tx, location.path), readonly=True) is None


@dataclass
class Finding:
    kind: str
    table: str           # the store table (dbs, tbls, parts, sds, funcs, stats)
    row: bytes
    what: str
    repairable: bool = True
    value: int | None = None   # descriptor count: the right value
    target: tuple = ()         # without directory: (db, table) or (db, table, values)


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


def find(store, namespace=None, locations=None) -> HBaseReport:
    """Read every table of ``store`` (an HBaseStore) and report what is inconsistent; with
    ``namespace`` and ``locations`` (the metastore's) also metadata whose directory is gone."""
    from ...api import api

    report = HBaseReport()

    def work(t):
        dbs = {k for k, _ in t("dbs").scan(filter=b"KeyOnlyFilter()")}
        tables, refs = {}, Counter()
        for key, data in t("tbls").scan():
            record = Record.of(data)
            db_name, name = _strings(key, 2)
            if rowkey.encode_string(db_name) not in dbs:     # its partitions go with it
                report.findings.append(Finding("orphan table", "tbls", key, f"{db_name}.{name}"))
                continue
            tables[(db_name, name)] = key
            refs[record.sd] += 1
            if namespace is not None and _gone(namespace, locations, record):
                report.findings.append(Finding("table without directory", "tbls", key,
                                               f"{db_name}.{name} {record.location}", target=(db_name, name)))
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
            if namespace is not None and _gone(namespace, locations, record):
                report.findings.append(Finding("partition without directory", "parts", key,
                                               f"{part.dbName}.{part.tableName} {record.location}",
                                               target=(part.dbName, part.tableName, tuple(part.values))))
        for key, _ in t("stats").scan(filter=b"KeyOnlyFilter()"):
            db_name, name, part = _strings(key, 3)
            if (db_name, name) not in tables or (part and (db_name, name, part) not in part_names):
                report.findings.append(Finding("orphan statistics", "stats", key, f"{db_name}.{name} {part}".strip()))
        for key, _ in t("funcs").scan(filter=b"KeyOnlyFilter()"):
            db_name, name = _strings(key, 2)
            if rowkey.encode_string(db_name) not in dbs:
                report.findings.append(Finding("orphan function", "funcs", key, f"{db_name}.{name}"))
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
    return report


def repair(store, report: HBaseReport) -> dict[str, int]:
    """Apply the repairable findings; returns how many of each kind."""
    done: Counter = Counter()

    gone_tables = {f.target for f in report.findings if f.kind == "table without directory"}
    for finding in report.findings:      # through the store: partitions, statistics, SDs go too
        if finding.kind == "table without directory":
            store.drop_table(*finding.target, None)
            done[finding.kind] += 1
        elif finding.kind == "partition without directory" and finding.target[:2] not in gone_tables:
            store.drop_partitions(finding.target[0], finding.target[1], [list(finding.target[2])], None,
                                  if_exists=True)
            done[finding.kind] += 1
    if done:      # those drops changed counters: read the store again for the rest
        report = find(store)

    def work(t):
        for finding in report.findings:
            if not finding.repairable or finding.kind.endswith("without directory"):
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
