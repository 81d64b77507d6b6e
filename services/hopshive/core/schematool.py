"""hopshive-schematool: create, upgrade, validate and describe the database schemas.

Like Hive's schematool: ``init`` on an empty server, ``upgrade`` after installing a new
release, ``validate`` before starting services (exit 1 with the problems), ``info`` for humans.
The `hops` schema comes first: metastore tables hold foreign keys into it.  Without --config
it reads $HOPSHIVE_CONFIG, else /etc/hopshive/schematool.yml (written by the deployment,
root-only: administrative credentials) when it exists.
"""

from __future__ import annotations

import argparse
import os
import sys

from .config import DATABASE_DEFAULTS, ConfigError, load_config
from .db import Database, DriverError
from .migrations import Component, current_version, upgrade, validate

COMPONENTS = {
    "hops": Component("hops", "hops", "hopshive.namespace.schema"),
    "metastore": Component("metastore", "metastore", "hopshive.metastore.schema"),
    "platform": Component("platform", "platform", "hopshive.platform.schema"),
}
DEFAULT_CONFIG = "/etc/hopshive/schematool.yml"
DEFAULTS = {"database": dict(DATABASE_DEFAULTS, user="root", unix_socket="/run/mysqld/mysqld.sock"),
            "schema": {"engine": "InnoDB"}}


def _selected(name: str) -> list[Component]:
    return list(COMPONENTS.values()) if name == "all" else [COMPONENTS[name]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hopshive-schematool", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["init", "upgrade", "validate", "info"])
    parser.add_argument("--component", choices=["all", *COMPONENTS], default="all",
                        help="which schema (default: all, in dependency order)")
    parser.add_argument("--config", help="YAML file with a `database` section (admin credentials); default: "
                                          f"$HOPSHIVE_CONFIG, else {DEFAULT_CONFIG} when it exists")
    args = parser.parse_args(argv)
    path = args.config or os.environ.get("HOPSHIVE_CONFIG") or (DEFAULT_CONFIG if os.path.exists(DEFAULT_CONFIG) else None)
    try:
        config = load_config(DEFAULTS, path)
        db = Database(config["database"])
        status = 0
        for component in _selected(args.component):
            if args.command in ("init", "upgrade"):
                applied = upgrade(db, component, config["schema"]["engine"])
                names = ", ".join(f"{m.version:03d}_{m.name}" for m in applied) or "nothing to do"
                print(f"{component.schema}: {names}")
            elif args.command == "validate":
                problems = validate(db, component)
                for problem in problems:
                    print(problem, file=sys.stderr)
                print(f"{component.schema}: {'INVALID' if problems else 'valid'}")
                status = status or (1 if problems else 0)
            else:
                with db.transaction() as tx:
                    version = current_version(tx, component)
                print(f"{component.schema}: version {version if version is not None else 'absent'}"
                      f" (release has {component.latest})")
        return status
    except (ConfigError, DriverError) as exc:
        print(f"hopshive-schematool: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
