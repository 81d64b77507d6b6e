"""Errors of the HBase server library.  ``wire`` maps them to the IDL's exceptions:
``TableExists`` -> AlreadyExists, ``IllegalArgument`` (and ``FilterError``) ->
IllegalArgument, everything else -> IOError (the only exception most calls declare)."""

from __future__ import annotations


class HBaseError(Exception):
    """Base: the message is what the client sees."""


class TableNotFound(HBaseError):
    def __init__(self, name: bytes):
        super().__init__(f"table {name.decode('utf-8', 'replace')!r} does not exist (TableNotFoundException)")


class TableExists(HBaseError):
    def __init__(self, name: bytes):
        super().__init__(f"table {name.decode('utf-8', 'replace')!r} already exists (TableExistsException)")


class IllegalArgument(HBaseError):
    """A request the server cannot accept (bad column name, unknown family, too long key)."""


class FilterError(IllegalArgument):
    """A filter string that does not parse, or names an unknown filter or comparator."""


class NoSuchScanner(IllegalArgument):
    def __init__(self, scanner_id: int):
        super().__init__(f"no scanner with id {scanner_id} (closed, expired or never opened)")
