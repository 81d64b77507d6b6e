"""hopshive-cleaner: removes the metadata foreign keys cannot reach, always on (thesis 3.1.3).

Commands: ``run`` (the default) serves: every instance competes for one lease row; the
leader tails the MariaDB binlog from the stored GTID position, removes the orphans each
transaction leaves, sweeps everything at start and every few minutes, and deletes old
scratch and staging directories.  ``status`` prints the leader, the binlog position and how
far it is behind.  ``health`` asks the running instance's /health.

Configuration: built-in defaults, then the YAML file given by --config (or
$HOPSHIVE_CONFIG), then $HOPSHIVE_<SECTION>__<KEY> variables.  Logs are JSON lines on
stderr.  SIGTERM/SIGINT stop it gracefully and hand the lease over at once.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import urllib.error
import urllib.request

from ..core.db import Database, DriverError
from ..core.logs import setup_logging
from ..core.schematool import COMPONENTS
from ..core.reload import on_hangup, reloader
from ..core.service import effective_config, print_config, schemas_usable, service_parser
from . import lease, positions
from .service import DEFAULTS, CleanerService, config_problems

PROG = "hopshive-cleaner"
# The metastore tables the cleaner reads or writes: its account sees no others.
METASTORE_TABLES = {"DBS", "TBLS", "PARTITIONS", "IDXS", "KEY_CONSTRAINTS", "SDS", "CDS", "SERDES",
                    "SKEWED_STRING_LIST", "SKEWED_VALUES", "SKEWED_COL_VALUE_LOC_MAP", "CLEANER_LEASE",
                    "CLEANER_POSITION", "CLEANER_SD_REFS", "HBASE_MOVES"}
DEFAULT_CONFIG = "/etc/hopshive/cleaner.yml"


def status(config: dict, as_json: bool) -> int:
    name = config["cleaner"]["name"]
    db = Database(config["database"])
    try:
        def work(tx):
            stored, last_sweep = positions.load(tx, name)
            now = positions.server_position(tx)
            row = tx.query_one(f"SELECT TIMESTAMPDIFF(MICROSECOND, UPDATED_AT, NOW(3)) / 1e6 FROM "
                               f"{positions.MS}.CLEANER_POSITION WHERE NAME=%s", (name,))
            return lease.holder(tx, name), stored, now, last_sweep, (float(row[0]) if row else None)
        holder, stored, now, last_sweep, age = db.run(work, readonly=True)
    finally:
        db.close()
    leader = holder.owner if holder and holder.remaining_seconds > 0 else None
    report = {
        "lease": name, "leader": leader, "epoch": holder.epoch if holder else None,
        "lease_remaining_seconds": round(holder.remaining_seconds, 3) if holder else None,
        "position": str(stored) if stored else None, "server_position": str(now),
        "behind_transactions": stored.behind(now) if stored else None,
        "position_age_seconds": round(age, 3) if age is not None else None,
        "last_sweep": str(last_sweep) if last_sweep else None,
    }
    if as_json:
        print(json.dumps(report, indent=2))
    else:
        print(f"leader: {leader or 'none (no instance holds the lease)'}"
              + (f" (epoch {report['epoch']}, lease {report['lease_remaining_seconds']} s left)" if leader else ""))
        print(f"position: {report['position'] or 'none stored yet'}; server: {report['server_position']}")
        if stored:
            print(f"lag: {report['behind_transactions']} transactions behind (when idle, these are the lease "
                  f"renewals since the position was last saved, {report['position_age_seconds']} s ago)")
        print(f"last sweep: {report['last_sweep'] or 'never'}")
    return 0 if leader else 1


def health(config: dict) -> int:
    c = config["cleaner"]
    host = "127.0.0.1" if c["listen_host"] in ("0.0.0.0", "::", "") else c["listen_host"]
    url = f"http://{host}:{c['listen_port']}/health"
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            print(response.read().decode())
            return 0
    except urllib.error.HTTPError as exc:
        print(exc.read().decode(), file=sys.stderr)
    except OSError as exc:
        print(f"{PROG}: {url}: {exc}", file=sys.stderr)
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = service_parser(PROG, __doc__, f"Without --config, {DEFAULT_CONFIG} is read when it exists "
                                           "(after $HOPSHIVE_CONFIG).")
    parser.add_argument("command", nargs="?", choices=["run", "status", "health"], default="run")
    parser.add_argument("--json", action="store_true", help="status: print one JSON document")
    args = parser.parse_args(argv)
    path = args.config
    if path is None:
        path = os.environ.get("HOPSHIVE_CONFIG") or (DEFAULT_CONFIG if os.path.exists(DEFAULT_CONFIG) else None)
    config = effective_config(PROG, DEFAULTS, path)
    if config is None:
        return 2
    problems = config_problems(config)
    if problems:
        print(f"{PROG}: " + "; ".join(problems), file=sys.stderr)
        return 2
    if args.check_config:
        print_config(config)
        return 0
    try:
        if args.command == "status":
            return status(config, args.json)
        if args.command == "health":
            return health(config)
    except DriverError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    setup_logging(config["log_level"])
    if not schemas_usable(config["database"], [COMPONENTS["hops"], COMPONENTS["metastore"]],
                          {"metastore": METASTORE_TABLES}):
        return 1
    service = CleanerService(config)
    signal.signal(signal.SIGTERM, lambda *_: service.stopping.set())
    signal.signal(signal.SIGINT, lambda *_: service.stopping.set())
    on_hangup(reloader(DEFAULTS, path))        # the log level (its health port serves no TLS)
    return service.run()


if __name__ == "__main__":
    sys.exit(main())
