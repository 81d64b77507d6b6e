"""Typing: resolve key names and turn literals into the values their key compares with.

The result is a tree of ``ast.And``/``Or``/``Not`` over ``Test`` leaves, each a test of
one key in one domain with constants already converted (Decimal, date or str).  SQL
generation and the in-memory evaluator both read this tree, so the typing rules live
only here and in ``keytypes``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Sequence, Union

from . import ast
from .errors import FilterError
from .keytypes import DATE, NUMBER, STRING, KeyType, key_type, parse_date, parse_decimal
from .likeregex import PatternError, compile_like


@dataclass(frozen=True)
class Test:
    """One key tested in one domain: ``op`` is = <> < <= > >= in, not in, between,
    not between or like (``values`` then holds one LikePattern)."""
    key: int                        # index into the table's partition keys
    domain: str                     # which form of the value is compared: STRING, NUMBER, DATE
    op: str
    values: tuple
    guard: str | None = None        # typed domain the value must parse in (LIKE on typed keys)
    members: frozenset = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "members", frozenset(self.values) if self.op in ("in", "not in") else frozenset())


Bound = Union[Test, ast.And, ast.Or, ast.Not]


def bind(node: ast.Node, keys: Sequence[tuple[str, str]]) -> Bound:
    """Type ``node`` against the table's partition keys, given as (name, hive_type) in order."""
    return _Binder(keys).bind(node)


class _Binder:
    def __init__(self, keys: Sequence[tuple[str, str]]):
        self.index = {name.lower(): i for i, (name, _) in enumerate(keys)}
        self.types = [key_type(hive_type) for _, hive_type in keys]
        self.names = [name.lower() for name, _ in keys]

    def key(self, name: str, position: int | None) -> tuple[int, KeyType]:
        if name not in self.index:
            known = ", ".join(self.names) or "none"
            raise FilterError(position, f"{name!r} is not a partition key of this table (partition keys: {known})")
        index = self.index[name]
        return index, self.types[index]

    def bind(self, node: ast.Node) -> Bound:
        if isinstance(node, (ast.And, ast.Or)):
            return type(node)(tuple(self.bind(child) for child in node.operands), node.pos)
        if isinstance(node, ast.Not):
            return ast.Not(self.bind(node.operand), node.pos)
        if isinstance(node, ast.Compare):
            index, kind = self.key(node.key, node.pos)
            if node.op == "like":
                return Test(index, STRING, "like", (_pattern(node.value),),
                            None if kind.domain == STRING else kind.domain)
            return Test(index, kind.domain, node.op, (self.coerce(node.key, kind, node.value),))
        if isinstance(node, ast.Between):
            index, kind = self.key(node.key, node.pos)
            bounds = (self.coerce(node.key, kind, node.low), self.coerce(node.key, kind, node.high))
            return Test(index, kind.domain, "not between" if node.negated else "between", bounds)
        if isinstance(node, ast.In):
            index, kind = self.key(node.key, node.pos)
            values = dict.fromkeys(self.coerce(node.key, kind, value) for value in node.values)
            return Test(index, kind.domain, "not in" if node.negated else "in", tuple(values))
        return self.struct_in(node)

    def struct_in(self, node: ast.StructIn) -> Bound:
        keys = [self.key(name, node.pos) for name in node.keys]
        rows = tuple(ast.And(tuple(Test(index, kind.domain, "=", (self.coerce(name, kind, value),))
                                   for name, (index, kind), value in zip(node.keys, keys, row)))
                     for row in node.rows)
        tree = ast.Or(rows, node.pos)
        return ast.Not(tree, node.pos) if node.negated else tree

    @staticmethod
    def coerce(name: str, kind: KeyType, literal: ast.Literal):
        """The constant ``literal`` stands for when compared with key ``name``."""
        if kind.domain == STRING:
            return _text(literal)
        if kind.domain == NUMBER and isinstance(literal, ast.Int):
            return Decimal(literal.value)
        if kind.domain == DATE and isinstance(literal, ast.Date):
            return literal.value
        if isinstance(literal, ast.Str):
            value = parse_decimal(literal.value) if kind.domain == NUMBER else parse_date(literal.value)
            if value is not None:
                return value
            wanted = "a number" if kind.domain == NUMBER else "a date (yyyy-mm-dd)"
            raise FilterError(literal.pos, f"cannot compare {kind.hive_type} key {name!r} with "
                                           f"{ast.render_literal(literal)}: not {wanted}")
        what = {ast.Int: "an integer", ast.Date: "a date", ast.Timestamp: "a timestamp"}[type(literal)]
        raise FilterError(literal.pos, f"cannot compare {kind.hive_type} key {name!r} with {what}")


def _text(literal: ast.Literal) -> str:
    """A literal as a string key compares with it: dates and timestamps in ISO form."""
    if isinstance(literal, ast.Timestamp):
        return literal.value.isoformat(sep=" ")
    return literal.value.isoformat() if isinstance(literal, ast.Date) else str(literal.value)


def _pattern(literal: ast.Literal):
    text = _text(literal)
    try:
        return compile_like(text)
    except PatternError as exc:
        position = literal.pos
        if position is not None and isinstance(literal, ast.Str):
            position += 1 + exc.offset  # the literal's text is the pattern, character for character
        raise FilterError(position, f"invalid LIKE pattern {_short(text)!r}: {exc.reason}") from None


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."
