"""HBase's filter language (``Scan.setFilter(new ParseFilter().parseFilterString(...))``,
the ``filterString`` of Thrift scans), parsed with lark and evaluated row by row.

Grammar (HBase's ParseFilter): ``Name(arg, ...)`` where an argument is a quoted byte string
(``'it''s'``), an integer, ``true``/``false`` or a comparison operator; ``SKIP f`` and
``WHILE f`` bind tightest, then ``AND``, then ``OR``; parentheses group.  Comparators are
``type:value`` strings: ``binary``, ``binaryprefix``, ``regexstring`` (Java-style regex on
the bytes read as ISO-8859-1, ``find`` semantics; ``=``/``!=`` only) and ``substring``
(case-insensitive; ``=``/``!=`` only).

HBase's filters implemented: RowFilter, PrefixFilter, FamilyFilter, QualifierFilter,
ValueFilter, SingleColumnValueFilter, SingleColumnValueExcludeFilter, KeyOnlyFilter,
FirstKeyOnlyFilter, PageFilter, ColumnPrefixFilter, MultipleColumnPrefixFilter,
ColumnCountGetFilter, InclusiveStopFilter, TimestampsFilter.

**Ours** (not in HBase; a real HBase site would deploy it as a custom filter class):
``KeyFieldFilter(index, op, 'comparator')`` compares one field of a row key written by
``hopshive.metastore.stores.hbase.rowkey`` (a key whose last byte is the field count and
whose preceding ``2 * count`` bytes are the fields' start offsets, so field ``index`` is
found from the end without reading the fields before it).  Rows without that trailer do not
match.  The metastore's planner emits it for conditions on later partition columns.

An unknown filter, a wrong argument list or a syntax error raises ``FilterError`` naming
the position; nothing is ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import LarkError, VisitError

from .exceptions import FilterError

GRAMMAR = r"""
?start: or_expr
?or_expr: and_expr
        | or_expr "OR"i and_expr            -> or_
?and_expr: unary
         | and_expr "AND"i unary            -> and_
?unary: "SKIP"i unary                      -> skip
      | "WHILE"i unary                     -> while_
      | "(" or_expr ")"
      | call
call: NAME "(" [arg ("," arg)*] ")"
?arg: STRING -> string
    | INT -> integer
    | BOOL -> boolean
    | OP -> op
BOOL.2: /true|false/i
NAME: /[A-Za-z_][A-Za-z0-9_]*/
STRING: /'(?:[^']|'')*'/s
INT: /-?[0-9]+/
OP: "<=" | ">=" | "!=" | "=" | "<" | ">"
%import common.WS
%ignore WS
"""

_PARSER = Lark(GRAMMAR, parser="lalr", maybe_placeholders=False)

# A row as filters see it: its key and its cells, (column, timestamp, value) in column order.
Cell = tuple[bytes, int, bytes]


@dataclass
class Result:
    keep: bool
    cells: list[Cell]
    stop: bool = False        # no later row can match (WHILE, PageFilter, InclusiveStopFilter)
    seek: bytes | None = None # no row before this key can match (a hint, as HBase's getNextCellHint)


# ------------------------------------------------------------------ comparators
_OPS: dict[str, Callable[[int], bool]] = {
    "<": lambda c: c < 0, "<=": lambda c: c <= 0, "=": lambda c: c == 0,
    "!=": lambda c: c != 0, ">": lambda c: c > 0, ">=": lambda c: c >= 0,
}


def _cmp(a: bytes, b: bytes) -> int:
    return (a > b) - (a < b)


@dataclass(frozen=True)
class Comparator:
    kind: str
    value: bytes

    @staticmethod
    def parse(text: bytes) -> "Comparator":
        kind, sep, value = text.partition(b":")
        kind_name = kind.decode("latin-1").lower()
        if not sep or kind_name not in ("binary", "binaryprefix", "regexstring", "substring"):
            raise FilterError(f"comparator {text[:40]!r}: expected binary:, binaryprefix:, regexstring: or substring:")
        comparator = Comparator(kind_name, value)
        if kind_name == "regexstring":
            try:
                comparator._regex()
            except re.error as exc:
                raise FilterError(f"regexstring {value.decode('latin-1')!r}: {exc}") from None
        return comparator

    def _regex(self):
        return re.compile(self.value.decode("latin-1"), re.DOTALL)

    def matches(self, op: str, data: bytes) -> bool:
        """``data op value``, as HBase's CompareFilter reads it."""
        if self.kind == "binary":
            return _OPS[op](_cmp(data, self.value))
        if self.kind == "binaryprefix":
            return _OPS[op](_cmp(data[:len(self.value)], self.value))
        if self.kind == "regexstring":
            found = self._regex().search(data.decode("latin-1")) is not None
        else:
            found = self.value.lower() in data.lower()
        return found if op == "=" else not found


