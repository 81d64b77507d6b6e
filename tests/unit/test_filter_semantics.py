"""What a filter selects: typing by key type, unknown values, LIKE as Java regex, SQL shape."""

from datetime import date
from decimal import Decimal

import pytest

from hopshive.metastore.filter import (FilterError, KeyColumn, compile_filter, compile_predicate, compile_value_sets,
                                       typed_shadow_values)
from hopshive.metastore.filter.likeregex import PatternError, compile_like

# The table behind facts.md's filters: Spark's partition columns and their Hive types.
KEYS = [("ds", "string"), ("h", "int"), ("n", "bigint"), ("s", "smallint"), ("d", "date")]
COLUMNS = [KeyColumn(name, hive_type, f"p.{name}", f"p.{name}_num", f"p.{name}_date") for name, hive_type in KEYS]
DEFAULT = "__HIVE_DEFAULT_PARTITION__"
PARTITIONS = [
    ("2024-01-01", "1", "10000000000", "1", "2024-01-01"),
    ("2024-01-02", "5", "5", "2", "2024-01-15"),
    ("2024-01-31", "7", "6", "3", "2024-01-16"),
    ("2023-12-01", "8", "7", "1", "2024-02-01"),
    ("a", "3", "-1", "0", "2023-12-31"),
    ("b", "05", "0", "-4", "2024-01-31"),
    ("it's", DEFAULT, DEFAULT, DEFAULT, DEFAULT),
]


def selected(text, keys=KEYS, partitions=PARTITIONS):
    predicate = compile_predicate(text, keys)
    return [values[0] for values in partitions if predicate(values)]


@pytest.mark.parametrize("text, expected", [
    ('ds = "2024-01-02"', ["2024-01-02"]),
    ('ds > "2024-01-01" and h < 5', ["a"]),
    ('ds > "2023" and h <= 5', ["2024-01-01", "2024-01-02", "a", "b"]),
    ('(ds) in ("a", "b")', ["a", "b"]),
    ("(h) in (1, 3)", ["2024-01-01", "a"]),
    ("(n) not in (5, 6)", ["2024-01-01", "2023-12-01", "a", "b"]),
    ('ds like "2024.*"', ["2024-01-01", "2024-01-02", "2024-01-31"]),
    ('ds like ".*01"', ["2024-01-01", "2023-12-01"]),
    ('ds like ".*-01-.*"', ["2024-01-01", "2024-01-02", "2024-01-31"]),
    ("h >= 2 and h <= 8", ["2024-01-02", "2024-01-31", "2023-12-01", "a", "b"]),
    ('ds != "a"', ["2024-01-01", "2024-01-02", "2024-01-31", "2023-12-01", "b", "it's"]),
    ('(ds = "2024-01-01" or h = 7)', ["2024-01-01", "2024-01-31"]),
    ('ds >= "a" and ds <= "b"', ["a", "b"]),
    ('ds = "it\'s"', ["it's"]),
    ('d > "2024-01-15"', ["2024-01-31", "2023-12-01", "b"]),
    ("n = 10000000000 and s < 2", ["2024-01-01"]),
])
def test_spark_filters_select_what_spark_means(text, expected):
    assert selected(text) == expected


def test_numbers_compare_numerically_not_as_text():
    assert selected("h > 10") == []
    assert selected("h = 5") == ["2024-01-02", "b"]             # "05" is 5
    assert selected('h = "5"') == ["2024-01-02", "b"]           # a numeric string literal is coerced
    assert selected('h < "3.5"') == ["2024-01-01", "a"]
    assert selected("n > 9999999999") == ["2024-01-01"]
    assert selected("s between -4 and 0") == ["a", "b"]


def test_dates_compare_as_dates():
    assert selected("d between date'2024-01-01' and '2024-01-15'") == ["2024-01-01", "2024-01-02"]
    assert selected("d < 2024-01-01") == ["a"]


@pytest.mark.parametrize("text", ["h <> 1", "not h = 1", "(h) not in (1)", "h not between 1 and 2",
                                  "not (h = 1 or d = '2024-01-01')", "not h like '.*'", "d <> '2024-01-01'",
                                  "not not h = 1", "h > -9223372036854775808"])
def test_unparsable_values_never_match_typed_tests(text):
    assert "it's" not in selected(text)


def test_unknown_and_false_follow_sql_logic():
    assert "it's" in selected('not (h = 1 and ds = "a")')       # unknown AND false is false
    assert "it's" in selected('h = 1 or ds = "it\'s"')          # unknown OR true is true
    assert "it's" not in selected('not (h = 1 or ds = "x")')    # NOT (unknown OR false) is unknown


