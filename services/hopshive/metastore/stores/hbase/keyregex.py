"""Conditions on one partition value as HBase filters: ``RowFilter(=, 'regexstring:^...')``.

HBase's filter language (its ParseFilter: what the Thrift1 ``filterString`` accepts) has no
filter that reads a field in the middle of a row key: FuzzyRowFilter and MultiRowRangeFilter
are not in it, and the ``binary`` comparators compare from the first byte.  A
``regexstring`` comparator can: the regex is anchored at the key's start, spells the table
prefix, walks each earlier field by the grammar of its key type (``rowkey``'s encodings,
all of them prefix-free), and then tests the field itself:

* ``= v``: the bytes of ``field(v)``;
* ``> v`` / ``>= v``: the field shares ``field(v)[:k]`` and then has a larger code point
  (for some k), or (``>=``) equals it -- the first difference decides, because the
  encodings are prefix-free and keys are valid UTF-8 whose code-point order is byte order;
  ``<``/``<=`` mirror it.  The tag byte is never varied, so untyped values
  (``__HIVE_DEFAULT_PARTITION__`` in an int key) never match a typed comparison;
* ``like p`` on a string key: the LIKE pattern's own tree with every class stripped of
  NUL (written ``\\x00\\x01`` in a key), between the tag and the end bytes ``\\x00\\x00``.

Patterns are built as ``core.javaregex`` trees and written in Java's syntax, ASCII only, so
HBase's UTF-8 decode of the filter string changes nothing.  Range literals longer than
``MAX_RANGE_LITERAL`` code points (the regex nests once per code point) and LIKE patterns
with anchors inside are left to the metastore (``None``).
"""

from __future__ import annotations

from typing import Sequence

from ....core.javaregex import (BOL, EMPTY, MAX_CODE_POINT, alt, literal, merge, one_of, render, repeat,
                                seq)
from ...filter.keytypes import DATE, NUMBER, KeyType

MAX_RANGE_LITERAL = 64
NOTHING = ("set", ())
_NUL_ESCAPED = literal((0, 1))
_END = literal((0, 0))
_ANY_BUT_NUL = one_of([(1, MAX_CODE_POINT)])
_SEVEN_BIT = one_of([(0, 0x7F)])
_STRING_BODY = seq(repeat(alt(_ANY_BUT_NUL, _NUL_ESCAPED), 0, None), _END)
_UNTYPED = seq(literal((0,)), _STRING_BODY)
_FIELDS = {
    NUMBER: alt(seq(literal((1,)), alt(literal((1,)),
                                       seq(literal((2,)), repeat(_SEVEN_BIT, 2, 2),
                                           repeat(one_of([(1, 10)]), 0, None), literal((0,))),
                                       seq(literal((0,)), repeat(_SEVEN_BIT, 2, 2),
                                           repeat(one_of([(0x75, 0x7E)]), 0, None), literal((0x7F,))))),
                _UNTYPED),
    DATE: alt(seq(literal((1,)), repeat(_SEVEN_BIT, 4, 4)), _UNTYPED),
}


def field_pattern(kind: KeyType):
    """Any field of a key of this type."""
    return _FIELDS.get(kind.domain) or seq(literal((1,)), _STRING_BODY)


def compare(op: str, field: bytes):
    """Fields ``op`` the field ``field`` (op: = < <= > >=); None if too long to write."""
    cps = [ord(c) for c in field.decode("utf-8")]
    if op == "=":
        return literal(cps)
    if len(cps) > MAX_RANGE_LITERAL:
        return None
    greater, inclusive = op in (">", ">="), op in (">=", "<=")

    def beyond(k: int):
        """Fields equal to ``cps[:k]`` so far that end on the asked side of ``cps``."""
        code = cps[k]
        step = [(code + 1, MAX_CODE_POINT)] if greater and code < MAX_CODE_POINT else \
            [(0, code - 1)] if not greater and code > 0 else []
        branches = [one_of(step)] if step else []
        rest = beyond(k + 1) if k + 1 < len(cps) else (EMPTY if inclusive else None)
        if rest is not None:
            branches.append(seq(literal((code,)), rest))
        return alt(*branches) if branches else None

    # the tag byte (cps[0]) is matched exactly: typed never compares with untyped
    rest = beyond(1) if len(cps) > 1 else (EMPTY if inclusive else None)
    return seq(literal(cps[:1]), rest) if rest is not None else NOTHING


class _Anchored(Exception):
    pass


def like(tree):
    """String fields whose value matches the LIKE tree (``likeregex``) as a whole; None if
    the pattern holds ``^``/``$`` other than at its ends (then the metastore runs it)."""
    items = list(tree[1]) if tree[0] == "seq" else [tree]
    if items and items[0] == ("bol",):
        items = items[1:]
    if items and items[-1] == ("eol",):   # whole-value match: a final $ adds nothing
        items = items[:-1]
    try:
        body = _without_nul(("seq", tuple(items)))
    except _Anchored:
        return None
    return seq(literal((1,)), body, _END)


def _without_nul(node):
    kind = node[0]
    if kind == "set":
        ranges = node[1]
        if not any(lo == 0 for lo, _ in ranges):
            return node
        rest = merge(r for r in ((max(lo, 1), hi) for lo, hi in ranges) if r[0] <= r[1])
        return alt(one_of(rest), _NUL_ESCAPED) if rest else _NUL_ESCAPED
    if kind in ("seq", "alt"):
        return (kind, tuple(_without_nul(item) for item in node[1]))
    if kind == "group":
        return ("group", _without_nul(node[1]))
    if kind == "rep":
        return ("rep", _without_nul(node[1])) + node[2:]
    raise _Anchored()


def row_filter(prefix: bytes, kinds: Sequence[KeyType], index: int, condition, negate: bool = False) -> bytes:
    """The HBase filter: rows of the table ``prefix`` whose field ``index`` meets ``condition``."""
    tree = seq(BOL, literal(ord(c) for c in prefix.decode("utf-8")),
               *(field_pattern(kind) for kind in kinds[:index]), condition)
    return b"RowFilter(%s, 'regexstring:%s')" % (b"!=" if negate else b"=", render(tree, "java").encode("ascii"))



