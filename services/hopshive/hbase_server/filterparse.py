"""HBase's filter-string grammar (its ParseFilter), read with lark into ``filters``.

``Name(arg, ...)`` where an argument is a quoted byte string (``'it''s'``), an integer,
``true``/``false`` or a comparison operator; ``SKIP f`` and ``WHILE f`` bind tightest, then
``AND``, then ``OR`` (upper case, as HBase reads them); parentheses group.  An unknown filter,
a wrong argument list or a syntax error raises ``FilterError`` naming the position; nothing
is ignored.
"""

from __future__ import annotations

from typing import Callable

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import LarkError, VisitError

from .exceptions import FilterError
from .filters import (And, CellFilter, ColumnCountGetFilter, ColumnPrefixFilter, Comparator, Filter, FirstKeyOnlyFilter,
                      InclusiveStopFilter, KeyOnlyFilter, Or, PageFilter, PrefixFilter, RowFilter, SingleColumnValueFilter,
                      Skip, TimestampsFilter, While, cell_family, cell_qualifier, check_op)

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
        check_op(op, comparator, self.name)
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
    "FamilyFilter": lambda a: _compare(a, lambda op, c: CellFilter(op, c, cell_family)),
    "QualifierFilter": lambda a: _compare(a, lambda op, c: CellFilter(op, c, cell_qualifier)),
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
