"""The filter language's syntax: every form Spark and Hive send, and clean failures."""

from datetime import date, datetime

import pytest

from hopshive.metastore.filter import MAX_DEPTH, FilterError, parse, render
from hopshive.metastore.filter.ast import And, Between, Compare, Date, In, Int, Not, Or, Str, StructIn, Timestamp

# The exact strings Spark 4.3 sends to get_partitions_by_filter (shared/notes/facts.md).
SPARK_FILTERS = {
    'ds = "2024-01-02"': Compare("ds", "=", Str("2024-01-02")),
    'ds > "2024-01-01" and h < 5': And((Compare("ds", ">", Str("2024-01-01")), Compare("h", "<", Int(5)))),
    '(ds) in ("a", "b")': In("ds", (Str("a"), Str("b"))),
    "(h) in (1, 3)": In("h", (Int(1), Int(3))),
    "(n) not in (5, 6)": In("n", (Int(5), Int(6)), negated=True),
    'ds like "2024.*"': Compare("ds", "like", Str("2024.*")),
    'ds like ".*01"': Compare("ds", "like", Str(".*01")),
    'ds like ".*-01-.*"': Compare("ds", "like", Str(".*-01-.*")),
    "h >= 2 and h <= 8": And((Compare("h", ">=", Int(2)), Compare("h", "<=", Int(8)))),
    'ds != "a"': Compare("ds", "<>", Str("a")),
    '(ds = "2024-01-01" or h = 7)': Or((Compare("ds", "=", Str("2024-01-01")), Compare("h", "=", Int(7)))),
    'ds >= "a" and ds <= "b"': And((Compare("ds", ">=", Str("a")), Compare("ds", "<=", Str("b")))),
    'ds = "it\'s"': Compare("ds", "=", Str("it's")),
    'd > "2024-01-15"': Compare("d", ">", Str("2024-01-15")),
    "n = 10000000000 and s < 2": And((Compare("n", "=", Int(10000000000)), Compare("s", "<", Int(2)))),
}


@pytest.mark.parametrize("text", SPARK_FILTERS)
def test_every_spark_filter_parses(text):
    node = parse(text)
    assert node == SPARK_FILTERS[text]
    assert parse(render(node)) == node


def test_and_binds_tighter_than_or_and_not_tighter_than_and():
    a, b, c = (Compare(k, "=", Int(1)) for k in "abc")
    assert parse("a = 1 or b = 1 and c = 1") == Or((a, And((b, c))))
    assert parse("a = 1 and b = 1 or c = 1") == Or((And((a, b)), c))
    assert parse("not a = 1 and b = 1") == And((Not(a), b))
    assert parse("not (a = 1 and b = 1)") == Not(And((a, b)))
    assert parse("(a = 1 or b = 1) and c = 1") == And((Or((a, b)), c))
    assert parse("not not a = 1") == Not(Not(a))


def test_between_and_not_between():
    assert parse('ds between "a" and "b"') == Between("ds", Str("a"), Str("b"))
    assert parse("h NOT BETWEEN -3 AND 7") == Between("h", Int(-3), Int(7), negated=True)
    assert parse("h between 1 and 2 and h = 1") == And((Between("h", Int(1), Int(2)), Compare("h", "=", Int(1))))


def test_in_lists_with_and_without_parenthesised_key():
    assert parse("h in (1)") == In("h", (Int(1),))
    assert parse("(H) NOT IN (1, 2)") == In("h", (Int(1), Int(2)), negated=True)
    assert parse("not (ds) in ('x')") == Not(In("ds", (Str("x"),)))


def test_struct_in_from_hive_3():
    node = parse('(struct(a, B)) in (const struct(1, "x"), CONST STRUCT(2, "y"))')
    assert node == StructIn(("a", "b"), ((Int(1), Str("x")), (Int(2), Str("y"))))
    assert parse(render(node)) == node


@pytest.mark.parametrize("text, expected", [
    ("5 < h", Compare("h", ">", Int(5))),
    ("5 <= h", Compare("h", ">=", Int(5))),
    ('"a" > ds', Compare("ds", "<", Str("a"))),
    ('"a" >= ds', Compare("ds", "<=", Str("a"))),
    ('"a" = ds', Compare("ds", "=", Str("a"))),
    ('"a" <> ds', Compare("ds", "<>", Str("a"))),
    ("2024-01-01 != d", Compare("d", "<>", Date(date(2024, 1, 1)))),
])
def test_key_on_the_right_is_normalised(text, expected):
    assert parse(text) == expected


@pytest.mark.parametrize("text, value", [
    ('ds = "it\'s"', "it's"),
    ("ds = 'say \"hi\"'", 'say "hi"'),
    (r"ds = 'a\'b'", r"a\'b"),          # Hive keeps the backslash: TrimQuotes never unescapes
    (r'ds = "a\"b"', r'a\"b'),
    (r'ds = "c:\dir\\"', "c:\\dir\\\\"),
    ('ds = ""', ""),
    ('ds = "é 😀 \n\t"', "é 😀 \n\t"),
    ('ds = "a; DROP TABLE x"', "a; DROP TABLE x"),
])
def test_string_literals(text, value):
    assert parse(text).value == Str(value)


