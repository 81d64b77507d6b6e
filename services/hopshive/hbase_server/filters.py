"""HBase's filter language (``Scan.setFilter(new ParseFilter().parseFilterString(...))``,
the ``filterString`` of Thrift scans), parsed with lark and evaluated row by row.

Grammar (HBase's ParseFilter): ``Name(arg, ...)`` where an argument is a quoted byte string
(``'it''s'``), an integer, ``true``/``false`` or a comparison operator; ``SKIP f`` and
``WHILE f`` bind tightest, then ``AND``, then ``OR`` (upper case, as HBase reads them);
parentheses group.  Comparators are ``type:value`` strings (lower-case type, as HBase):

* ``binary`` and ``binaryprefix``: byte comparison of the row/cell (its first
  ``len(value)`` bytes) with ``value``;
* ``regexstring`` (``=``/``!=`` only): HBase's RegexStringComparator as ParseFilter builds
  it -- the pattern is ``value`` decoded as UTF-8, compiled with ``DOTALL``, and searched
  (``find``) in the row/cell decoded as UTF-8 (the comparator's default charset: invalid
  bytes become U+FFFD, so a regex cannot tell two invalid bytes apart).  Patterns are read
  with ``core.javaregex`` (Java's syntax, not Python's); a construct outside its subset is
  an error, never a different meaning;
* ``substring`` (``=``/``!=`` only): ``value`` decoded as UTF-8 and lower-cased is contained
  in the lower-cased UTF-8 text (Python's ``str.lower``; Java's ``toLowerCase(Locale.ROOT)``
  differs for a handful of special-cased characters).

Filters: RowFilter, PrefixFilter, FamilyFilter, QualifierFilter, ValueFilter,
SingleColumnValueFilter, SingleColumnValueExcludeFilter, KeyOnlyFilter, FirstKeyOnlyFilter,
PageFilter, ColumnPrefixFilter, MultipleColumnPrefixFilter, ColumnCountGetFilter,
InclusiveStopFilter, TimestampsFilter -- every filter ParseFilter knows except
ColumnPaginationFilter, ColumnRangeFilter, DependentColumnFilter and ColumnValueFilter
(refused by name).  Nothing else: FuzzyRowFilter and MultiRowRangeFilter are not in HBase's
filter language either.

Beyond HBase, with the same results: RowFilters tell the scanner where the next possible
match is (``Result.seek``/``stop``): a ``binary`` bound, or the automaton of an anchored
``regexstring`` (``regexseek``).  An HBase region server reads every row of the scan range.

An unknown filter, a wrong argument list or a syntax error raises ``FilterError`` naming
the position; nothing is ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import LarkError, VisitError

from ..core.javaregex import PatternError, parse as parse_regex, render
from .exceptions import FilterError
from .regexseek import NO_MORE, NotSeekable, Seeker

MAX_REGEX = 1 << 16

GRAMMAR = r"""
?start: or_expr
?or_expr: and_expr
        | or_expr "OR" and_expr             -> or_
?and_expr: unary
         | and_expr "AND" unary             -> and_
?unary: "SKIP" unary                       -> skip
      | "WHILE" unary                      -> while_
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


