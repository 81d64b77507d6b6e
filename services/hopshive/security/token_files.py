"""Token files as clients keep them: one token filed under every label a Hadoop client looks
it up by, written readable by its owner only."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from urllib.parse import urlsplit

from .tokens import HIVE_KIND, HIVE_SIGNATURE, SWEBHDFS_KIND, WEBHDFS_KIND, Token, credentials_file, read_credentials_file


def credentials_for(token: Token, namenodes: list[str], nameservices: list[str] = ()) -> bytes:
    """A Hadoop credentials file: the token as a WebHDFS token for each namenode address
    (host:port, as Hadoop's client looks it up), for each logical nameservice of several
    namenodes (``ha-webhdfs:<name>``, what it looks up for ``webhdfs://<name>/``), the same
    again as SWEBHDFS tokens (what it looks up for ``swebhdfs://``: kind ``SWEBHDFS
    delegation``, ``ha-swebhdfs:<name>``; filed under an ``swebhdfs:`` alias, as a
    credentials file keys tokens by alias) and as the metastores' Hive token."""
    tokens = {}
    for scheme, kind, prefix in (("webhdfs", WEBHDFS_KIND, ""), ("swebhdfs", SWEBHDFS_KIND, "swebhdfs:")):
        for service in list(namenodes) + [f"ha-{scheme}:{name}" for name in nameservices]:
            tokens[prefix + service] = token.labelled(kind, service)
    tokens[HIVE_SIGNATURE] = token.labelled(HIVE_KIND, HIVE_SIGNATURE)
    return credentials_file(tokens)


def webhdfs_token_of(raw: bytes, address: str) -> Token | None:
    """The WebHDFS token a credentials file keeps for the namenode at ``address``
    (host:port), else any WebHDFS token in it (one secret serves every namenode), else None.
    Raises MalformedToken for bytes that are not a credentials file."""
    tokens = [t for t in read_credentials_file(raw).values() if t.kind == WEBHDFS_KIND]
    return next((t for t in tokens if t.service in (address, "")), tokens[0] if tokens else None)


def namenodes_of_client_conf(conf_dir: str | Path) -> tuple[list[str], list[str]]:
    """(namenode host:port addresses, nameservices) a Hadoop client configured by
    ``conf_dir``/core-site.xml reaches: its webhdfs:// default file system, or every
    namenode of its nameservices.  ([], []) when there is no such file."""
    try:
        root = ElementTree.parse(Path(conf_dir) / "core-site.xml").getroot()
    except (OSError, ElementTree.ParseError):
        return [], []
    conf = {p.findtext("name"): p.findtext("value") or "" for p in root.iter("property")}
    nameservices = [n.strip() for n in conf.get("dfs.nameservices", "").split(",") if n.strip()]
    namenodes = [value for name, value in conf.items()    # https-address: swebhdfs://'s keys
                 if any(name.startswith(f"dfs.namenode.{key}.{ns}.")
                        for ns in nameservices for key in ("http-address", "https-address"))]
    default = urlsplit(conf.get("fs.defaultFS", ""))
    if default.scheme in ("webhdfs", "swebhdfs") and default.port:
        namenodes.append(default.netloc)
    return namenodes, nameservices


def write_private(path: str | Path, content: bytes) -> Path:
    """Write ``content`` to ``path`` (mode 0600; a missing parent is made 0700)."""
    target = Path(os.path.expanduser(str(path)))
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(content)
    os.chmod(target, 0o600)
    return target