def test_keywords_and_keys_are_case_insensitive():
    assert parse('DS LIKE "a.*" AnD h BeTwEeN 1 aNd 2 Or NOT (X) In (1)') == Or((
        And((Compare("ds", "like", Str("a.*")), Between("h", Int(1), Int(2)))),
        Not(In("x", (Int(1),)))))


@pytest.mark.parametrize("text", ["d = date'2024-01-31'", "d = DATE '2024-01-31'", 'd = date "2024-01-31"',
                                  "d = 2024-01-31", "d = date2024-01-31", "2024-01-31 = d"])
def test_date_literal_forms(text):
    assert parse(text) == Compare("d", "=", Date(date(2024, 1, 31)))


def test_timestamp_literal_and_dates_as_strings():
    expected = Compare("t", "<", Timestamp(datetime(2024, 1, 31, 10, 11, 12)))
    assert parse("t < timestamp '2024-01-31 10:11:12'") == expected
    assert parse('d > "2024-01-15"').value == Str("2024-01-15")


def test_integers_are_64_bit():
    assert parse("n = 9223372036854775807").value == Int(2 ** 63 - 1)
    assert parse("n > -9223372036854775808").value == Int(-2 ** 63)
    assert parse("n = -5").value == Int(-5)
    assert parse("n = 007").value == Int(7)


def test_keys_may_start_with_digits_or_underscores():
    assert parse("_c0 = 1 and 1x = 2").operands[1].key == "1x"


@pytest.mark.parametrize("text, position, reason", [
    ("ds = ", 5, "expected a value after '='"),
    ("ds = \"2024", 5, "unterminated string literal"),
    ("ds = '2024\\'", 5, "unterminated string literal"),
    ('ds = "a" ; DROP TABLE x', 9, "unexpected character ';'"),
    ('ds = "a" and', 12, "expected a value, '(', NOT or a partition key name after 'and'"),
    ("(ds = 1", 7, "expected ')' after '1'"),
    ("ds = 1)", 6, "found ')'"),
    ("ds", 2, "expected BETWEEN, IN, LIKE, NOT or a comparison operator after 'ds'"),
    ("ds == 1", 4, "expected a value after '=', found '='"),
    ("h between 1 or 2", 12, "expected AND after '1', found 'or'"),
    ("(h) in ()", 8, "expected a value after '('"),
    ("h = 9223372036854775808", 4, "integer literal 9223372036854775808 is out of the 64-bit range"),
    ("d = 2024-02-30", 4, "invalid date literal '2024-02-30'"),
    ("t = timestamp'2024-01-01 25:00:00'", 4, "invalid timestamp literal"),
    ('"2024.*" like ds', 9, "LIKE needs the partition key on its left"),
    ("(struct(a, b)) in (const struct(1))", 32, "STRUCT IN row has 1 values for 2 keys"),
    ("", 0, "the filter is empty"),
    ("   ", 0, "the filter is empty"),
    ("ds = 1 -- comment", 7, "unexpected character '-'"),
    ("ds = `x`", 5, "unexpected character '`'"),
    ("ds = \u00a0'x'", 5, "unexpected character"),
])
def test_errors_name_position_and_reason(text, position, reason):
    with pytest.raises(FilterError) as caught:
        parse(text)
    assert caught.value.position == position
    assert reason in caught.value.reason
    assert str(caught.value) == f"Error parsing partition filter at position {position}: {caught.value.reason}"
    assert isinstance(caught.value, ValueError)


def test_filter_must_be_text():
    with pytest.raises(FilterError, match="must be a string"):
        parse(None)


def test_deep_nesting_is_rejected_cleanly():
    ok = "(" * 150 + "not " * 150 + "h = 1" + ")" * 150
    assert parse(ok) is not None
    with pytest.raises(FilterError) as caught:
        parse("not " * (MAX_DEPTH + 1) + "h = 1")
    assert caught.value.position == 4 * MAX_DEPTH
    assert "nested more than 200 levels" in caught.value.reason
    with pytest.raises(FilterError, match="nested more than"):
        parse("(h = 1 and " * 5000 + "h = 2" + ")" * 5000)
    with pytest.raises(FilterError, match="expected"):
        parse("(" * 100_000)


def test_many_parentheses_around_one_test_are_harmless():
    assert parse("(" * 10_000 + "h = 1" + ")" * 10_000) == Compare("h", "=", Int(1))


def test_hundred_thousand_element_in_list():
    values = ", ".join(f'"v{i}"' for i in range(100_000))
    node = parse(f"(ds) in ({values})")
    assert len(node.values) == 100_000 and node.values[-1] == Str("v99999")


def test_long_flat_conjunction():
    node = parse(" and ".join(f"h <> {i}" for i in range(20_000)))
    assert len(node.operands) == 20_000


def test_render_refuses_strings_no_quote_can_hold():
    with pytest.raises(FilterError, match="cannot be written"):
        render(Compare("ds", "=", Str("it's \"both\"")))
    with pytest.raises(FilterError, match="cannot be written"):
        render(Compare("ds", "=", Str("ends in \\")))
    assert render(Compare("ds", "=", Str("it's"))) == 'ds = "it\'s"'