def _check_op(op: str, comparator: Comparator, name: str) -> None:
    if comparator.kind in ("regexstring", "substring") and op not in ("=", "!="):
        raise FilterError(f"{name}: {comparator.kind} only supports = and != (got {op})")


# --------------------------------------------------------------------- filters
class Filter:
    def apply(self, row: bytes, cells: list[Cell]) -> Result:
        raise NotImplementedError


@dataclass
class RowFilter(Filter):
    op: str
    comparator: Comparator

    def apply(self, row, cells):
        return Result(self.comparator.matches(self.op, row), cells)


@dataclass
class PrefixFilter(Filter):
    prefix: bytes

    def apply(self, row, cells):
        # rows are sorted: once past every row with the prefix, none can follow
        return Result(row.startswith(self.prefix), cells, stop=row[:len(self.prefix)] > self.prefix)


@dataclass
class CellFilter(Filter):
    op: str
    comparator: Comparator
    part: Callable[[Cell], bytes] = field(repr=False, default=None)

    def apply(self, row, cells):
        kept = [c for c in cells if self.comparator.matches(self.op, self.part(c))]
        return Result(bool(kept), kept)


def _family(cell: Cell) -> bytes:
    return cell[0].partition(b":")[0]


def _qualifier(cell: Cell) -> bytes:
    return cell[0].partition(b":")[2]


@dataclass
class SingleColumnValueFilter(Filter):
    family: bytes
    qualifier: bytes
    op: str
    comparator: Comparator
    filter_if_missing: bool = False
    latest_only: bool = True
    exclude: bool = False

    def apply(self, row, cells):
        column = self.family + b":" + self.qualifier
        mine = [c for c in cells if c[0] == column]
        if not mine:
            return Result(not self.filter_if_missing, cells)
        keep = self.comparator.matches(self.op, mine[0][2])
        if self.exclude:
            cells = [c for c in cells if c[0] != column]
        return Result(keep, cells)


class KeyOnlyFilter(Filter):
    def apply(self, row, cells):
        return Result(True, [(c[0], c[1], b"") for c in cells])


class FirstKeyOnlyFilter(Filter):
    def apply(self, row, cells):
        return Result(bool(cells), cells[:1])


@dataclass
class PageFilter(Filter):
    size: int
    seen: int = 0

    def apply(self, row, cells):
        self.seen += 1
        return Result(self.seen <= self.size, cells, stop=self.seen >= self.size)


@dataclass
class ColumnPrefixFilter(Filter):
    prefixes: tuple[bytes, ...]

    def apply(self, row, cells):
        kept = [c for c in cells if _qualifier(c).startswith(self.prefixes)]
        return Result(bool(kept), kept)


@dataclass
class ColumnCountGetFilter(Filter):
    limit: int

    def apply(self, row, cells):
        return Result(True, cells[:self.limit])


@dataclass
class InclusiveStopFilter(Filter):
    stop_row: bytes

    def apply(self, row, cells):
        past = row > self.stop_row
        return Result(not past, cells, stop=row >= self.stop_row)


@dataclass
class TimestampsFilter(Filter):
    stamps: frozenset[int]

    def apply(self, row, cells):
        kept = [c for c in cells if c[1] in self.stamps]
        return Result(bool(kept), kept)


def field_span(row: bytes, index: int) -> tuple[int, int] | None:
    """Where field ``index`` of a row key with an offsets trailer lies: the key ends with the
    fields' start offsets (2 bytes each, big-endian) and one byte holding their count; field
    ``i`` runs from its start to the next field's start (the last one to the trailer)."""
    if not row:
        return None
    count = row[-1]
    body_end = len(row) - 1 - 2 * count
    if index >= count or body_end < 0:
        return None

    def start(i: int) -> int:
        pos = body_end + 2 * i
        return int.from_bytes(row[pos:pos + 2], "big")

    begin = start(index)
    finish = start(index + 1) if index + 1 < count else body_end
    if not 0 <= begin <= finish <= body_end:
        return None
    return begin, finish


