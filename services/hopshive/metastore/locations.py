"""Locations: which URIs belong to our namespace, and Hive's default paths.

Clients send fully qualified URIs (``webhdfs://127.0.0.1:9870/user/hive/warehouse/t``).  A
URI whose (scheme, authority) is configured in ``metastore.namespace_uris`` -- or that has
no scheme at all -- names a path in the HopsHive namespace; the path is taken verbatim, as
Hadoop's ``Path.toString()`` writes it (no percent-decoding: Hive's escaped partition names
such as ``ds=a%3Ab`` are literal directory names).  Anything else (``file:``, ``s3a:``, an
unknown namenode) is foreign: only external tables and their partitions may live there, and
their storage descriptors carry no inode key (fsck cannot link them either).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from .exceptions import InvalidObject


@dataclass(frozen=True)
class Location:
    uri: str                 # as stored and returned to clients
    path: str | None         # the namespace path, None when foreign

    @property
    def ours(self) -> bool:
        return self.path is not None


class Locations:
    def __init__(self, namespace_uris: list[str], warehouse: str):
        self._ours = set()
        for uri in namespace_uris:
            parts = urlsplit(uri)
            self._ours.add((parts.scheme.lower(), parts.netloc.lower()))
        self.warehouse = warehouse.rstrip("/") or warehouse
        if not self.parse(self.warehouse).ours:
            raise ValueError(f"metastore.warehouse {warehouse} is not in metastore.namespace_uris")

    def parse(self, uri: str) -> Location:
        """Raises InvalidObject for an empty or relative location."""
        if not uri:
            raise InvalidObject("empty location")
        if uri.startswith("/"):
            return Location(uri, _clean(uri))
        parts = urlsplit(uri)
        if not parts.scheme:
            raise InvalidObject(f"location {uri!r} is neither absolute nor a URI")
        if (parts.scheme.lower(), parts.netloc.lower()) in self._ours:
            path = uri[len(parts.scheme) + 3 + len(parts.netloc):] if uri[len(parts.scheme):].startswith("://") \
                else uri[len(parts.scheme) + 1:]
            return Location(uri, _clean(path.split("?", 1)[0] or "/"))
        return Location(uri, None)

    def database_default(self, name: str) -> str:
        """``<warehouse>/<name>.db``; the default database is the warehouse itself."""
        return self.warehouse if name == "default" else f"{self.warehouse}/{name}.db"

    @staticmethod
    def child(parent: str, name: str) -> str:
        return parent.rstrip("/") + "/" + name

    def parent(self, uri: str) -> str:
        """The location of the directory that holds ``uri`` (the root holds itself)."""
        location = self.parse(uri)
        if location.path is None or location.path == "/":
            return uri
        return uri[:len(uri.rstrip("/")) - len(location.path.rsplit("/", 1)[1])].rstrip("/") or "/"


def _clean(path: str) -> str:
    if not path.startswith("/"):
        raise InvalidObject(f"location path {path!r} is not absolute")
    cleaned = "/" + "/".join(c for c in path.split("/") if c)
    return cleaned


def replace_prefix(location: str | None, old: str, new: str) -> str | None:
    """``location`` with its ``old`` directory prefix replaced by ``new`` (rename)."""
    if location is None:
        return None
    old_s, new_s = old.rstrip("/"), new.rstrip("/")
    if location == old_s or location == old_s + "/":
        return new_s
    if location.startswith(old_s + "/"):
        return new_s + location[len(old_s):]
    return location
