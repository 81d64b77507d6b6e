"""hopshive-platform: the platform API (accounts, logins, projects) and its admin CLI.

``hopshive-platform serve`` runs the HTTP API; ``user ...`` and ``project ...`` change
accounts and projects directly (the same library the API uses).  Configuration: built-in
defaults, then the YAML file given by --config (or $HOPSHIVE_CONFIG), then
$HOPSHIVE_<SECTION>__<KEY> variables.  Logs are JSON lines on stderr; SIGTERM stops the
server gracefully.  Passwords are read from standard input, never from the command line.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

import requests
from aiohttp import web

from ..core.config import DATABASE_DEFAULTS
from ..core.db import Database, DriverError
from ..core.logs import setup_logging
from ..core.schematool import COMPONENTS
from ..core.reload import on_hangup, reloader
from ..core.service import effective_config, listen, print_config, schemas_usable
from ..core.systemd import ready
from ..core.tls import client_context, http_scheme, server_context, verify
from ..security.secrets import SecretManager, TokenPolicy
from .accounts import Accounts, Limits
from .app import PlatformApp
from .exceptions import PlatformError
from .login import add_arguments as add_login_arguments, login
from .projects import ROLES, Projects
from .provision import Metastore, Namespace, ServiceTokens, addresses

log = logging.getLogger("hopshive.platform")
DEFAULT_CONFIG = "/etc/hopshive/platform.yml"   # the deployed file: operators type no flags

DEFAULTS = {
    "log_level": "info",
    "database": dict(DATABASE_DEFAULTS, user="hops_platform"),
    "platform": {
        "bind": "127.0.0.1",
        "port": 8181,
        # Several namenodes / metastore hosts: comma-separated, or a list (the next one is
        # tried when one cannot be reached: hopshive.platform.provision.Failover).
        "namenode_url": "http://127.0.0.1:9870",
        "hdfs_superuser": "hdfs",            # the namespace superuser that makes project directories
        "metastore_host": "127.0.0.1",
        "metastore_port": 9083,
        "hive_admin": "hive",                # creates project databases before they are handed over
        # Seconds the delegation tokens live that the platform mints for itself as the two
        # accounts above (proving who it acts as to the namenode and the metastore); each is
        # re-minted once half of that has passed (hopshive.platform.provision.ServiceTokens).
        "service_token_lifetime": 3600.0,
        "max_failures": 5,                   # failed logins per account ...
        "max_address_failures": 20,          # ... and per client address ...
        "failure_window": 300,               # ... within this many seconds
        "trusted_proxies": [],               # peers whose X-Forwarded-For names the client (server2 hosts)
        "session_lifetime": 86400,
        "stop_grace": 10.0,
        # TLS (https) when both are set (PEM files, hopshive.core.tls).  tls_ca_file: the CA that
        # an https namenode_url, a TLS metastore (metastore_tls) and `check` are verified with
        # (empty: the system's trust store).
        "tls_cert_file": "",
        "tls_key_file": "",
        "tls_ca_file": "",
        "metastore_tls": False,
    },
    # Lifetimes of the delegation tokens it issues, in seconds (TokenPolicy; as the namenodes').
    "security": {
        "renew_interval": 86400.0,
        "max_lifetime": 604800.0,
        "key_update_interval": 86400.0,
    },
}


def build(config: dict) -> tuple[Accounts, Projects, SecretManager]:
    """The platform's parts on one database pool.  ValueError for a bad setting."""
    pf = config["platform"]
    db = Database(config["database"])
    secrets = SecretManager(db, TokenPolicy.from_config(config["security"]))
    tokens = ServiceTokens(secrets, pf["service_token_lifetime"])
    accounts = Accounts(db, Limits(int(pf["max_failures"]), int(pf["max_address_failures"]),
                                        int(pf["failure_window"]), int(pf["session_lifetime"])))
    projects = Projects(db, accounts, Namespace(pf["namenode_url"], pf["hdfs_superuser"], tokens,
                                                ca_file=pf["tls_ca_file"]),
                        Metastore(pf["metastore_host"], int(pf["metastore_port"]), pf["hive_admin"], tokens,
                                  tls=bool(pf["metastore_tls"]), ca_file=pf["tls_ca_file"]))
    return accounts, projects, secrets


def check_settings(config: dict) -> str | None:
    """What is wrong with the settings no later step checks before a project is provisioned
    (None when nothing): told at start and by check-config, not at the first project."""
    try:
        addresses(config["platform"]["namenode_url"])
        addresses(config["platform"]["metastore_host"])
        policy = TokenPolicy.from_config(config["security"])
        ServiceTokens.check_lifetime(config["platform"]["service_token_lifetime"], policy.max_lifetime)
        server_context(config["platform"], "platform")
        client_context(config["platform"]["tls_ca_file"])
    except (TypeError, ValueError) as exc:
        return str(exc)
    return None


def serve(config: dict, path: str | None) -> int:
    setup_logging(config["log_level"])
    if not schemas_usable(config["database"], [COMPONENTS["platform"]]):
        return 1
    accounts, projects, secrets = build(config)
    pf = config["platform"]
    tls = server_context(pf, "platform")
    app = PlatformApp(accounts, projects, secrets, frozenset(pf["trusted_proxies"]))
    sock = listen(pf["bind"], int(pf["port"]))
    log.info("listening", extra={"bind": pf["bind"], "port": pf["port"], "tls": tls is not None})
    on_hangup(reloader(DEFAULTS, path, "platform", tls))
    ready()
    web.run_app(app.app(), sock=sock, print=None, ssl_context=tls,
                shutdown_timeout=float(pf["stop_grace"]), access_log=None)
    log.info("stopped")
    return 0