def key_field(row: bytes, index: int) -> bytes | None:
    """Field ``index`` of a row key with an offsets trailer (see ``field_span``)."""
    span = field_span(row, index)
    return None if span is None else row[span[0]:span[1]]


def prefix_successor(prefix: bytes) -> bytes:
    """The smallest key after every key starting with ``prefix`` (b"": none)."""
    trimmed = prefix.rstrip(b"\xff")
    return trimmed[:-1] + bytes([trimmed[-1] + 1]) if trimmed else b""


@dataclass
class KeyFieldFilter(Filter):
    index: int
    op: str
    comparator: Comparator

    def apply(self, row, cells):
        span = field_span(row, self.index)
        if span is None:
            return Result(False, cells)
        value = row[span[0]:span[1]]
        if self.comparator.matches(self.op, value):
            return Result(True, cells)
        return Result(False, cells, seek=self._hint(row[:span[0]], value))

    def _hint(self, before: bytes, value: bytes) -> bytes | None:
        """Skip scan: the fields before this one are fixed by ``before``; the next row that can
        match has this field at the bound (below it) or the next value of those before it
        (above it).  Keys are prefix-free fields, so both are exact, and always after ``row``."""
        if self.comparator.kind != "binary":
            return None
        bound = self.comparator.value
        if value < bound and self.op in (">=", "=", ">"):
            return before + bound if self.op != ">" else prefix_successor(before + bound) or None
        if value >= bound and self.op in ("<", "<=", "="):
            return prefix_successor(before) or None
        return None


@dataclass
class And(Filter):
    parts: list[Filter]

    def apply(self, row, cells):
        stop = False
        for part in self.parts:
            result = part.apply(row, cells)
            stop = stop or result.stop
            if not result.keep:
                return Result(False, [], stop, result.seek)
            cells = result.cells
        return Result(True, cells, stop)


@dataclass
class Or(Filter):
    parts: list[Filter]

    def apply(self, row, cells):
        results = [part.apply(row, cells) for part in self.parts]
        kept = [r for r in results if r.keep]
        union = {c[0]: c for r in kept for c in r.cells}
        seeks = [r.seek for r in results]
        seek = min(seeks) if not kept and all(seeks) else None
        return Result(bool(kept), [union[k] for k in sorted(union)], all(r.stop for r in results), seek)


@dataclass
class Skip(Filter):
    inner: Filter

    def apply(self, row, cells):
        for cell in cells:
            result = self.inner.apply(row, [cell])
            if not result.keep or not result.cells:
                return Result(False, [])
        return Result(True, cells)


@dataclass
class While(Filter):
    inner: Filter

    def apply(self, row, cells):
        for cell in cells:
            result = self.inner.apply(row, [cell])
            if not result.keep or not result.cells:
                return Result(False, [], stop=True)
        return Result(True, cells)


# ----------------------------------------------------------------------- parser
def _unquote(token: str) -> bytes:
    return token[1:-1].replace("''", "'").encode("latin-1")


class _Args:
    """The argument list of one filter call, checked as it is consumed."""

    def __init__(self, name: str, args: list):
        self.name, self.args, self.pos = name, args, 0

    def _next(self, kind: str):
        if self.pos >= len(self.args):
            raise FilterError(f"{self.name}: missing argument {self.pos + 1} ({kind})")
        got_kind, value = self.args[self.pos]
        if got_kind != kind:
            raise FilterError(f"{self.name}: argument {self.pos + 1} must be {kind}, got {got_kind} {value!r}")
        self.pos += 1
        return value

    def string(self) -> bytes:
        return self._next("string")

    def integer(self, low: int = 0) -> int:
        value = self._next("integer")
        if value < low:
            raise FilterError(f"{self.name}: argument {self.pos} must be >= {low}")
        return value

    def boolean(self) -> bool:
        return self._next("boolean")

    def op(self) -> str:
        return self._next("operator")

    def comparator(self, op: str) -> Comparator:
        comparator = Comparator.parse(self.string())
        _check_op(op, comparator, self.name)
        return comparator

    def remaining(self) -> int:
        return len(self.args) - self.pos

    def done(self) -> None:
        if self.pos != len(self.args):
            raise FilterError(f"{self.name}: takes {self.pos} arguments, got {len(self.args)}")