USELESS = 64
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
    regex: re.Pattern | None = field(default=None, compare=False, repr=False)
    tree: tuple | None = field(default=None, compare=False, repr=False)

    @staticmethod
    def parse(text: bytes) -> "Comparator":
        kind, sep, value = text.partition(b":")
        kind_name = kind.decode("latin-1")
        if not sep or kind_name not in ("binary", "binaryprefix", "regexstring", "substring"):
            raise FilterError(f"comparator {text[:40]!r}: expected binary:, binaryprefix:, regexstring: or substring:")
        if kind_name != "regexstring":
            return Comparator(kind_name, value)
        pattern = value.decode("utf-8", "replace")
        try:
            tree = parse_regex(pattern, dotall=True, max_length=MAX_REGEX)
        except PatternError as exc:
            raise FilterError(f"regexstring {pattern[:60]!r}: {exc.reason} (at {exc.offset})") from None
        return Comparator(kind_name, value, re.compile(render(tree, "python")), tree)

    def matches(self, op: str, data: bytes) -> bool:
        """``data op value``, as HBase's CompareFilter reads it."""
        if self.kind == "binary":
            return _OPS[op](_cmp(data, self.value))
        if self.kind == "binaryprefix":
            return _OPS[op](_cmp(data[:len(self.value)], self.value))
        text = data.decode("utf-8", "replace")
        if self.kind == "regexstring":
            found = self.regex.search(text) is not None
        else:
            found = self.value.decode("utf-8", "replace").lower() in text.lower()
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
    reverse: bool = False
    _seeker: Seeker | None = field(default=None, repr=False)
    _misses: int = 0          # hints in a row that skipped nothing: past USELESS, stop asking

    def apply(self, row, cells):
        if self.comparator.matches(self.op, row):
            return Result(True, cells)
        if self.reverse:
            return Result(False, [])
        return self._hint(row)

    def _hint(self, row: bytes) -> Result:
        """Where the next row that can match is (an HBase region server reads on instead)."""
        kind, value, op = self.comparator.kind, self.comparator.value, self.op
        if kind in ("binary", "binaryprefix"):
            head = row if kind == "binary" else row[:len(value)]
            if op in ("<", "<=", "=") and head >= value:       # fails here, and on every later row
                return Result(False, [], stop=True)
            if op in (">", ">=", "=") and head <= value:
                after = value + b"\x00" if kind == "binary" else prefix_successor(value)
                return Result(False, [], seek=value if head < value and op != ">" else after or None,
                              stop=op == ">" and not after)
            return Result(False, [])
        if kind != "regexstring" or op != "=" or self._misses > USELESS:
            return Result(False, [])
        if self._seeker is None:
            try:
                self._seeker = Seeker(self.comparator.tree)
            except NotSeekable:
                self._misses = USELESS + 1
                return Result(False, [])
        target = self._seeker.next_row(row)
        self._misses = self._misses + 1 if target is None else 0
        return Result(False, [], stop=target == NO_MORE, seek=target or None)


@dataclass
class PrefixFilter(Filter):
    prefix: bytes
    reverse: bool = False

    def apply(self, row, cells):
        # rows are sorted: once past every row with the prefix, none can follow
        head = row[:len(self.prefix)]
        return Result(row.startswith(self.prefix), cells, stop=head < self.prefix if self.reverse else
                      head > self.prefix)


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
    reverse: bool = False

    def apply(self, row, cells):
        if self.reverse:
            return Result(row >= self.stop_row, cells, stop=row <= self.stop_row)
        return Result(row <= self.stop_row, cells, stop=row >= self.stop_row)


@dataclass
class TimestampsFilter(Filter):
    stamps: frozenset[int]

    def apply(self, row, cells):
        kept = [c for c in cells if c[1] in self.stamps]
        return Result(bool(kept), kept)


def prefix_successor(prefix: bytes) -> bytes:
    """The smallest key after every key starting with ``prefix`` (b"": none)."""
    trimmed = prefix.rstrip(b"\xff")
    return trimmed[:-1] + bytes([trimmed[-1] + 1]) if trimmed else b""


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
        going = [r for r in results if not r.stop]       # parts a later row can still pass
        seek = min(r.seek for r in going) if not kept and going and all(r.seek for r in going) else None
        return Result(bool(kept), [union[k] for k in sorted(union)], not going, seek)


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
}
NOT_IMPLEMENTED = ("ColumnPaginationFilter", "ColumnRangeFilter", "DependentColumnFilter", "ColumnValueFilter")


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
        if str(name) in NOT_IMPLEMENTED:
            raise FilterError(f"{name} is an HBase filter this server does not implement")
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


def _orient(node: Filter, reverse: bool) -> Filter:
    """Tell the filters whose stop and seek depend on it which way the scan runs."""
    if hasattr(node, "reverse"):
        node.reverse = reverse
    for child in getattr(node, "parts", ()):
        _orient(child, reverse)
    if isinstance(node, (Skip, While)):
        _orient(node.inner, reverse)
    return node


def parse_filter(text: bytes | str, reverse: bool = False) -> Filter:
    """A filter string -> a fresh Filter (stateful filters such as PageFilter count per scan)
    for a scan in key order (``reverse``: backwards).

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
        return _orient(_Build().transform(tree), reverse)
    except VisitError as exc:
        if isinstance(exc.orig_exc, FilterError):
            raise exc.orig_exc from None
        raise FilterError(f"bad filter: {exc.orig_exc}") from None
    except LarkError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise FilterError(f"filter string does not parse: {first}") from None
