"""Seek hints of the HBase server's regex RowFilter (``hbase_server.regexseek``) never skip a
row the regex matches: random anchored patterns against every short row over an alphabet
of valid and invalid UTF-8 pieces, checked with the matcher the filter itself uses."""

from __future__ import annotations

import itertools
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from hopshive.core.javaregex import BOL, alt, literal, one_of, render, repeat, seq
from hopshive.hbase_server.regexseek import NO_MORE, Seeker

PIECES = [b"", b"a", b"\x00", b"\xc3\xa9", b"\xff", b"\xe2\x82", b"\x80", b"\xf0\x90\x80\x80"]
ROWS = sorted({b"".join(p) for n in range(4) for p in itertools.product(PIECES[1:], repeat=n)})
CODES = [0, 1, ord("a"), ord("b"), 0xE9, 0xFFFD, 0x10000]


def _atoms():
    single = st.sampled_from(CODES).map(lambda c: literal((c,)))
    ranges = st.lists(st.tuples(st.sampled_from(CODES), st.sampled_from(CODES)).map(sorted), min_size=1,
                      max_size=2).map(lambda rs: one_of([tuple(r) for r in rs]))
    return st.one_of(single, ranges)


def _trees():
    return st.recursive(_atoms(), lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=3).map(lambda items: seq(*items)),
        st.lists(inner, min_size=2, max_size=3).map(lambda items: alt(*items)),
        st.tuples(inner, st.sampled_from([(0, None), (1, None), (0, 1), (2, 2)])).map(
            lambda t: repeat(t[0], *t[1]))), max_leaves=6)


@settings(max_examples=100, deadline=None)
@given(_trees())
def test_no_row_between_a_row_and_its_hint_matches(body):
    tree = seq(BOL, body)
    regex = re.compile(render(tree, "python"), re.DOTALL)
    seeker = Seeker(tree)
    matches = [regex.search(row.decode("utf-8", "replace")) is not None for row in ROWS]
    following = [None] * len(ROWS)       # the first matching row after each row
    for i in range(len(ROWS) - 2, -1, -1):
        following[i] = ROWS[i + 1] if matches[i + 1] else following[i + 1]
    for i, row in enumerate(ROWS):
        hint = None if matches[i] else seeker.next_row(row)
        if hint is None:
            continue
        assert hint == NO_MORE or hint > row
        assert following[i] is None or (hint != NO_MORE and following[i] >= hint), \
            (render(tree, "java"), row, hint, following[i])


def test_hints_skip_what_a_field_condition_rules_out():
    """^X followed by a second character >= 'b': from "Xa..." the next candidate is "Xb"."""
    tree = seq(BOL, literal(map(ord, "X")), one_of([(ord("b"), 0x10FFFF)]))
    seeker = Seeker(tree)
    assert seeker.next_row(b"Xa\xff\xff") == b"Xb"
    assert seeker.next_row(b"Y") == NO_MORE
