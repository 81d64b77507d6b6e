"""The parsed filter: small frozen nodes, and ``render`` to write one back as filter text.

Nodes keep the character offset they came from (``pos``) for error messages; positions do
not take part in equality, so ``parse(render(node)) == node``.  Comparisons are normalised
with the key on the left (``5 < h`` becomes ``h > 5``) and ``!=`` becomes ``<>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Union

from .errors import FilterError


def _pos():
    return field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Str:
    value: str          # the text between the quotes, backslashes kept (as Hive's TrimQuotes)
    pos: int | None = _pos()


@dataclass(frozen=True)
class Int:
    value: int
    pos: int | None = _pos()


@dataclass(frozen=True)
class Date:
    value: date
    pos: int | None = _pos()


@dataclass(frozen=True)
class Timestamp:
    value: datetime
    pos: int | None = _pos()


Literal = Union[Str, Int, Date, Timestamp]


@dataclass(frozen=True)
class Compare:
    key: str            # lowercased partition key name
    op: str             # = <> < <= > >= like
    value: Literal
    pos: int | None = _pos()


@dataclass(frozen=True)
class Between:
    key: str
    low: Literal
    high: Literal
    negated: bool = False
    pos: int | None = _pos()


@dataclass(frozen=True)
class In:
    key: str
    values: tuple[Literal, ...]
    negated: bool = False
    pos: int | None = _pos()


@dataclass(frozen=True)
class StructIn:
    """Hive 3's ``(struct(a, b)) in (const struct(1, "x"), ...)``."""
    keys: tuple[str, ...]
    rows: tuple[tuple[Literal, ...], ...]
    negated: bool = False
    pos: int | None = _pos()


@dataclass(frozen=True)
class Not:
    operand: "Node"
    pos: int | None = _pos()


@dataclass(frozen=True)
class And:
    operands: tuple["Node", ...]
    pos: int | None = _pos()


@dataclass(frozen=True)
class Or:
    operands: tuple["Node", ...]
    pos: int | None = _pos()


Node = Union[Compare, Between, In, StructIn, Not, And, Or]


def render_literal(literal: Literal) -> str:
    """Filter text for a literal; raises FilterError if Hive's lexer cannot express it.

    Like Spark, a string is double-quoted unless it contains a double quote; backslashes
    are not escape sequences, so the content must not end in an odd backslash run or hold
    an unescaped quote of the chosen kind.
    """
    if isinstance(literal, Str):
        for quote in ('"', "'"):
            if fits_quotes(literal.value, quote):
                return quote + literal.value + quote
        raise FilterError(literal.pos, f"{literal.value!r} cannot be written as a filter string literal")
    if isinstance(literal, Date):
        return f"date'{literal.value.isoformat()}'"
    if isinstance(literal, Timestamp):
        return f"timestamp'{literal.value.isoformat(sep=' ')}'"
    return str(literal.value)


def fits_quotes(text: str, quote: str) -> bool:
    """Whether Hive's lexer reads ``quote + text + quote`` back as exactly ``text``."""
    index = 0
    while index < len(text):
        if text[index] == "\\":
            if index + 1 == len(text):
                return False
            index += 2
        elif text[index] == quote:
            return False
        else:
            index += 1
    return True


def render(node: Node) -> str:
    """Canonical filter text for ``node`` (the form Spark sends, plus NOT and STRUCT)."""
    def nested(child: Node) -> str:
        return f"({render(child)})" if isinstance(child, (And, Or)) else render(child)

    if isinstance(node, Compare):
        return f"{node.key} {node.op} {render_literal(node.value)}"
    if isinstance(node, Between):
        word = "not between" if node.negated else "between"
        return f"{node.key} {word} {render_literal(node.low)} and {render_literal(node.high)}"
    if isinstance(node, In):
        values = ", ".join(render_literal(value) for value in node.values)
        return f"({node.key}) {'not in' if node.negated else 'in'} ({values})"
    if isinstance(node, StructIn):
        rows = ", ".join("const struct(" + ", ".join(map(render_literal, row)) + ")" for row in node.rows)
        return f"(struct({', '.join(node.keys)})) {'not in' if node.negated else 'in'} ({rows})"
    if isinstance(node, Not):
        return "not " + nested(node.operand)
    joiner = " and " if isinstance(node, And) else " or "
    return joiner.join(nested(child) for child in node.operands)
