"""The one place where domain errors become Thrift exceptions in a reply.

A result struct declares the exceptions a method may throw (fields o1, o2, ...).  A domain
error goes into the first declared field whose class is on its preference list; if none
fits, into the method's MetaException field, else into its first exception field.  What
Hive 2 and Hive 3 disagree on is handled here too (``FIELD_FOR_ERRORS``).
"""

from __future__ import annotations

import logging
import uuid

from thrift.Thrift import TApplicationException

from ...exceptions import HopsHiveError, NamespaceError
from ..exceptions import (AlreadyExists, InvalidInput, InvalidObject, InvalidOperation, MetastoreError, NoSuchLock,
                          NoSuchObject, NoSuchTxn, Unsupported)

log = logging.getLogger(__name__)

PREFERENCES: list[tuple[type, tuple[str, ...]]] = [
    (NoSuchObject, ("NoSuchObjectException", "InvalidObjectException", "UnknownDBException", "UnknownTableException")),
    (AlreadyExists, ("AlreadyExistsException", "InvalidObjectException", "InvalidOperationException")),
    (InvalidObject, ("InvalidObjectException", "InvalidOperationException")),
    (InvalidOperation, ("InvalidOperationException", "InvalidObjectException")),
    (InvalidInput, ("InvalidInputException",)),
    (NoSuchLock, ("NoSuchLockException",)),
    (NoSuchTxn, ("NoSuchTxnException",)),
    (Unsupported, ()),
    (MetastoreError, ()),
    (NamespaceError, ()),
]

# get_partition_names: Hive 3 has (1: NoSuchObjectException, 2: MetaException), Hive 2.3 has
# (1: MetaException).  Both are structs with one string field 1, so an error written to
# field 1 reads as a MetaException in Hive 2 and a NoSuchObjectException in Hive 3 -- never
# as "unknown result".
FIELD_FOR_ERRORS = {"get_partition_names": 1}


def _exception_fields(result_cls: type) -> list[tuple[int, str, type]]:
    fields = []
    for spec in result_cls.thrift_spec or ():
        if spec is not None and spec[0] != 0 and spec[1] == 12:
            fields.append((spec[0], spec[2], spec[3][0]))
    return fields


def _message(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def place_error(method: str, result, exc: BaseException) -> Exception:
    """Put ``exc`` into ``result`` and return what was put there; returns a
    TApplicationException to send instead when the method declares no exception field."""
    fields = _exception_fields(type(result))
    if not isinstance(exc, HopsHiveError):
        reference = uuid.uuid4().hex[:12]
        log.error("internal error", exc_info=exc, extra={"method": method, "reference": reference})
        text = f"Internal error in the metastore (reference {reference}): {type(exc).__name__}"
    else:
        text = _message(exc)
    if not fields:
        return TApplicationException(TApplicationException.INTERNAL_ERROR, text)
    forced = FIELD_FOR_ERRORS.get(method)
    chosen = next((f for f in fields if f[0] == forced), None) if forced else None
    if chosen is None:
        wanted: tuple[str, ...] = ()
        for kind, names in PREFERENCES:
            if isinstance(exc, kind):
                wanted = names
                break
        by_class = {cls.__name__: f for f in fields for cls in [f[2]]}
        chosen = next((by_class[n] for n in wanted if n in by_class), None) \
            or by_class.get("MetaException") or fields[0]
    _, attribute, cls = chosen
    placed = cls(message=text)
    setattr(result, attribute, placed)
    return placed
