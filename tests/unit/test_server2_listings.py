"""Search patterns as server2's metadata listings match names with them: HiveServer2's
reading (JDBC's ``%``/``_``, the rest a regex)."""

from __future__ import annotations

import pytest

from hopshive.server2.listings import jdbc_pattern


@pytest.mark.parametrize("pattern, name, matches", [
    (None, "anything", True), ("", "x", True), ("%", "t1", True), ("t_", "t1", True), ("t_", "t12", False),
    ("T1", "t1", True), ("a\\_b", "a_b", True), ("a\\_b", "axb", False), ("50\\%", "50%", True),
    ("50\\%", "500", False), ("sales%", "sales_2024", True), (".*", "t1", True), ("a.b", "axb", True),
    ("alpha|beta", "beta", True),
])
def test_jdbc_patterns(pattern, name, matches):
    assert bool(jdbc_pattern(pattern).fullmatch(name)) is matches


def test_a_bad_pattern_is_a_clear_error():
    with pytest.raises(ValueError, match="bad search pattern 'a\\('"):
        jdbc_pattern("a(")
