"""Transactions of the MySQL store, and the translation of driver errors into domain
errors (one place for the whole store)."""

from __future__ import annotations

import logging
from typing import Callable, TypeVar

from ....core.db import Database, DriverError, error_code
from ...exceptions import AlreadyExists, InvalidObject, MetastoreError

log = logging.getLogger(__name__)
T = TypeVar("T")

DUPLICATE, NO_PARENT, ROW_REFERENCED, TOO_LONG, OUT_OF_RANGE, CHECK_FAILED = 1062, 1452, 1451, 1406, 1264, 4025


class StoreBase:
    def __init__(self, db: Database):
        self.db = db

    def _read(self, work: Callable[..., T]) -> T:
        """Read-only work: autocommit statements, no snapshot across them."""
        return self._call(work, readonly=True, duplicate=None)

    def _snapshot(self, work: Callable[..., T]) -> T:
        """Reads that must agree with each other (several statements, one snapshot)."""
        return self._call(work, readonly=False, duplicate=None)

    def _write(self, work: Callable[..., T], duplicate: str | None = None) -> T:
        return self._call(work, readonly=False, duplicate=duplicate)

    def _call(self, work, readonly: bool, duplicate: str | None):
        try:
            return self.db.run(work, readonly=readonly)
        except DriverError as exc:
            raise _translate(exc, duplicate) from exc


def _translate(exc: DriverError, duplicate: str | None) -> MetastoreError:
    code = error_code(exc)
    message = exc.args[1] if len(exc.args) > 1 else str(exc)
    if code == DUPLICATE:
        return AlreadyExists(duplicate or f"object already exists ({message})")
    if code == NO_PARENT:
        return InvalidObject("a directory or object this one refers to was deleted concurrently; retry")
    if code in (TOO_LONG, OUT_OF_RANGE):
        return InvalidObject(f"a value does not fit the metastore schema: {message}")
    log.error("database error", extra={"code": code, "error": message})
    return MetastoreError(f"metastore database error {code}: {message}")
