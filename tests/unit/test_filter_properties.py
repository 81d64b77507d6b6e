"""Property tests of the filter language; the strategies are shared with the MariaDB test.

Random tables (typed partition keys, awkward values) and random filter trees rendered to
text, canonically and with the surface freedom the grammar allows.
"""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import date
from functools import lru_cache

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hopshive.metastore.filter import FilterError, bind, compile_predicate, parse, render
from hopshive.metastore.filter.ast import And, Between, Compare, Date, In, Int, Not, Or, Str, StructIn, fits_quotes
from hopshive.metastore.filter.evaluate import evaluate, truth, _Row
from hopshive.metastore.filter.keytypes import key_type, parse_date, parse_decimal
from hopshive.metastore.filter.likeregex import PatternError, compile_like

DEFAULT = "__HIVE_DEFAULT_PARTITION__"
NUMERIC_TYPES = ["tinyint", "smallint", "int", "bigint", "decimal(10,2)", "double"]
STRING_TYPES = ["string", "varchar(20)", "char(5)"]
ALPHABET = "abAZ09 -._%*\"'\\\t\n\r\u2028\x85\x00é😀"
PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ------------------------------------------------------------------ partition values

string_values = st.one_of(
    st.sampled_from(["", "a", "a ", "A", "b", "2024-01-01", "it's", DEFAULT, "%", "_", "\\", "a\n"]),
    st.text(ALPHABET, max_size=8))
number_values = st.one_of(
    st.integers(-130, 130).map(str),
    st.integers(-2 ** 63, 2 ** 63 - 1).map(str),
    st.decimals(-1000, 1000, places=2).map(str),
    st.sampled_from(["05", "+5", "-0", "007", DEFAULT, "", "abc", "5.0", "1.5", "-.25", "5.", "1e3", " 5",
                     "99999999999999999999", "127", "128", "-129", "32768", "2147483648", "9223372036854775808"]))
date_values = st.one_of(
    st.dates(date(1, 1, 1), date(9999, 12, 31)).map(date.isoformat),
    st.dates(date(2023, 12, 25), date(2024, 1, 10)).map(date.isoformat),
    st.sampled_from(["2024-01-01", "2024-02-29", "2023-02-29", "2024-1-5", DEFAULT, "0000-01-01", "2024-13-01",
                     "", "2024-01-01 "]))
VALUES = {"h": number_values, "ds": string_values, "d": date_values, "n": number_values}


@st.composite
def tables(draw, max_partitions: int = 25):
    """(keys, partitions): keys as (name, hive_type), partitions as value tuples in key order."""
    keys = [("h", draw(st.sampled_from(NUMERIC_TYPES))), ("ds", draw(st.sampled_from(STRING_TYPES))),
            ("d", "date"), ("n", "bigint")]
    rows = draw(st.lists(st.tuples(*(VALUES[name] for name, _ in keys)), min_size=2, max_size=max_partitions))
    return keys, rows

# ------------------------------------------------------------------ LIKE patterns


def _acceptable(pattern: str) -> bool:
    try:
        compile_like(pattern)
    except PatternError:
        return False
    return True


_pattern_atoms = st.one_of(
    st.sampled_from(ALPHABET).map(lambda c: "\\" + c if c in "\\^$.|?*+()[]{}" else c),
    st.sampled_from([".", "[a-c]", "[^a]", r"\d", r"\w", r"\s", r"\D", r"[\d-]", "[é😀]", r"\x41", r"\Q.*\E"]))
_pattern_pieces = st.tuples(_pattern_atoms, st.sampled_from(["", "", "", "*", "+", "?", "{1,2}", "*?"])).map("".join)
_sequences = st.lists(_pattern_pieces, max_size=3).map("".join)
like_patterns = st.one_of(
    st.tuples(st.sampled_from(["", ".*"]), _sequences, st.sampled_from(["", ".*"])).map("".join),
    st.tuples(_sequences, _sequences).map("|".join),
    st.tuples(st.sampled_from(["^", ""]), _sequences, st.sampled_from(["$", ""])).map("".join),
).filter(_acceptable)

# ------------------------------------------------------------------ filter trees


