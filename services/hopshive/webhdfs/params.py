"""Typed WebHDFS query parameters: lenient where Hadoop is (booleans in any case, unknown
parameters ignored), precise errors where a value is wrong."""

from __future__ import annotations

from typing import Mapping

from ..exceptions import InvalidArgument


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

    def integer(self, name: str, default: int | None = None, minimum: int | None = None) -> int | None:
        value = self.text(name)
        if value is None:
            return default
        try:
            number = int(value)
        except ValueError:
            raise InvalidArgument(f"Invalid value for webhdfs parameter \"{name}\": {value!r} is not an integer") \
                from None
        if minimum is not None and number < minimum:
            raise InvalidArgument(f"Invalid value for webhdfs parameter \"{name}\": {number} < {minimum}")
        return number

    def permission(self, name: str = "permission") -> int | None:
        value = self.text(name)
        if value is None:
            return None
        try:
            mode = int(value, 8)
        except ValueError:
            mode = -1
        if not 0 <= mode <= 0o1777:
            raise InvalidArgument(f"Invalid value for webhdfs parameter \"{name}\": {value!r} is not an octal "
                                  "permission between 0 and 1777")
        return mode
