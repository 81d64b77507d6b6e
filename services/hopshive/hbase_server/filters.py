"""HBase's filter language (``Scan.setFilter(new ParseFilter().parseFilterString(...))``,
the ``filterString`` of Thrift scans): comparators and filters, evaluated row by row
(``filterparse`` reads the strings).  Comparators are ``type:value`` strings (lower-case
type, as HBase):

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

from ..core.javaregex import PatternError, parse as parse_regex, render
from .exceptions import FilterError
from .regexseek import NO_MORE, NotSeekable, Seeker

MAX_REGEX = 1 << 16


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


def check_op(op: str, comparator: Comparator, name: str) -> None:
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


def cell_family(cell: Cell) -> bytes:
    return cell[0].partition(b":")[0]


def cell_qualifier(cell: Cell) -> bytes:
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
        kept = [c for c in cells if cell_qualifier(c).startswith(self.prefixes)]
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
