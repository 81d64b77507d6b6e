"""Delegation tokens in Hadoop's formats: Writable integers, identifiers, URL strings and
credentials files (the Java side of the same formats: tests/component/test_tokens_hadoop.py)."""

from __future__ import annotations

import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hopshive.security.tokens import (HIVE_KIND, MalformedToken, Token, TokenIdentifier, credentials_file,
                                      read_credentials_file)
from hopshive.security.writable import WritableError, read_vlong, write_vlong

# Values and their encodings as Hadoop's WritableUtils.writeVLong writes them.
KNOWN = [(0, "00"), (127, "7f"), (-112, "90"), (128, "8f80"), (255, "8fff"), (256, "8e0100"),
         (-113, "8770"), (-1, "ff"), (1_700_000_000_000, "8a018bcfe56800")]


@pytest.mark.parametrize("value,encoded", KNOWN)
def test_vlong_matches_hadoop(value, encoded):
    out = io.BytesIO()
    write_vlong(out, value)
    assert out.getvalue().hex() == encoded
    assert read_vlong(io.BytesIO(bytes.fromhex(encoded))) == value


@given(st.integers(min_value=-(2 ** 63), max_value=2 ** 63 - 1))
def test_vlong_round_trips(value):
    out = io.BytesIO()
    write_vlong(out, value)
    assert read_vlong(io.BytesIO(out.getvalue())) == value


def test_truncated_vlong_is_an_error():
    with pytest.raises(WritableError):
        read_vlong(io.BytesIO(bytes.fromhex("8e01")))


IDENT = TokenIdentifier("p1__alice", "p1__alice", "", 1_700_000_000_000, 1_700_604_800_000, 42, 3)


def test_identifier_round_trips_and_keeps_field_order():
    raw = IDENT.to_bytes()
    assert raw[0] == 0 and raw[1:11] == b"\x09p1__alice"      # version, then owner as Text
    assert TokenIdentifier.from_bytes(raw) == IDENT


@given(st.text(max_size=40), st.text(max_size=40), st.integers(0, 2 ** 62), st.integers(0, 2 ** 31 - 1))
def test_any_identifier_round_trips(owner, renewer, date, sequence):
    ident = TokenIdentifier(owner, renewer, "", date, date + 1, sequence, 1)
    assert TokenIdentifier.from_bytes(ident.to_bytes()) == ident


def test_url_string_round_trips_without_padding():
    token = Token(IDENT.to_bytes(), b"\x01" * 20, "WEBHDFS delegation", "127.0.0.1:9870")
    text = token.url_string()
    assert "=" not in text and "+" not in text and "/" not in text
    assert Token.from_url_string(text) == token


@pytest.mark.parametrize("text", ["", "!!!", "AAAA", Token(b"x", b"y").url_string() + "AA"])
def test_garbage_is_a_malformed_token(text):
    with pytest.raises(MalformedToken):
        Token.from_url_string(text)
        TokenIdentifier.from_bytes(Token.from_url_string(text).identifier)


def test_credentials_file_round_trips():
    token = Token(IDENT.to_bytes(), b"\x02" * 20)
    tokens = {"127.0.0.1:9870": token.labelled("WEBHDFS delegation", "127.0.0.1:9870"),
              "hopshive": token.labelled(HIVE_KIND, "hopshive")}
    raw = credentials_file(tokens)
    assert raw.startswith(b"HDTS\x00")
    assert read_credentials_file(raw) == tokens
    with pytest.raises(MalformedToken):
        read_credentials_file(b"HDTS\x01" + raw[5:])
