"""The cleaner's domain errors."""

from __future__ import annotations

from ..exceptions import HopsHiveError


class CleanerError(HopsHiveError):
    """Base class of the cleaner's errors."""


class Fenced(CleanerError):
    """This instance is no longer (certainly) the leader: it must stop acting at once."""


class PositionLost(CleanerError):
    """The stored binlog position is older than the oldest binlog the server keeps."""
