"""``hopshive-platform login``: a project member's token, the way a user gets one.

Logs in to the platform API with e-mail and password (read from standard input), asks for
a token for one project, prints its urlString (for HdfsCLI's TokenClient, fsspec's
``token=``, ``$HOPSHIVE_TOKEN``) and writes a Hadoop credentials file (default
``~/.hopshive/token``, mode 0600), where the spark role's login shells point
``HADOOP_TOKEN_FILE_LOCATION``.  The token is filed for the namenodes the host's Spark client
configuration names (``$SPARK_CONF_DIR``, else /etc/hopshive/spark), unless given.
"""

from __future__ import annotations

import argparse
import os
import sys

import requests

from ..core.tls import DEPLOYED_CA_FILE, VerifyingSession, default_ca_file
from ..security.token_files import credentials_for, namenodes_of_client_conf, write_private
from ..security.tokens import Token
from .app import API

SPARK_CONF_DIR = "/etc/hopshive/spark"     # roles/spark's client configuration

DEFAULT_FILE = "~/.hopshive/token"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", default=os.environ.get("HOPSHIVE_PLATFORM_URL", "http://127.0.0.1:8181"),
                        help="the platform API (default: $HOPSHIVE_PLATFORM_URL or %(default)s)")
    parser.add_argument("--email", required=True)
    parser.add_argument("--password-stdin", action="store_true", required=True,
                        help="read the password from the first line of standard input")
    parser.add_argument("--project", required=True, help="the project to act in")
    parser.add_argument("--namenode", action="append", default=None, metavar="HOST:PORT",
                        help="a namenode address to file the token under (repeat for each; default: the Spark "
                             "client configuration's namenodes, else 127.0.0.1:9870)")
    parser.add_argument("--file", default=DEFAULT_FILE, help="credentials file to write (default %(default)s)")
    parser.add_argument("--ca-file", default=default_ca_file(os.environ),
                        help="the CA an https --url is verified with (default: $HOPSHIVE_CA_FILE, else "
                             f"{DEPLOYED_CA_FILE} when it exists, else the system's trust store)")


def login(args: argparse.Namespace, password: str) -> int:
    http = VerifyingSession(args.ca_file)
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
    namenodes, nameservices = namenodes_of_client_conf(os.environ.get("SPARK_CONF_DIR") or SPARK_CONF_DIR)
    path = write_private(args.file, credentials_for(token, args.namenode or namenodes or ["127.0.0.1:9870"],
                                                    nameservices))
    print(body["urlString"])
    print(f"hopshive-platform: acting as {body['user']} until {body['expiresAt']} (ms); token file {path}",
          file=sys.stderr)
    return 0
