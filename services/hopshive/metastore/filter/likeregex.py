"""LIKE patterns: the Java-regex subset Hive evaluates with ``String.matches``.

Hive hands a filter's LIKE operand to Java's regex engine, and Spark sends patterns such as
``2024.*`` or ``.*-01-.*``.  The in-memory evaluator matches with Python ``re`` and the
MariaDB store with ``REGEXP`` (PCRE2), so a pattern is parsed here once
(``core.javaregex``: the subset of Java's syntax whose meaning the engines share) and
rendered for both.  The whole pattern must match (``\\A(?:…)\\z`` for PCRE2; PCRE2's ``$``
would also match before a final newline).  Both engines backtrack, and MariaDB turns an
exceeded PCRE2 match limit into a silent "no match": a pattern may therefore hold at most
``MAX_CHOICES`` choice points (variable repetitions plus alternations) and a repeated group
may hold none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...core.javaregex import MAX_LENGTH, PatternError, parse, render

MAX_CHOICES = 3
__all__ = ["MAX_CHOICES", "LikePattern", "PatternError", "compile_like"]


@dataclass(frozen=True)
class LikePattern:
    source: str
    python: re.Pattern
    pcre2: str
    tree: tuple         # core.javaregex's tree: the HBase store writes it as a row-key regex

    def matches(self, value: str) -> bool:
        return self.python.fullmatch(value) is not None


def _choices(node) -> int:
    """Choice points on one path through ``node``: bounds how much the engines backtrack."""
    kind = node[0]
    if kind == "seq":
        return sum(_choices(item) for item in node[1])
    if kind == "alt":
        return max(_choices(branch) for branch in node[1]) + 1
    if kind == "group":
        return _choices(node[1])
    if kind == "rep":
        if _choices(node[1]):
            raise PatternError(node[4], "a repeated group may not contain alternation or repetition")
        return int(node[2] != node[3])
    return 0


def compile_like(source: str) -> LikePattern:
    """Parse a Java-regex LIKE operand; raises PatternError(offset, reason)."""
    if len(source) > MAX_LENGTH:
        raise PatternError(MAX_LENGTH, f"LIKE patterns longer than {MAX_LENGTH} characters are not supported")
    tree = parse(source)
    if _choices(tree) > MAX_CHOICES:
        raise PatternError(0, f"LIKE pattern too complex: at most {MAX_CHOICES} repetitions or "
                              "alternations in sequence are supported")
    python = re.compile(render(tree, "python"))
    return LikePattern(source, python, r"\A(?:" + render(tree, "pcre2") + r")\z", tree)