def _renderable(literal) -> bool:
    try:
        render(Compare("k", "=", literal))
    except FilterError:
        return False
    return True


_ints = st.one_of(st.integers(-130, 130), st.integers(-2 ** 63, 2 ** 63 - 1)).map(Int)
_dates = st.dates(date(2023, 12, 25), date(2024, 1, 10)).map(Date)
LITERALS = {  # literals a filter on a key of each domain uses (strings also meet ints and dates)
    "number": st.one_of(_ints, st.sampled_from(["5", "05", "-0.25", "1.5", "127.00"]).map(Str)),
    "date": st.one_of(_dates, _dates.map(lambda literal: Str(literal.value.isoformat()))),
    "string": st.one_of(string_values.map(Str).filter(_renderable), _ints, _dates),
}


def literals(hive_type: str):
    return LITERALS[key_type(hive_type).domain]


@lru_cache(maxsize=None)
def leaves(keys: tuple):
    def on_key(name: str, hive_type: str):
        value = literals(hive_type)
        ops = st.sampled_from(["=", "<>", "<", "<=", ">", ">="])
        return st.one_of(
            st.builds(Compare, st.just(name), ops, value),
            st.builds(Compare, st.just(name), st.just("like"), like_patterns.map(Str).filter(_renderable)),
            st.builds(Between, st.just(name), value, value, st.booleans()),
            st.builds(In, st.just(name), st.lists(value, min_size=1, max_size=4).map(tuple), st.booleans()))

    struct = st.builds(
        lambda rows, negated: StructIn(tuple(n for n, _ in keys[:2]), tuple(rows), negated),
        st.lists(st.tuples(*(literals(t) for _, t in keys[:2])), min_size=1, max_size=3), st.booleans())
    return st.one_of(*(on_key(name, hive_type) for name, hive_type in keys), struct)


@lru_cache(maxsize=None)
def filters(keys: tuple, max_leaves: int = 6):
    def combine(children):
        operands = st.lists(children, min_size=2, max_size=3).map(tuple)
        return st.one_of(operands.map(And), operands.map(Or), children.map(Not))
    return st.recursive(leaves(keys), combine, max_leaves=max_leaves)


@st.composite
def tables_and_filters(draw, count: int = 1, keys_for_filter=None):
    keys, rows = draw(tables())
    usable = tuple(k for k in keys if keys_for_filter is None or k[0] in keys_for_filter)
    pools = {name: [row[i] for row in rows if _usable_literal(hive_type, row[i])]
             for i, (name, hive_type) in enumerate(keys)}
    return keys, rows, [_borrow(draw, draw(filters(usable)), pools) for _ in range(count)]


def _usable_literal(hive_type: str, value: str) -> bool:
    domain = key_type(hive_type).domain
    if domain == "number":
        return parse_decimal(value) is not None
    if domain == "date":
        return parse_date(value) is not None
    return _renderable(Str(value))


def _borrow(draw, node, pools):
    """Swap some literals for values the table holds, so that equality and IN also hit."""
    def literal(key, value):
        if pools[key] and draw(st.booleans()):
            return Str(draw(st.sampled_from(pools[key])))
        return value

    if isinstance(node, Compare):
        return node if node.op == "like" else replace(node, value=literal(node.key, node.value))
    if isinstance(node, Between):
        return replace(node, low=literal(node.key, node.low), high=literal(node.key, node.high))
    if isinstance(node, In):
        return replace(node, values=tuple(literal(node.key, value) for value in node.values))
    if isinstance(node, StructIn):
        return replace(node, rows=tuple(tuple(map(literal, node.keys, row)) for row in node.rows))
    if isinstance(node, Not):
        return Not(_borrow(draw, node.operand, pools))
    return type(node)(tuple(_borrow(draw, child, pools) for child in node.operands))


def bound_or_none(node, keys):
    """The typed filter, or None when the random tree mixes incompatible types."""
    try:
        return bind(node, keys)
    except FilterError:
        return None

# ------------------------------------------------------------------ surface variations


