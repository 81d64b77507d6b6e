"""Tokens for the command line: where ``hopshive-dfs`` finds one, and how an operator on a
namenode host mints one (``hopshive-dfs token``).

Minting needs the namenode's configuration file (its database account signs the token), so
it is for root on a service host: the way an operator, or the deployment for a service
account, gets a token without any password of a platform account.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from ..core.config import ConfigError, load_config
from ..core.db import Database
from ..security import TOKEN
from ..security.secrets import SecretManager, TokenPolicy
from ..security.token_files import webhdfs_token_of
from ..security.tokens import MalformedToken, Token
from ..webhdfs.server import DEFAULTS as NAMENODE_DEFAULTS
from .client import DfsError

NAMENODE_CONFIG = "/etc/hopshive/namenode.yml"


def _namenode_config(path: str) -> dict:
    try:
        return load_config(NAMENODE_DEFAULTS, path)
    except (ConfigError, OSError) as exc:
        raise DfsError(f"cannot read the namenode's configuration {path}: {exc}") from None


def mint(user: str, renewer: str, config_path: str = NAMENODE_CONFIG, lifetime: float | None = None) -> Token:
    """A new token for ``user``, signed through the namenode's database account (root only);
    ``lifetime`` seconds caps its life (None: the policy's)."""
    if os.geteuid() != 0:
        raise DfsError("minting a token is for root on a namenode host (it uses the namenode's database account)")
    return _mint(_namenode_config(config_path), user, renewer, lifetime)


def _mint(config: dict, user: str, renewer: str, lifetime: float | None = None) -> Token:
    db = Database(config["database"])
    try:
        return SecretManager(db, TokenPolicy.from_config(config["security"])).issue(user, renewer, lifetime=lifetime)
    except ValueError as exc:
        raise DfsError(str(exc)) from None
    finally:
        db.close()


def address_of(namenode_url: str) -> str:
    parts = urlsplit(namenode_url)
    return f"{parts.hostname}:{parts.port or 9870}"


def token_for_shell(user: str, namenode_url: str, environ=os.environ,
                    config_path: str = NAMENODE_CONFIG) -> str | None:
    """The token ``hopshive-dfs`` sends: $HOPSHIVE_TOKEN, else the WebHDFS token for this
    namenode in $HADOOP_TOKEN_FILE_LOCATION, else (root on a namenode host whose namenode
    runs in token mode and is the one asked) a freshly minted one; None means user.name
    (simple mode)."""
    if environ.get("HOPSHIVE_TOKEN"):
        return environ["HOPSHIVE_TOKEN"]
    if environ.get("HADOOP_TOKEN_FILE_LOCATION"):
        try:
            found = webhdfs_token_of(Path(environ["HADOOP_TOKEN_FILE_LOCATION"]).read_bytes(),
                                     address_of(namenode_url))
        except (OSError, MalformedToken) as exc:
            raise DfsError(f"cannot read $HADOOP_TOKEN_FILE_LOCATION: {exc}") from None
        return found.url_string() if found else None
    if os.geteuid() == 0 and os.access(config_path, os.R_OK):
        config = _namenode_config(config_path)
        if config["security"]["mode"] == TOKEN and \
                config["namenode"]["advertised_address"] == address_of(namenode_url):
            return _mint(config, user, user).url_string()
    return None
