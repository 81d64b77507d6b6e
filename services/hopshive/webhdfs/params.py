"""Typed WebHDFS query parameters: lenient where Hadoop is (booleans in any case, unknown
parameters ignored), precise errors where a value is wrong."""

from __future__ import annotations

import re
from typing import Mapping

from ..exceptions import InvalidArgument

LONG_MAX = 2 ** 63 - 1
NAME_MAX = 100          # hops.hdfs_users.name, hops.hdfs_groups.name
_INTEGER = re.compile(r"-?[0-9]+")
_OCTAL = re.compile(r"[0-7]{1,4}")


class Params:
    def __init__(self, query: Mapping[str, str]):
        self.query = {k.lower(): v for k, v in query.items()}

    def text(self, name: str, default: str | None = None) -> str | None:
        value = self.query.get(name.lower())
        return default if value in (None, "") else value

    def boolean(self, name: str, default: bool) -> bool:
        value = self.text(name)
        if value is None:
            return default
        if value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise InvalidArgument(f"Invalid value for webhdfs parameter \"{name}\": {value} is not a boolean")

    def integer(self, name: str, default: int | None = None, minimum: int | None = None,
                maximum: int = LONG_MAX) -> int | None:
        """ASCII decimal digits with an optional minus sign, as Java's Long.parseLong takes
        them (Python's int() would also take " 3 ", "1_0" and other scripts' digits)."""
        value = self.text(name)
        if value is None:
            return default
        if not _INTEGER.fullmatch(value):
            raise InvalidArgument(f"Invalid value for webhdfs parameter \"{name}\": {value!r} is not an integer")
        number = int(value)
        if minimum is not None and number < minimum:
            raise InvalidArgument(f"Invalid value for webhdfs parameter \"{name}\": {number} < {minimum}")
        if number > maximum:
            raise InvalidArgument(f"Invalid value for webhdfs parameter \"{name}\": {number} > {maximum}")
        return number

    def permission(self, name: str = "permission") -> int | None:
        value = self.text(name)
        if value is None:
            return None
        if not _OCTAL.fullmatch(value) or int(value, 8) > 0o1777:
            raise InvalidArgument(f"Invalid value for webhdfs parameter \"{name}\": {value!r} is not an octal "
                                  "permission between 0 and 1777")
        return int(value, 8)

    def name(self, name: str) -> str | None:
        """A user or group name: at most NAME_MAX characters (the namespace's limit)."""
        value = self.text(name)
        if value is not None and len(value) > NAME_MAX:
            raise InvalidArgument(f"Invalid value for webhdfs parameter \"{name}\": longer than {NAME_MAX} characters")
        return value