def test_values_out_of_the_key_type_range_do_not_parse():
    assert typed_shadow_values("tinyint", "127") == (Decimal(127), None)
    assert typed_shadow_values("tinyint", "128") == (None, None)
    assert typed_shadow_values("BIGINT", "-9223372036854775808") == (Decimal(-2 ** 63), None)
    assert typed_shadow_values("int", "+05") == (Decimal(5), None)
    assert typed_shadow_values("int", "5.0") == (None, None)
    assert typed_shadow_values("decimal(10,2)", "5.") == (Decimal(5), None)
    assert typed_shadow_values("double", "1.5e3") == (None, None)
    assert typed_shadow_values("double", "-.25") == (Decimal("-0.25"), None)
    assert typed_shadow_values("date", "2024-02-29") == (None, date(2024, 2, 29))
    assert typed_shadow_values("date", "2023-02-29") == (None, None)
    assert typed_shadow_values("date", "2024-1-5") == (None, None)
    assert typed_shadow_values("string", "5") == (None, None)
    assert typed_shadow_values("varchar(10)", DEFAULT) == (None, None)


def test_string_like_types_compare_as_text():
    keys = [("v", "varchar(10)"), ("c", "char(3)"), ("t", "timestamp"), ("b", "boolean")]
    rows = [("10", "x", "2024-01-01 00:00:00", "true"), ("9", "y", "2024-01-02 00:00:00", "false")]
    assert selected("v < '5'", keys, rows) == ["10"]
    assert selected("v = 10", keys, rows) == ["10"]               # integer literal as text
    assert selected("t >= timestamp'2024-01-02 00:00:00'", keys, rows) == ["9"]
    assert selected("b = 'true'", keys, rows) == ["10"]


def test_strings_compare_by_code_point():
    keys, rows = [("ds", "string")], [("a",), ("a ",), ("a\t",), ("B",), ("é",), ("😀",)]
    assert selected("ds > 'a'", keys, rows) == ["a ", "a\t", "é", "😀"]
    assert selected("ds < 'a'", keys, rows) == ["B"]
    assert selected("ds = 'a'", keys, rows) == ["a"]


@pytest.mark.parametrize("text, position, reason", [
    ("x = 1", 0, "'x' is not a partition key of this table (partition keys: ds, h, n, s, d)"),
    ('ds = "a" and value = 3', 13, "'value' is not a partition key"),
    ('h = "abc"', 4, "cannot compare int key 'h' with \"abc\": not a number"),
    ('h = "1e3"', 4, "not a number"),
    ("h = date'2024-01-01'", 4, "cannot compare int key 'h' with a date"),
    ("d = 20240101", 4, "cannot compare date key 'd' with an integer"),
    ("d > 'yesterday'", 4, "not a date (yyyy-mm-dd)"),
    ("d in ('2024-01-01', 'x')", 20, "not a date"),
    ('ds like "a(b.*"', 10, "invalid LIKE pattern 'a(b.*': unclosed group"),
    ('ds like "[a-z&&b]"', 13, "nested classes and class intersections are not supported"),
    ('ds like "(a|b)*"', 14, "a repeated group may not contain alternation or repetition"),
    ('ds like ".*a.*b.*c.*"', 9, "too complex"),
    ('ds like "(?i)a"', 9, "groups of the form '(?...'"),
    ('ds like "\\1"', 9, "back-references not supported"),
])
def test_typing_errors_name_position_and_reason(text, position, reason):
    with pytest.raises(FilterError) as caught:
        compile_filter(text, COLUMNS)
    assert caught.value.position == position
    assert reason in caught.value.reason


@pytest.mark.parametrize("pattern, matching, not_matching", [
    ("2024.*", ["2024", "2024-01"], ["x2024", "2024\n", "2024-01\r"]),
    (".*-01-.*", ["2024-01-02"], ["2024-01", "a\n-01-"]),
    ("a.c", ["abc", "aéc", "a😀c"], ["ac", "a\nc", "a\u2028c", "a\x85c"]),
    ("a$", ["a"], ["a\n"]),                                   # matches() must consume the terminator
    ("a$\n", ["a\n"], []),
    ("a$\r\n", ["a\r\n"], []),
    ("^a|b$", ["a", "b"], ["ab"]),
    (r"\d+", ["0123"], ["٣", ""]),                            # Java's \d is ASCII
    (r"\w\s\W", ["_ !", "a\x0b-"], ["é -", "a\u00a0-"]),
    ("[]a-]+", ["]a-"], ["b"]),
    (r"[^\d\s]", ["x", "é"], ["1", " "]),
    (r"\Q.*\E+", [".*", ".**"], ["ab"]),
    (r"a{2,3}b?", ["aa", "aaab"], ["a", "aaaa"]),
    (r"\x41\u00e9\x{1F600}\0101\t", ["Aé😀A\t"], []),
    (r"\uD83D\uDE00", ["😀"], []),
    (r"(ab|cd)e", ["abe", "cde"], ["ace"]),
    ("a*?b", ["aab"], ["aa"]),
    (r"%_\.", ["%_."], ["%xx"]),                             # SQL wildcards are plain characters
    ("", [""], ["a"]),
])
def test_like_is_java_string_matches(pattern, matching, not_matching):
    like = compile_like(pattern)
    assert [v for v in matching if not like.matches(v)] == []
    assert [v for v in not_matching if like.matches(v)] == []


