"""In-memory evaluation of a typed filter: the oracle for the SQL, and the path for stores
that cannot run SQL (HBase).

It follows SQL's three-valued logic exactly as MariaDB evaluates the compiled filter: a test
of an unparsable value is unknown, NOT unknown is unknown, AND/OR are Kleene's, and a
partition is selected only when the whole filter is true.
"""

from __future__ import annotations

import operator
from typing import Callable, Sequence

from . import ast
from .bind import Bound, Test, bind
from .keytypes import DATE, NUMBER, KeyType, key_type, parse_date, parse_number
from .parser import parse

_COMPARE: dict[str, Callable] = {"=": operator.eq, "<>": operator.ne, "<": operator.lt,
                                 "<=": operator.le, ">": operator.gt, ">=": operator.ge}


class _Row:
    """One partition's values, converted to a key's typed form on first use."""

    def __init__(self, kinds: Sequence[KeyType], values: Sequence[str]):
        self.kinds, self.values, self.cache = kinds, values, {}

    def get(self, index: int, domain: str):
        value = self.values[index]
        if domain == NUMBER or domain == DATE:
            slot = (index, domain)
            if slot not in self.cache:
                self.cache[slot] = (parse_number(self.kinds[index], value) if domain == NUMBER
                                    else parse_date(value))
            return self.cache[slot]
        return value


def _test(test: Test, row: _Row) -> bool | None:
    if test.op == "in" and not test.members:
        return False
    value = row.get(test.key, test.domain)
    if value is None or (test.guard and row.get(test.key, test.guard) is None):
        return None
    op = test.op
    if op == "like":
        return test.values[0].matches(value)
    if op in ("in", "not in"):
        return (value in test.members) == (op == "in")
    if op in ("between", "not between"):
        return (test.values[0] <= value <= test.values[1]) == (op == "between")
    return _COMPARE[op](value, test.values[0])


def truth(node: Bound, row: _Row) -> bool | None:
    """True, False or None (unknown) for one partition."""
    if isinstance(node, Test):
        return _test(node, row)
    if isinstance(node, ast.Not):
        inner = truth(node.operand, row)
        return None if inner is None else not inner
    is_and = isinstance(node, ast.And)
    unknown = False
    for child in node.operands:
        result = truth(child, row)
        if result is None:
            unknown = True
        elif result is not is_and:
            return result
    return None if unknown else is_and


def evaluate(node: Bound, kinds: Sequence[KeyType], values: Sequence[str]) -> bool:
    """Whether the partition with these values (in key order) is selected."""
    return truth(node, _Row(kinds, values)) is True


class Predicate:
    """A parsed and typed filter, callable on a partition's values (in key order)."""

    def __init__(self, bound: Bound, kinds: Sequence[KeyType]):
        self.bound, self.kinds = bound, tuple(kinds)

    def __call__(self, values: Sequence[str]) -> bool:
        return evaluate(self.bound, self.kinds, values)


def compile_predicate(text: str, keys: Sequence[tuple[str, str]]) -> Predicate:
    """Parse and type ``text`` for a table whose partition keys are (name, hive_type) in order."""
    return Predicate(bind(parse(text), keys), [key_type(hive_type) for _, hive_type in keys])
