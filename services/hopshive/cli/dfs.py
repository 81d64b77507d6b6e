"""hopshive-dfs: a file-system shell over WebHDFS, in the spirit of `hdfs dfs`.

Talks to --namenode (default $HOPSHIVE_NAMENODE, else the `namenode` of /etc/hopshive/dfs.yml,
which the deployment writes on namenode hosts, else http://127.0.0.1:9870; an https namenode
is verified with --ca-file, by default the deployment's CA) as --user
(default $HADOOP_USER_NAME or the login name), proven by a delegation token: $HOPSHIVE_TOKEN,
else the one in $HADOOP_TOKEN_FILE_LOCATION, else (root on a namenode host in token mode)
one it mints itself.  Relative paths start at /user/<user>.
Commands may be written as `hdfs dfs` takes them, with a dash (`-ls`, `-put`, `-cat`).
Exit status: 0 when every path succeeded, 1 when any failed, 2 for bad usage.
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys

import yaml

from ..core.tls import DEPLOYED_CA_FILE, default_ca_file
from ..security.token_files import credentials_for, write_private
from . import tokens
from .client import DfsError, WebHdfsClient
from .commands import Shell
from .tokens import NAMENODE_CONFIG

DEFAULT_NAMENODE = "http://127.0.0.1:9870"
CLIENT_CONFIG = "/etc/hopshive/dfs.yml"


def _client_setting(name: str, path: str) -> str | None:
    """One setting of the deployment's client file (None when it has none)."""
    try:
        with open(path, encoding="utf-8") as handle:
            found = (yaml.safe_load(handle) or {}).get(name)
    except (OSError, yaml.YAMLError, AttributeError):
        found = None
    return str(found) if found else None


def default_namenode(environ=os.environ, path: str = CLIENT_CONFIG) -> str:
    """$HOPSHIVE_NAMENODE, else the deployment's client file, else this host's port 9870."""
    if environ.get("HOPSHIVE_NAMENODE"):
        return environ["HOPSHIVE_NAMENODE"]
    return _client_setting("namenode", path) or DEFAULT_NAMENODE


def default_ca(environ=os.environ, path: str = CLIENT_CONFIG) -> str:
    """$HOPSHIVE_CA_FILE, else the client file's ca_file, else the deployment's CA file when
    this host has one, else "" (the system's trust store)."""
    if environ.get("HOPSHIVE_CA_FILE"):
        return environ["HOPSHIVE_CA_FILE"]
    return _client_setting("ca_file", path) or default_ca_file(environ)