@pytest.mark.parametrize("pattern", ["a**", "*a", "a{1", "a{3,2}", "a{1001}", "[a", "a)", "(a", r"\p{L}", r"\b",
                                     "a*+", "(?>a)", "(?=a)", r"\c", r"\u12", "x" * 5000, "[z-a]"])
def test_unsupported_or_invalid_patterns_are_refused(pattern):
    with pytest.raises(PatternError):
        compile_like(pattern)


def test_like_on_typed_keys_matches_the_text_of_parsable_values():
    assert selected("h like '0.*'") == ["b"]
    assert selected("d like '.*-31'") == ["a", "b"]
    assert "it's" not in selected("h like '.*'")


def test_sql_holds_no_filter_text():
    hostile = "x'); DROP TABLE PARTITIONS; -- %s %%"
    compiled = compile_filter(f'ds = "{hostile}" or ds like "DROP.*"', COLUMNS)
    assert "DROP" not in compiled.sql and "'" not in compiled.sql
    assert compiled.sql.replace("%s", "").count("%") == 0
    assert compiled.sql.count("%s") == len(compiled.params) == 2
    assert compiled.params[0] == hostile
    assert compiled.keys_used == {"ds"}


def test_sql_uses_typed_columns_and_placeholders():
    compiled = compile_filter("h between 1 and 5 and not d = '2024-01-01' or (n) not in (1, 2)", COLUMNS)
    assert compiled.sql == ("((p.h_num BETWEEN %s AND %s AND NOT (p.d_date = %s)) OR p.n_num NOT IN (%s, %s))")
    assert compiled.params == (Decimal(1), Decimal(5), date(2024, 1, 1), Decimal(1), Decimal(2))
    assert compiled.keys_used == {"h", "d", "n"}


def test_sql_without_typed_columns_falls_back_to_guarded_casts():
    keys = [KeyColumn("h", "int", "p.h"), KeyColumn("d", "date", "p.d")]
    compiled = compile_filter("h = 1 and d > '2024-01-01'", keys)
    assert "CAST(p.h AS DECIMAL(65,0))" in compiled.sql and "CAST(p.d AS DATE)" in compiled.sql
    assert compiled.sql.count("%s") == len(compiled.params)


def test_huge_in_lists_are_chunked():
    values = ", ".join(str(i) for i in range(2500))
    compiled = compile_filter(f"(h) not in ({values})", COLUMNS)
    assert compiled.sql.count("NOT IN (") == 3 and compiled.sql.count(" AND ") == 2
    assert len(compiled.params) == 2500
    assert compiled.matches(("x", "2500", "0", "0", "2024-01-01"))
    assert not compiled.matches(("x", "2499", "0", "0", "2024-01-01"))


def test_value_sets_normalise_typed_values():
    compiled = compile_value_sets({"H": ["05", "5", "x", DEFAULT], "ds": {"a", "b"}, "d": ["2024-01-01", "bad"]},
                                  COLUMNS)
    assert compiled.sql == "(p.h_num IN (%s) AND p.ds IN (%s, %s) AND p.d_date IN (%s))"
    assert compiled.params == (Decimal(5), "a", "b", date(2024, 1, 1))
    assert compiled.keys_used == {"h", "ds", "d"}
    assert compiled.matches(("a", "+5", "0", "0", "2024-01-01"))
    assert not compiled.matches(("c", "5", "0", "0", "2024-01-01"))


def test_value_sets_edge_cases():
    assert compile_value_sets({}, COLUMNS).sql == "TRUE"
    empty = compile_value_sets({"h": ["x"]}, COLUMNS)
    assert empty.sql == "(FALSE)" and not empty.matches(("a", "1", "0", "0", "2024-01-01"))
    big = compile_value_sets({"ds": [f"v{i}" for i in range(2001)]}, COLUMNS)
    assert big.sql.count(" IN (") == 3 and len(big.params) == 2001
    with pytest.raises(FilterError, match="'zz' is not a partition key"):
        compile_value_sets({"zz": ["1"]}, COLUMNS)