def noisy_render(node, rnd: random.Random) -> str:
    """Filter text for ``node`` with random case, spacing, quoting, key side and spelling."""
    def word(text):
        return "".join(c.upper() if rnd.random() < 0.5 else c for c in text)

    def space():
        return rnd.choice([" ", "  ", "\n", "\t", " \r\n "])

    def key(name):
        return name.upper() if rnd.random() < 0.3 else name

    def lit(literal):
        if isinstance(literal, Date):
            day = literal.value.isoformat()
            return rnd.choice([f"date'{day}'", f"DATE '{day}'", f'date "{day}"', day, f"date{day}"])
        if isinstance(literal, Str):
            quote = rnd.choice([q for q in "\"'" if fits_quotes(literal.value, q)])
            return quote + literal.value + quote
        return str(literal.value)

    def walk(node):
        if isinstance(node, Compare):
            if node.op != "like" and rnd.random() < 0.4:
                flipped = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(node.op, node.op)
                return f"{lit(node.value)}{space()}{flipped}{space()}{key(node.key)}"
            op = word("like") if node.op == "like" else ("!=" if node.op == "<>" and rnd.random() < 0.5 else node.op)
            return f"{key(node.key)}{space()}{op}{space()}{lit(node.value)}"
        if isinstance(node, Between):
            neg = word("not") + " " if node.negated else ""
            return f"{key(node.key)} {neg}{word('between')} {lit(node.low)} {word('and')} {lit(node.high)}"
        if isinstance(node, In):
            name = f"({key(node.key)})" if rnd.random() < 0.7 else key(node.key)
            neg = word("not") + " " if node.negated else ""
            return f"{name} {neg}{word('in')}{space()}({', '.join(map(lit, node.values))})"
        if isinstance(node, StructIn):
            rows = ", ".join(f"{word('const')} {word('struct')}({', '.join(map(lit, row))})" for row in node.rows)
            neg = word("not") + " " if node.negated else ""
            return f"({word('struct')}({', '.join(map(key, node.keys))})) {neg}{word('in')} ({rows})"
        if isinstance(node, Not):
            return f"{word('not')}{space()}{nested(node.operand)}"
        joiner = word("and" if isinstance(node, And) else "or")
        return f"{space()}{joiner}{space()}".join(nested(child) for child in node.operands)

    def nested(child):
        text = walk(child)
        return f"({text})" if isinstance(child, (And, Or)) or rnd.random() < 0.2 else text

    return nested(node)

# ------------------------------------------------------------------ properties


@PROPERTY
@given(tables_and_filters())
def test_parse_of_render_is_the_same_tree_and_selects_the_same(case):
    keys, rows, (node,) = case
    text = render(node)
    assert parse(text) == node
    bound = bound_or_none(node, keys)
    if bound is None:
        return
    predicate = compile_predicate(text, keys)
    kinds = [key_type(t) for _, t in keys]
    assert [predicate(row) for row in rows] == [evaluate(bound, kinds, row) for row in rows]


@PROPERTY
@given(tables_and_filters(), st.randoms(use_true_random=False))
def test_every_surface_spelling_parses_to_the_same_tree(case, rnd):
    _, _, (node,) = case
    text = noisy_render(node, rnd)
    assert parse(text) == node, text


@PROPERTY
@given(tables_and_filters())
def test_a_filter_and_its_negation_split_the_judgeable_partitions(case):
    keys, rows, (node,) = case
    bound = bound_or_none(node, keys)
    if bound is None:
        return
    kinds = [key_type(t) for _, t in keys]
    for row in rows:
        inner = truth(bound, _Row(kinds, row))
        negation = truth(Not(bound), _Row(kinds, row))
        assert (inner, negation) in ((True, False), (False, True), (None, None))


@PROPERTY
@given(tables_and_filters(keys_for_filter={"h", "d", "n"}))
def test_unparsable_values_are_never_selected_by_typed_filters_or_their_negation(case):
    keys, _, (node,) = case
    bound = bound_or_none(node, keys)
    if bound is None:
        return
    kinds = [key_type(t) for _, t in keys]
    row = ("x", "y", DEFAULT, DEFAULT)
    assert not evaluate(bound, kinds, row) and not evaluate(Not(bound), kinds, row)
