"""What a partition value means for its key's Hive type: one rule for SQL and for memory.

A partition value is stored as a string.  Integer-family, decimal and floating keys compare
as numbers and date keys as dates; every other type (string, varchar, char, timestamp,
boolean, ...) compares as the stored string.  A value that does not parse as its key's type
(``__HIVE_DEFAULT_PARTITION__``, ``abc`` in an int key, ``300`` in a tinyint key) has no
typed value: SQL sees NULL and every typed test on it is unknown, so it never matches.

The MariaDB store keeps typed shadow columns filled by ``typed_shadow_values`` (numbers as
``NUMBER_SQL_TYPE``); without them, ``number_sql``/``date_sql`` rebuild the same values with
CAST guarded by the same regular expressions, which admit only values CAST converts
exactly and without warnings (slower: no index can serve the comparison).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from functools import lru_cache

STRING, NUMBER, DATE = "string", "number", "date"
NUMBER_SQL_TYPE = "DECIMAL(65,30)"

# Syntax shared by Python ``re.fullmatch`` and PCRE2 (anchored with \A(?:...)\z in SQL).
INTEGRAL_RE = r"[+-]?[0-9]+"
DECIMAL_RE = r"[+-]?(?=\.?[0-9])0*[0-9]{0,35}(?:\.[0-9]{0,30}0*)?"  # exact in DECIMAL(65,30)
# A valid proleptic Gregorian yyyy-mm-dd, leap days included: MariaDB's CAST must never see
# an invalid date (it warns, and in some comparisons yields a date instead of NULL).
DATE_RE = (r"(?!0000)(?:[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
           r"|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))"
           r"|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)")

_INTEGRAL_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "integer": 32, "bigint": 64}
_DECIMAL_TYPES = {"decimal", "numeric", "float", "double", "double precision", "real"}


@dataclass(frozen=True)
class KeyType:
    hive_type: str
    domain: str                       # STRING, NUMBER or DATE
    bounds: tuple[int, int] | None    # integer-family range, else None

    @property
    def regex(self) -> str | None:
        if self.domain == DATE:
            return DATE_RE
        if self.domain == NUMBER:
            return INTEGRAL_RE if self.bounds else DECIMAL_RE
        return None


@lru_cache(maxsize=256)
def key_type(hive_type: str) -> KeyType:
    base = re.sub(r"\s+", " ", hive_type.strip().lower().split("(")[0]).strip()
    if base in _INTEGRAL_BITS:
        half = 1 << (_INTEGRAL_BITS[base] - 1)
        return KeyType(hive_type, NUMBER, (-half, half - 1))
    if base in _DECIMAL_TYPES:
        return KeyType(hive_type, NUMBER, None)
    return KeyType(hive_type, DATE if base == "date" else STRING, None)


def parse_number(kind: KeyType, text: str) -> Decimal | None:
    """The numeric value of ``text`` for a numeric key, or None if it is not one."""
    if not re.fullmatch(kind.regex, text):
        return None
    value = Decimal(text)
    if kind.bounds and not kind.bounds[0] <= value <= kind.bounds[1]:
        return None
    return value


def parse_decimal(text: str) -> Decimal | None:
    """A numeric literal written as a string (``h = "5"``): plain decimal notation."""
    return Decimal(text) if re.fullmatch(DECIMAL_RE, text) else None


def parse_date(text: str) -> date | None:
    if not re.fullmatch(DATE_RE, text):
        return None
    return date(int(text[:4]), int(text[5:7]), int(text[8:10]))


def typed_shadow_values(hive_type: str, value: str) -> tuple[Decimal | None, date | None]:
    """(number, date) to store beside a partition value; None where it does not parse.

    The MariaDB store fills its NUM (``NUMBER_SQL_TYPE``) and DATE shadow columns with
    these, so that SQL and the in-memory evaluator agree on every value.
    """
    kind = key_type(hive_type)
    number = parse_number(kind, value) if kind.domain == NUMBER else None
    day = parse_date(value) if kind.domain == DATE else None
    return number, day


def fallback_sql(kind: KeyType, string_sql: str) -> tuple[str, tuple]:
    """SQL rebuilding the typed value from the stored string, for stores without shadow columns."""
    pcre = r"\A(?:" + kind.regex + r")\z"
    if kind.domain == DATE:
        return f"(CASE WHEN {string_sql} REGEXP %s THEN CAST({string_sql} AS DATE) END)", (pcre,)
    if kind.bounds:
        number = f"CAST({string_sql} AS DECIMAL(65,0))"
        return (f"(CASE WHEN {string_sql} REGEXP %s AND {number} BETWEEN %s AND %s THEN {number} END)",
                (pcre, *kind.bounds))
    return f"(CASE WHEN {string_sql} REGEXP %s THEN CAST({string_sql} AS {NUMBER_SQL_TYPE}) END)", (pcre,)
