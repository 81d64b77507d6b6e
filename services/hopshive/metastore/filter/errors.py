"""The one error type of the filter language, so the metastore maps it in one place."""

from __future__ import annotations


class FilterError(ValueError):
    """A partition filter that cannot be parsed, typed or compiled.

    ``position`` is the 0-based character offset into the filter text (None when the
    problem is not tied to one place, e.g. an unknown key in a value-set lookup) and
    ``reason`` says what is wrong; the metastore sends ``str(error)`` as a MetaException.
    """

    def __init__(self, position: int | None, reason: str):
        self.position = position
        self.reason = reason
        where = f" at position {position}" if position is not None else ""
        super().__init__(f"Error parsing partition filter{where}: {reason}")

    def __reduce__(self):
        return type(self), (self.position, self.reason)
