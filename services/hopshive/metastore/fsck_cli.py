"""hopshive-metatool: administrative checks on the metastore database.

``hopshive-metatool fsck-hbase [--repair]`` does the same for the HBase store (rows a crash
between two HBase writes left unreferenced; see ``stores/hbase/fsck.py``).

``hopshive-metatool explain-filter DB TABLE 'FILTER'`` prints how the HBase store runs a
partition filter: the plan in the notation of HIVE-9452's design (Get, Scan(start, stop),
setFilter, merge), each HBase call with its row range and filter string, and whether the
metastore must re-check a residual (LIKE).  It reads the `hbase` section of --config.

``hopshive-metatool fsck`` lists metadata the foreign keys cannot clean up (see
hopshive.metastore.fsck); ``--repair`` deletes the orphans among it, in short batches.
Exit status: 0 when nothing is left to report, 1 when findings remain (report-only kinds,
rows skipped because they were busy, or no ``--repair``), 2 when the tool could not run.
The database user needs write access to the `metastore` schema and SELECT on
`hops.hdfs_inodes` (to rebuild directory paths).

Every command reads --config, else $HOPSHIVE_CONFIG, else the first of
/etc/hopshive/metatool.yml (written by the deployment on metastore hosts, root-only) and
/etc/hopshive/schematool.yml that exists; of any file only the sections a command uses are
read (`database`, `fsck`; `metastore` and `hbase` for the HBase store), so a metastore
instance's file works too.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from ..core.config import DATABASE_DEFAULTS, ConfigError, load_config
from ..core.db import Database, DriverError
from .app import HBASE_DEFAULTS
from .exceptions import MetastoreError
from .fsck import DEFAULT_BATCH_SIZE, DEFAULT_GRACE_SECONDS, Report, find_orphans, repair_in_batches

DEFAULT_CONFIGS = ("/etc/hopshive/metatool.yml", "/etc/hopshive/schematool.yml")
DEFAULTS = {"database": dict(DATABASE_DEFAULTS),
            "fsck": {"grace_seconds": DEFAULT_GRACE_SECONDS, "batch_size": DEFAULT_BATCH_SIZE},
            "hbase": dict(HBASE_DEFAULTS)}
CONFIG_HELP = "YAML file (default: $HOPSHIVE_CONFIG, else " + " or ".join(DEFAULT_CONFIGS) + ")"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hopshive-metatool", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    fsck = commands.add_parser("fsck", help="find (and with --repair remove) orphaned metadata")
    fsck.add_argument("--config", help=CONFIG_HELP + "; its `database` and `fsck` sections")
    fsck.add_argument("--repair", action="store_true", help="delete the repairable orphans")
    fsck.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    fsck.add_argument("--grace", type=float, metavar="SECONDS",
                      help=f"ignore rows younger than this (default {DEFAULT_GRACE_SECONDS:g})")
    fsck.add_argument("--batch-size", type=int, metavar="N",
                      help=f"orphans deleted per transaction (default {DEFAULT_BATCH_SIZE})")
    hbase_fsck = commands.add_parser("fsck-hbase", help="find (and with --repair fix) leftovers in the HBase store")
    hbase_fsck.add_argument("--config", help=CONFIG_HELP + "; its `database`, `metastore` (warehouse, "
                                             "namespace_uris) and `hbase` sections")
    hbase_fsck.add_argument("--repair", action="store_true", help="delete orphans, fix descriptor counters")
    explain = commands.add_parser("explain-filter", help="print the HBase store's plan for a partition filter")
    explain.add_argument("db")
    explain.add_argument("table")
    explain.add_argument("filter", help="a Hive partition filter, e.g. \"p1 > 10 and p2 = 'x'\"")
    explain.add_argument("--config", help=CONFIG_HELP + "; its `hbase` section (host, port, table_prefix)")
    return parser


def _with_hbase_store(config: dict, work, failure: int) -> int:
    """Run ``work(db, store)`` on the HBase store of ``config``; a store error is printed
    and becomes exit status ``failure``."""
    from .stores.hbase_store import HBaseStore
    db = Database(config["database"])
    try:
        return work(db, HBaseStore(db, config["hbase"]))
    except MetastoreError as exc:
        print(f"hopshive-metatool: {exc}", file=sys.stderr)
        return failure
    finally:
        db.close()


def run_explain(config: dict, db_name: str, table: str, text: str) -> int:
    def work(db, store) -> int:
        print(store.explain(db_name.lower(), table.lower(), text))
        return 0
    return _with_hbase_store(config, work, 1)


def run_hbase_fsck(config: dict, do_repair: bool) -> int:
    from .locations import Locations
    from .stores.hbase import fsck as hbase_fsck

    def work(db, store) -> int:
        ms = config["metastore"]
        locations = Locations(ms["namespace_uris"], ms["warehouse"])
        report = hbase_fsck.find(store, db, locations)
        print("hbase store fsck: " + (", ".join(f"{k} {n}" for k, n in sorted(report.counts().items()))
                                      or "nothing found"))
        for finding in report.findings:
            print(f"  {finding.kind} {finding.table}/{finding.row.hex()}: {finding.what}"
                  f" [{'repairable' if finding.repairable else 'report only'}]")
        if report.released:
            print(f"  ({len(report.released)} released descriptor(s) kept for reuse; --repair deletes them)")
        if do_repair and (report.findings or report.released):
            done = hbase_fsck.repair(store, report, db, locations)
            print("repaired: " + (", ".join(f"{k} {n}" for k, n in sorted(done.items())) or "nothing"))
            report = hbase_fsck.find(store, db, locations)
        return 1 if report.findings else 0
    return _with_hbase_store(config, work, 2)


def _print_report(report: Report, title: str) -> None:
    counts = report.counts()
    summary = ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items())) or "nothing found"
    print(f"{title}: {summary}")
    for finding in report.findings:
        action = "repairable" if finding.repairable else "report only"
        print(f"  {finding.kind} {finding.id}: {finding.what} - {finding.why} [{action}]")


def run_fsck(db: Database, repair: bool, grace: float, batch_size: int, as_json: bool) -> int:
    report = db.run(lambda tx: find_orphans(tx, grace))
    repaired = remaining = None
    if repair and report.repairable:
        repaired = repair_in_batches(db, report, batch_size)
        remaining = db.run(lambda tx: find_orphans(tx, grace))
    left = remaining if remaining is not None else report
    if as_json:
        print(json.dumps({"report": report.to_dict(), "repaired": repaired,
                          "remaining": left.counts()}, indent=2, ensure_ascii=False))
    else:
        _print_report(report, "metastore fsck")
        if repaired is not None:
            print("repaired: " + ", ".join(f"{kind} {n}" for kind, n in repaired.items()))
            _print_report(left, "remaining")
        elif report.repairable:
            print(f"{len(report.repairable)} repairable; run again with --repair to delete them")
    return 1 if left.findings else 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    path = args.config or os.environ.get("HOPSHIVE_CONFIG") \
        or next((candidate for candidate in DEFAULT_CONFIGS if os.path.exists(candidate)), None)
    try:
        if args.command == "fsck-hbase":
            from .app import DEFAULTS as METASTORE_DEFAULTS
            return run_hbase_fsck(load_config(METASTORE_DEFAULTS, path, sections=("database", "metastore", "hbase")),
                                  args.repair)
        if args.command == "explain-filter":
            config = load_config(DEFAULTS, path, sections=("database", "hbase"))
            return run_explain(config, args.db, args.table, args.filter)
        config = load_config(DEFAULTS, path, sections=("database", "fsck"))
        grace = float(args.grace if args.grace is not None else config["fsck"]["grace_seconds"])
        batch_size = int(args.batch_size or config["fsck"]["batch_size"])
        db = Database(config["database"])
        try:
            return run_fsck(db, args.repair, grace, batch_size, args.json)
        finally:
            db.close()
    except (ConfigError, DriverError) as exc:
        print(f"hopshive-metatool: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
