"""SQL for a typed filter: a boolean expression over the store's column expressions.

Every constant travels as a DB-API ``%s`` parameter (MySQLdb/pymysql); the SQL text holds
only the store's own column expressions, keywords and placeholders, so no filter text
can reach the statement.  Typed tests use ``number_sql``/``date_sql`` (NULL for values
that do not parse, which SQL's three-valued logic keeps out of every result, NOT included);
without them the value is rebuilt with a guarded CAST (see ``keytypes.fallback_sql``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection, Mapping, Sequence

from . import ast
from .bind import Bound, Test, bind
from .errors import FilterError
from .evaluate import evaluate
from .keytypes import DATE, NUMBER, STRING, KeyType, fallback_sql, key_type, parse_date, parse_number
from .parser import parse

IN_CHUNK = 1000  # values per IN (...): large sets become OR-ed lists of this size


@dataclass(frozen=True)
class KeyColumn:
    """One partition key as the store exposes it to SQL."""
    name: str                       # lowercased key name
    hive_type: str                  # e.g. "int", "string", "date", "decimal(10,2)"
    string_sql: str                 # the value as stored, e.g. "pkv1.PART_KEY_VAL"
    number_sql: str | None = None   # the value as a number or NULL, e.g. "pkv1.PART_KEY_VAL_NUM"
    date_sql: str | None = None     # the value as a DATE or NULL, e.g. "pkv1.PART_KEY_VAL_DATE"


@dataclass(frozen=True)
class CompiledFilter:
    sql: str                        # boolean SQL expression with %s placeholders
    params: tuple                   # the placeholders' values, in order
    keys_used: frozenset[str]
    ast: ast.Node | None            # the parsed filter (None for value sets)
    bound: Bound                    # the typed tree, for in-memory evaluation
    kinds: tuple[KeyType, ...]

    def matches(self, values: Sequence[str]) -> bool:
        """The same decision as the SQL, for one partition's values in key order."""
        return evaluate(self.bound, self.kinds, values)


def compile_filter(text: str, keys: Sequence[KeyColumn]) -> CompiledFilter:
    """Parse, type and compile a Hive filter for a table with these partition keys.

    Raises:
        FilterError: the filter is malformed, names an unknown key, or compares a key with
            a literal of an incompatible type.
    """
    node = parse(text)
    bound = bind(node, [(key.name, key.hive_type) for key in keys])
    return _compiled(bound, keys, node)


def compile_value_sets(value_sets: Mapping[str, Collection[str]], keys: Sequence[KeyColumn]) -> CompiledFilter:
    """Partitions whose key ``k`` has a value in ``value_sets[k]``, for every key given.

    Values are partition-value strings; numeric and date keys match by typed value ("05"
    and "5" are the same int), and a value that does not parse for its key matches nothing.
    """
    index = {key.name.lower(): i for i, key in enumerate(keys)}
    tests = []
    for name, values in value_sets.items():
        if name.lower() not in index:
            raise FilterError(None, f"{name!r} is not a partition key of this table")
        position = index[name.lower()]
        kind = key_type(keys[position].hive_type)
        if kind.domain == NUMBER:
            typed = {parse_number(kind, value) for value in values}
        elif kind.domain == DATE:
            typed = {parse_date(value) for value in values}
        else:
            typed = {str(value) for value in values}
        typed.discard(None)
        tests.append(Test(position, kind.domain, "in", tuple(sorted(typed))))
    return _compiled(ast.And(tuple(tests)), keys, None)


def _compiled(bound: Bound, keys: Sequence[KeyColumn], node: ast.Node | None) -> CompiledFilter:
    params: list = []
    sql = _Sql(keys, params).node(bound)
    used = frozenset(keys[test.key].name.lower() for test in _tests(bound))
    return CompiledFilter(sql, tuple(params), used, node, bound, tuple(key_type(k.hive_type) for k in keys))


def _tests(node: Bound):
    stack = [node]
    while stack:
        node = stack.pop()
        if isinstance(node, Test):
            yield node
        elif isinstance(node, ast.Not):
            stack.append(node.operand)
        else:
            stack.extend(node.operands)


class _Sql:
    """Writes SQL text left to right, appending each placeholder's value as it goes."""

    def __init__(self, keys: Sequence[KeyColumn], params: list):
        self.keys, self.params = keys, params

    def node(self, node: Bound) -> str:
        if isinstance(node, Test):
            return self.test(node)
        if isinstance(node, ast.Not):
            return f"NOT ({self.node(node.operand)})"
        if not node.operands:
            return "TRUE" if isinstance(node, ast.And) else "FALSE"
        joiner = " AND " if isinstance(node, ast.And) else " OR "
        return "(" + joiner.join(self.node(child) for child in node.operands) + ")"

    def column(self, key: KeyColumn, domain: str) -> str:
        """The key's expression in ``domain``; fallback CASTs add their own parameters."""
        given = {STRING: key.string_sql, NUMBER: key.number_sql, DATE: key.date_sql}[domain]
        if given is not None:
            return given
        sql, params = fallback_sql(key_type(key.hive_type), key.string_sql)
        self.params.extend(params)
        return sql

    def test(self, test: Test) -> str:
        key = self.keys[test.key]
        op = test.op
        if op == "like":
            if test.guard is None:
                sql = f"{key.string_sql} REGEXP %s"
            else:
                sql = f"(CASE WHEN {self.column(key, test.guard)} IS NOT NULL THEN {key.string_sql} REGEXP %s END)"
            self.params.append(test.values[0].pcre2)
            return sql
        if op in ("in", "not in"):
            return self.member(key, test)
        column = self.column(key, test.domain)
        self.params.extend(test.values)
        if op in ("between", "not between"):
            return f"{column} {op.upper()} %s AND %s"
        return f"{column} {op} %s"

    def member(self, key: KeyColumn, test: Test) -> str:
        if not test.values:
            return "FALSE"
        parts = []
        for start in range(0, len(test.values), IN_CHUNK):
            chunk = test.values[start:start + IN_CHUNK]
            column = self.column(key, test.domain)
            parts.append(f"{column} {test.op.upper()} ({', '.join(['%s'] * len(chunk))})")
            self.params.extend(chunk)
        if len(parts) == 1:
            return parts[0]
        return "(" + (" OR " if test.op == "in" else " AND ").join(parts) + ")"
