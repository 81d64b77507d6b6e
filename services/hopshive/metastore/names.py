"""Hive's naming rules: identifiers, partition names (``ds=2024-01-01/h=5``, escaped as
Hive's FileUtils does), and the ``*``/``|`` patterns of get_databases/get_tables."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable, Sequence

from .exceptions import InvalidInput, InvalidObject

DEFAULT_PARTITION_NAME = "__HIVE_DEFAULT_PARTITION__"
_ESCAPED = set(range(0x01, 0x20)) | {ord(c) for c in '"#%\'*/:=?\\\x7f{[]^'}
_NAME = re.compile(r"\w+", re.UNICODE)
_HEX2 = re.compile(r"[0-9A-Fa-f]{2}")


def normalize(name: str | None) -> str:
    """Hive stores database, table and column names in lower case."""
    return (name or "").strip().lower()


def validate_name(name: str | None, what: str) -> str:
    """The normalised name; raises InvalidObject for names Hive's validateName refuses."""
    if not name or not _NAME.fullmatch(name):
        raise InvalidObject(f"{name!r} is not a valid {what} name")
    return normalize(name)


def escape(value: str) -> str:
    """One partition-name component, escaped like Hive's FileUtils.escapePathName."""
    if value is None or value == "":
        return DEFAULT_PARTITION_NAME
    return "".join(f"%{ord(c):02X}" if ord(c) in _ESCAPED else c for c in value)


def unescape(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "%" and i + 2 < len(text) and _HEX2.fullmatch(text[i + 1:i + 3]):
            out.append(chr(int(text[i + 1:i + 3], 16)))
            i += 3
        else:
            out.append(c)
            i += 1
    return "".join(out)


def make_part_name(keys: Sequence[str], values: Sequence[str]) -> str:
    """``k1=v1/k2=v2`` with keys lower-cased and both sides escaped (Warehouse.makePartName)."""
    if len(keys) != len(values):
        raise InvalidObject(f"partition values {list(values)} do not match the partition keys {list(keys)}")
    return "/".join(f"{escape(k.lower())}={escape(v)}" for k, v in zip(keys, values))


def parse_part_name(name: str, keys: Sequence[str] | None = None) -> list[str]:
    """The values of a partition name, in key order; checks the keys when given."""
    if not name:
        raise InvalidInput("empty partition name")
    pairs = []
    for component in name.split("/"):
        if "=" not in component:
            raise InvalidInput(f"invalid partition name {name!r}: {component!r} is not key=value")
        key, value = component.split("=", 1)
        pairs.append((unescape(key), unescape(value)))
    if keys is not None and [k.lower() for k, _ in pairs] != [k.lower() for k in keys]:
        raise InvalidInput(f"invalid partition name {name!r} for partition keys {list(keys)}")
    return [value for _, value in pairs]


@lru_cache(maxsize=512)
def _pattern(pattern: str) -> re.Pattern:
    parts = [p.strip() for p in pattern.split("|")]
    return re.compile("|".join(f"(?:{p.replace('*', '.*')})" for p in parts), re.IGNORECASE)


def matches(pattern: str | None, name: str) -> bool:
    """Hive's metastore patterns: ``*`` is any text, ``|`` separates alternatives, the rest
    is a case-insensitive regular expression matching the whole name."""
    if pattern is None or pattern in ("", "*", ".*"):
        return True
    try:
        return _pattern(pattern).fullmatch(name) is not None
    except re.error:
        return pattern.lower() == name.lower()


def filter_names(pattern: str | None, names: Iterable[str]) -> list[str]:
    return sorted(n for n in names if matches(pattern, n))