def _compare(args: _Args, factory) -> Filter:
    op = args.op()
    return factory(op, args.comparator(op))


def _scvf(args: _Args, exclude: bool) -> Filter:
    family, qualifier, op = args.string(), args.string(), args.op()
    comparator = args.comparator(op)
    filter_if_missing, latest = False, True
    if args.remaining():
        filter_if_missing, latest = args.boolean(), args.boolean()
    return SingleColumnValueFilter(family, qualifier, op, comparator, filter_if_missing, latest, exclude)


def _multiple_prefixes(args: _Args) -> Filter:
    prefixes = []
    while args.remaining():
        prefixes.append(args.string())
    if not prefixes:
        raise FilterError("MultipleColumnPrefixFilter: needs at least one prefix")
    return ColumnPrefixFilter(tuple(prefixes))


def _timestamps(args: _Args) -> Filter:
    stamps = []
    while args.remaining():
        stamps.append(args.integer())
    return TimestampsFilter(frozenset(stamps))


BUILDERS: dict[str, Callable[[_Args], Filter]] = {
    "RowFilter": lambda a: _compare(a, RowFilter),
    "FamilyFilter": lambda a: _compare(a, lambda op, c: CellFilter(op, c, _family)),
    "QualifierFilter": lambda a: _compare(a, lambda op, c: CellFilter(op, c, _qualifier)),
    "ValueFilter": lambda a: _compare(a, lambda op, c: CellFilter(op, c, lambda cell: cell[2])),
    "PrefixFilter": lambda a: PrefixFilter(a.string()),
    "SingleColumnValueFilter": lambda a: _scvf(a, False),
    "SingleColumnValueExcludeFilter": lambda a: _scvf(a, True),
    "KeyOnlyFilter": lambda a: KeyOnlyFilter(),
    "FirstKeyOnlyFilter": lambda a: FirstKeyOnlyFilter(),
    "PageFilter": lambda a: PageFilter(a.integer()),
    "ColumnPrefixFilter": lambda a: ColumnPrefixFilter((a.string(),)),
    "MultipleColumnPrefixFilter": _multiple_prefixes,
    "ColumnCountGetFilter": lambda a: ColumnCountGetFilter(a.integer()),
    "InclusiveStopFilter": lambda a: InclusiveStopFilter(a.string()),
    "TimestampsFilter": _timestamps,
    # ours (see the module docstring)
    "KeyFieldFilter": lambda a: KeyFieldFilter(a.integer(), *_op_and_comparator(a)),
}


def _op_and_comparator(args: _Args) -> tuple[str, Comparator]:
    op = args.op()
    return op, args.comparator(op)


@v_args(inline=True)
class _Build(Transformer):
    def string(self, token: Token):
        return ("string", _unquote(str(token)))

    def integer(self, token: Token):
        return ("integer", int(token))

    def boolean(self, token: Token):
        return ("boolean", str(token).lower() == "true")

    def op(self, token: Token):
        return ("operator", str(token))

    def call(self, name: Token, *args):
        builder = BUILDERS.get(str(name))
        if builder is None:
            raise FilterError(f"unknown filter {str(name)!r} (known: {', '.join(sorted(BUILDERS))})")
        arguments = _Args(str(name), list(args))
        built = builder(arguments)
        arguments.done()
        return built

    def and_(self, left, right):
        return And((left.parts if isinstance(left, And) else [left]) + [right])

    def or_(self, left, right):
        return Or((left.parts if isinstance(left, Or) else [left]) + [right])

    def skip(self, inner):
        return Skip(inner)

    def while_(self, inner):
        return While(inner)


def parse_filter(text: bytes | str) -> Filter:
    """A filter string -> a fresh Filter (stateful filters such as PageFilter count per scan).

    Raises:
        FilterError: syntax error (with line and column), unknown filter or comparator,
            wrong arguments.
    """
    if isinstance(text, bytes):
        text = text.decode("latin-1")
    if not text.strip():
        raise FilterError("empty filter string")
    try:
        tree = _PARSER.parse(text)
        return _Build().transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, FilterError):
            raise exc.orig_exc from None
        raise FilterError(f"bad filter: {exc.orig_exc}") from None
    except LarkError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise FilterError(f"filter string does not parse: {first}") from None