# name, summary, flags [(option strings, help)], positionals [(dest, nargs, metavar, help)]
COMMANDS = [
    ("ls", "list directories, or show files", [(("-R",), "list subdirectories recursively"),
                                                (("-d",), "list directories as plain entries")],
     [("paths", "*", "PATH", "paths to list (default: the home directory)")]),
    ("mkdir", "create directories", [(("-p",), "create missing parents; no error if it exists")],
     [("paths", "+", "PATH", "directories to create")]),
    ("put", "copy local files or directories (or - for stdin) to the file system",
     [(("-f",), "overwrite an existing file")],
     [("local", "+", "LOCAL", "local sources"), ("remote", None, "REMOTE", "destination file or directory")]),
    ("get", "copy files or directories to the local disk", [(("-f",), "overwrite an existing local file")],
     [("remote", "+", "REMOTE", "sources"), ("local", None, "LOCAL", "local destination")]),
    ("cat", "print files to stdout", [], [("paths", "+", "PATH", "files to print")]),
    ("mv", "move or rename (into TARGET when it is a directory)", [],
     [("sources", "+", "SOURCE", "what to move"), ("target", None, "TARGET", "new name or directory")]),
    ("rm", "delete files, to the trash unless -skipTrash",
     [(("-r", "-R"), "delete directories and their contents"), (("-f",), "no error for missing paths"),
      (("-skipTrash",), "delete at once instead of moving to the trash")],
     [("paths", "+", "PATH", "paths to delete")]),
    ("chmod", "change permissions", [(("-R",), "apply to everything below directories")],
     [("mode", None, "MODE", "octal (755, 1777) or symbolic (u+x,go-w,+t)"),
      ("paths", "+", "PATH", "paths to change")]),
    ("chown", "change owner and/or group (superuser for owners)",
     [(("-R",), "apply to everything below directories")],
     [("owner", None, "OWNER[:GROUP]", "new owner, owner:group, or :group"), ("paths", "+", "PATH", "paths")]),
    ("du", "show space used", [(("-s",), "one summary line per path"), (("-h",), "human-readable sizes")],
     [("paths", "*", "PATH", "paths (default: the home directory)")]),
    ("stat", "print file facts; FORMAT uses %a %A %b %F %g %n %o %r %u %x %X %y %Y (default %y)", [],
     [("args", "+", "ARG", "an optional FORMAT (containing %%), then PATHs")]),
    ("expunge", "checkpoint the trash and delete old checkpoints", [], []),
    ("fsck", "report missing, under-replicated and corrupt blocks (superuser); exit 1 unless HEALTHY", [],
     [("path", "?", "PATH", "where to start (default /)")]),
    ("setrep", "set the replication factor of files", [],
     [("replication", None, "N", "replicas per block"), ("paths", "+", "PATH", "files")]),
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hopshive-dfs", description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 1)[1], allow_abbrev=False,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--namenode", default=default_namenode(),
                        help=f"WebHDFS base URL (default: $HOPSHIVE_NAMENODE, else {CLIENT_CONFIG}'s namenode: "
                             "%(default)s)")
    parser.add_argument("--user", default=os.environ.get("HADOOP_USER_NAME") or getpass.getuser(),
                        help="user name to act as (default: $HADOOP_USER_NAME or the login name)")
    parser.add_argument("--ca-file", default=default_ca(),
                        help=f"the CA an https namenode is verified with (default: $HOPSHIVE_CA_FILE, else {CLIENT_CONFIG}'s"
                             f" ca_file, else {DEPLOYED_CA_FILE} when it exists, else the system's trust store)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, summary, flags, positionals in COMMANDS:
        # -h means "human readable" for du, as in hdfs dfs: help is --help everywhere.
        command = commands.add_parser(name, help=summary.replace("%", "%%"), description=summary, add_help=False,
                                      allow_abbrev=False)
        command.add_argument("--help", action="help", help="show this help and exit")
        for options, text in flags:
            command.add_argument(*options, dest=options[0].lstrip("-"), action="store_true", help=text)
        for dest, nargs, metavar, text in positionals:
            command.add_argument(dest, nargs=nargs, metavar=metavar, help=text)
    token = commands.add_parser("token", help="mint a delegation token for --user (root on a namenode host)",
                                description="Mint a delegation token for --user through the namenode's "
                                            "database account and print its urlString (root only).")
    token.add_argument("--renewer", help="who may renew it (default: --user)")
    token.add_argument("--lifetime", type=float, metavar="SECONDS",
                       help="expire after this many seconds, never renewed beyond (default: the namenode's "
                            "renew interval, renewable up to its maximum lifetime)")
    token.add_argument("--file", help="also write a Hadoop credentials file (HADOOP_TOKEN_FILE_LOCATION) with "
                                      "the token for --namenode and the metastores")
    token.add_argument("--config", default=NAMENODE_CONFIG, help="the namenode's configuration (default %(default)s)")
    return parser


_GLOBAL_WITH_VALUE = ("--namenode", "--user", "--ca-file")


def undash(argv: list[str]) -> list[str]:
    """`hdfs dfs -ls /x` by habit: the command word may carry a leading dash."""
    names = {name for name, *_ in COMMANDS}
    argv = list(argv)
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg in _GLOBAL_WITH_VALUE:
            index += 2
            continue
        if arg.startswith("--"):
            index += 1
            continue
        if arg.startswith("-") and arg[1:] in names:
            argv[index] = arg[1:]
        break
    return argv


def mint_token(args: argparse.Namespace) -> int:
    if args.lifetime is not None and args.lifetime <= 0:
        raise DfsError("--lifetime must be a positive number of seconds")
    token = tokens.mint(args.user, args.renewer or args.user, args.config, args.lifetime)
    if args.file:
        write_private(args.file, credentials_for(token, [tokens.address_of(args.namenode)]))
    print(token.url_string())
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(undash(sys.argv[1:] if argv is None else argv))
    try:
        if args.command == "token":
            return mint_token(args)
        shell = Shell(WebHdfsClient(args.namenode, args.user, tokens.token_for_shell(args.user, args.namenode),
                                    args.ca_file))
    except DfsError as exc:
        print(f"hopshive-dfs: {exc}", file=sys.stderr)
        return 1
    try:
        getattr(shell, args.command)(args)
    except BrokenPipeError:  # `hopshive-dfs cat f | head`
        sys.stderr.close()
        return 1 if shell.failures else 0
    except KeyboardInterrupt:
        return 130
    return 1 if shell.failures else 0


if __name__ == "__main__":
    sys.exit(main())
