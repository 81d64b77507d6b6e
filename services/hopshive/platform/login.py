"""``hopshive-platform login``: a project member's token, the way a user gets one.

Logs in to the platform API with e-mail and password (read from standard input), asks for
a token for one project, prints its urlString (for HdfsCLI's TokenClient, fsspec's
``token=``, ``$HOPSHIVE_TOKEN``) and writes a Hadoop credentials file (default
``~/.hopshive/token``, mode 0600) for ``HADOOP_TOKEN_FILE_LOCATION`` to point at (the spark
role's login shells do not export it yet: set it by hand).
"""

from __future__ import annotations

import argparse
import os
import sys

import requests

from ..security.token_files import credentials_for, write_private
from ..security.tokens import Token
from .app import API

DEFAULT_FILE = "~/.hopshive/token"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", default=os.environ.get("HOPSHIVE_PLATFORM_URL", "http://127.0.0.1:8181"),
                        help="the platform API (default: $HOPSHIVE_PLATFORM_URL or %(default)s)")
    parser.add_argument("--email", required=True)
    parser.add_argument("--password-stdin", action="store_true", required=True,
                        help="read the password from the first line of standard input")
    parser.add_argument("--project", required=True, help="the project to act in")
    parser.add_argument("--namenode", action="append", default=None, metavar="HOST:PORT",
                        help="a namenode address to file the token under (repeat for each; default 127.0.0.1:9870)")
    parser.add_argument("--file", default=DEFAULT_FILE, help="credentials file to write (default %(default)s)")


def login(args: argparse.Namespace, password: str) -> int:
    http = requests.Session()
    try:
        answer = http.post(f"{args.url}{API}/auth/login", data={"email": args.email, "password": password},
                           timeout=30)
        if answer.status_code == 200:
            answer = http.post(f"{args.url}{API}/project/{args.project}/token", timeout=30)
    except requests.RequestException as exc:
        print(f"hopshive-platform: cannot reach the platform API at {args.url}: {exc}", file=sys.stderr)
        return 1
    if answer.status_code != 200:
        try:
            message = answer.json()["errorMsg"]
        except (ValueError, KeyError, TypeError):
            message = f"HTTP {answer.status_code}"
        print(f"hopshive-platform: {message}", file=sys.stderr)
        return 1
    body = answer.json()
    token = Token.from_url_string(body["urlString"])
    path = write_private(args.file, credentials_for(token, args.namenode or ["127.0.0.1:9870"]))
    print(body["urlString"])
    print(f"hopshive-platform: acting as {body['user']} until {body['expiresAt']} (ms); token file {path}",
          file=sys.stderr)
    return 0
