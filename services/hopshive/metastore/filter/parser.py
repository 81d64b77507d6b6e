"""``parse(text)``: filter text to AST, with errors that name a position and a reason.

Lark's LALR parser and ``Transformer_NonRecursive`` never recurse, so hostile nesting
cannot raise RecursionError here; the tree is then checked against ``MAX_DEPTH`` so that
the recursive passes after parsing (typing, SQL, evaluation) stay far from Python's limit.
"""

from __future__ import annotations

from datetime import date, datetime

from lark import Token, Transformer_NonRecursive
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken, VisitError

from . import ast
from .errors import FilterError
from .grammar import EXPECTED, LITERAL_RE, lark_parser

MAX_DEPTH = 200
_FLIPPED = {"=": "=", "<>": "<>", "!=": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_LONG = 1 << 63


def parse(text: str) -> ast.Node:
    """Parse a Hive metastore filter; raises FilterError(position, reason)."""
    if not isinstance(text, str):
        raise FilterError(None, "the filter must be a string")
    if not text.strip():
        raise FilterError(0, "the filter is empty")
    try:
        tree = lark_parser().parse(text)
        node = _ToAst().transform(tree).children[0]
    except UnexpectedInput as exc:
        raise _syntax_error(text, exc) from None
    except VisitError as exc:
        if isinstance(exc.orig_exc, FilterError):
            raise exc.orig_exc from None
        raise
    _check_depth(node)
    return node


def _syntax_error(text: str, exc: UnexpectedInput) -> FilterError:
    if isinstance(exc, UnexpectedCharacters):
        char = text[exc.pos_in_stream]
        if char in "\"'":
            return FilterError(exc.pos_in_stream, f"unterminated string literal starting with {char}")
        return FilterError(exc.pos_in_stream, f"unexpected character {char!r}")
    assert isinstance(exc, UnexpectedToken)  # what LALR raises, at the end of input too ($END)
    at_end = exc.token.type == "$END"
    position, found = (len(text), None) if at_end else (exc.token.start_pos, exc.token.value)
    expected = exc.interactive_parser.accepts() or exc.expected  # exact, unlike the LALR state's set
    wanted = sorted({EXPECTED.get(name, name) for name in expected}, key=_expected_order)
    reason = "expected " + (", ".join(wanted[:-1]) + " or " + wanted[-1] if len(wanted) > 1 else wanted[0])
    previous = _previous_token(text, position)
    if previous is not None:
        reason += f" after {_short(previous)!r}"
    if found is not None:
        reason += f", found {_short(found)!r}"
    return FilterError(position, reason)


def _expected_order(description: str) -> tuple[int, str]:
    return (0 if description == "a value" else 1, description)


def _previous_token(text: str, position: int) -> str | None:
    previous = None
    for token in lark_parser().lex(text[:position]):
        previous = token.value
    return previous


def _short(value: str) -> str:
    return value if len(value) <= 40 else value[:37] + "..."


def _check_depth(root: ast.Node) -> None:
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise FilterError(node.pos, f"the filter is nested more than {MAX_DEPTH} levels deep")
        if isinstance(node, ast.Not):
            stack.append((node.operand, depth + 1))
        elif isinstance(node, (ast.And, ast.Or)):
            stack.extend((child, depth + 1) for child in node.operands)


def _literal(token: Token) -> ast.Literal:
    return _make_literal(token.type, token.value, token.start_pos)


def _make_literal(kind: str, text: str, pos: int) -> ast.Literal:
    if kind == "STRING":
        return ast.Str(text[1:-1], pos)
    if kind == "INT":
        value = int(text)
        if not -_LONG <= value < _LONG:
            raise FilterError(pos, f"integer literal {_short(text)} is out of the 64-bit range")
        return ast.Int(value, pos)
    digits = text.strip("\"'")[-19 if kind == "TIMESTAMP" else -10:]
    try:
        if kind == "TIMESTAMP":
            return ast.Timestamp(datetime.strptime(digits, "%Y-%m-%d %H:%M:%S"), pos)
        return ast.Date(date.fromisoformat(digits), pos)
    except ValueError:
        raise FilterError(pos, f"invalid {kind.lower()} literal {text!r}") from None


def _split(children: list) -> tuple[list[Token], list]:
    """The key names among a rule's children, and the rest that are not keywords."""
    names = [c for c in children if isinstance(c, Token) and c.type == "NAME"]
    values = [c for c in children if not (isinstance(c, Token) and c.type in ("NAME", "NOT", "IN", "BETWEEN",
                                                                             "STRUCT", "CONST"))]
    return names, values


def _negated(children: list) -> bool:
    return any(isinstance(c, Token) and c.type == "NOT" for c in children)


class _ToAst(Transformer_NonRecursive):
    """Lark tree to ``ast`` nodes; key names are lowercased as Hive does."""

    def key_op_value(self, children):
        key, op, value = children
        operator = op.value.lower()
        return ast.Compare(key.value.lower(), "<>" if operator == "!=" else operator, _literal(value), key.start_pos)

    def value_op_key(self, children):
        value, op, key = children
        if op.type == "LIKE":
            raise FilterError(op.start_pos, "LIKE needs the partition key on its left")
        return ast.Compare(key.value.lower(), _FLIPPED[op.value], _literal(value), key.start_pos)

    def between(self, children):
        (key,), (low, high) = _split(children)
        return ast.Between(key.value.lower(), _literal(low), _literal(high), _negated(children), key.start_pos)

    def values(self, children):
        if len(children) == 1 and children[0].type == "VALUES":
            start = children[0].start_pos
            return tuple(_make_literal(m.lastgroup, m.group(), start + m.start())
                         for m in LITERAL_RE.finditer(children[0].value))
        return tuple(map(_literal, children))

    def in_list(self, children):
        (key,), (values,) = _split(children)
        return ast.In(key.value.lower(), values, _negated(children), key.start_pos)

    def struct_row(self, children):
        (values,) = _split(children)[1]
        return values

    def struct_in(self, children):
        names, rows = _split(children)
        position = children[0].start_pos
        for row in rows:
            if len(row) != len(names):
                raise FilterError(row[0].pos, f"STRUCT IN row has {len(row)} values for {len(names)} keys")
        return ast.StructIn(tuple(n.value.lower() for n in names), tuple(rows), _negated(children), position)

    def negation(self, children):
        token, operand = children
        return ast.Not(operand, token.start_pos)

    def and_expr(self, children):
        return ast.And(tuple(children), children[0].pos)

    def or_expr(self, children):
        return ast.Or(tuple(children), children[0].pos)