def check(config: dict) -> int:
    pf = config["platform"]
    host = "127.0.0.1" if pf["bind"] in ("0.0.0.0", "::") else pf["bind"]
    try:
        response = requests.get(f"{http_scheme(pf)}://{host}:{pf['port']}/health", timeout=10,
                                verify=verify(pf["tls_ca_file"]))
    except requests.RequestException as exc:
        print(f"hopshive-platform: not reachable: {exc}", file=sys.stderr)
        return 1
    print(response.text)
    return 0 if response.status_code == 200 else 1


def admin(config: dict, args: argparse.Namespace) -> int:
    accounts, projects, _ = build(config)
    try:
        if args.area == "user":
            if args.action == "add":
                password = sys.stdin.readline().rstrip("\n") if args.password_stdin else ""
                user = accounts.add_user(args.email, password, args.first, args.last, args.two_factor,
                                         args.admin, "new" if args.inactive else "active")
                print(f"user {user.email} added (username {user.username})")
            elif args.action in ("block", "unblock"):
                accounts.set_status(args.email, "blocked" if args.action == "block" else "active")
                print(f"user {args.email} {args.action}ed")
            elif args.action == "activate":
                accounts.set_status(args.email, "active")
                print(f"user {args.email} activated")
            else:
                for user in accounts.users():
                    print(f"{user.email}\t{user.username}\t{user.status}\t2fa={user.two_factor}\tadmin={user.admin}")
        elif args.action == "create":
            projects.create(args.name, args.owner)
            print(f"project {args.name} created")
        elif args.action == "add-member":
            projects.add_member(args.name, args.email, args.role)
            print(f"{args.email} is a {args.role} of {args.name}")
        elif args.action == "remove-member":
            projects.remove_member(args.name, args.email)
            print(f"{args.email} removed from {args.name}")
        elif args.action == "delete":
            projects.delete(args.name)
            print(f"project {args.name} deleted")
        else:
            project = projects.project(args.name)
            for member in project.members:
                print(f"{member.email}\t{args.name}__{member.username}\t{member.role}")
        return 0
    except PlatformError as exc:
        print(f"hopshive-platform: {exc}", file=sys.stderr)
        return 1
    except DriverError as exc:
        print(f"hopshive-platform: database error: {exc}", file=sys.stderr)
        return 2
    finally:
        accounts.db.close()


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="hopshive-platform", description=__doc__.split("\n\n")[0])
    top.add_argument("--config", help=f"YAML configuration file (default: $HOPSHIVE_CONFIG, else {DEFAULT_CONFIG}"
                                      " when it exists: what the deployment writes)")
    areas = top.add_subparsers(dest="area", required=True)
    areas.add_parser("serve", help="run the HTTP API")
    areas.add_parser("check", help="probe the running API's /health")
    areas.add_parser("check-config", help="print the effective configuration")
    add_login_arguments(areas.add_parser("login", help="get a project member's delegation token (password on "
                                                      "stdin) and write it to a token file"))
    users = areas.add_parser("user", help="accounts").add_subparsers(dest="action", required=True)
    add = users.add_parser("add", help="add an account (password on stdin)")
    add.add_argument("--email", required=True)
    add.add_argument("--password-stdin", action="store_true", required=True,
                     help="read the password from the first line of standard input")
    add.add_argument("--first", default="")
    add.add_argument("--last", default="")
    add.add_argument("--two-factor", action="store_true", help="the account uses two-factor authentication")
    add.add_argument("--admin", action="store_true", help="a platform administrator")
    add.add_argument("--inactive", action="store_true", help="not activated yet")
    for action in ("block", "unblock", "activate"):
        users.add_parser(action).add_argument("email")
    users.add_parser("list")
    projects = areas.add_parser("project", help="projects").add_subparsers(dest="action", required=True)
    create = projects.add_parser("create")
    create.add_argument("name")
    create.add_argument("--owner", required=True, help="the owner's e-mail")
    member = projects.add_parser("add-member")
    member.add_argument("name")
    member.add_argument("email")
    member.add_argument("--role", choices=ROLES, default="Data scientist")
    for action in ("remove-member",):
        sub = projects.add_parser(action)
        sub.add_argument("name")
        sub.add_argument("email")
    projects.add_parser("delete").add_argument("name")
    projects.add_parser("show").add_argument("name")
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.area == "login":     # a client command: no configuration of the service needed
        return login(args, sys.stdin.readline().rstrip("\n"))
    path = args.config or os.environ.get("HOPSHIVE_CONFIG") or (DEFAULT_CONFIG if os.path.exists(DEFAULT_CONFIG) else None)
    config = effective_config("hopshive-platform", DEFAULTS, path)
    if config is None:
        return 2
    problem = check_settings(config)
    if problem is not None:
        print(f"hopshive-platform: {problem}", file=sys.stderr)
        return 2
    if args.area == "check-config":
        print_config(config)
        return 0
    if args.area == "serve":
        return serve(config, path)
    if args.area == "check":
        return check(config)
    return admin(config, args)


if __name__ == "__main__":
    sys.exit(main())
