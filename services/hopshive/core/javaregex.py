"""Java regular expressions (``java.util.regex.Pattern``), the subset whose meaning this
project can reproduce exactly: parsed once into a small tree, rendered for the engine that
runs it (Python ``re``, PCRE2, or Java syntax again).

Two users: Hive's LIKE operands (``metastore.filter.likeregex``: ``String.matches``) and
HBase's ``regexstring:`` comparator (``hbase_server.filters``: ``Pattern.compile(expr,
DOTALL)`` and ``find``).  The tree is what makes the engines agree:

* ``.`` is Java's "any character but a line terminator" (``\\n \\r \\u0085 \\u2028
  \\u2029``), or any character at all with ``dotall``; ``$`` is Java's "end, or before a
  final line terminator"; ``\\d \\w \\s`` are ASCII-only as in Java; every class is reduced
  to explicit code-point ranges, so class syntax differences (``[]a]``, ``[a-]``, ``\\D``
  inside a class) cannot diverge.
* Constructs whose meaning depends on the engine or on backtracking order are refused:
  back-references, look-around, inline flags, possessive and atomic forms, ``\\p{...}``,
  nested or intersected classes.

Nodes are tuples: ``("set", ranges)`` (one code point out of sorted, merged inclusive
ranges), ``("seq", items)``, ``("alt", branches)``, ``("group", node)``, ``("rep", node,
low, high_or_None, offset)``, ``("bol",)``, ``("eol",)``.
"""

from __future__ import annotations

import re

MAX_REPEAT = 1000
MAX_LENGTH = 4096
MAX_CODE_POINT = 0x10FFFF
LINE_TERMINATORS = "\n\r\x85\u2028\u2029"


class PatternError(ValueError):
    def __init__(self, offset: int, reason: str):
        super().__init__(reason)
        self.offset = offset
        self.reason = reason


def _ranges(*pairs: tuple[str, str]) -> tuple[tuple[int, int], ...]:
    return tuple((ord(lo), ord(hi)) for lo, hi in pairs)


def merge(ranges) -> tuple[tuple[int, int], ...]:
    merged: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return tuple((lo, hi) for lo, hi in merged)


def complement(ranges) -> tuple[tuple[int, int], ...]:
    out, start = [], 0
    for lo, hi in merge(ranges):
        if lo > start:
            out.append((start, lo - 1))
        start = hi + 1
    if start <= MAX_CODE_POINT:
        out.append((start, MAX_CODE_POINT))
    return tuple(out)


_DIGIT = _ranges(("0", "9"))
_WORD = _ranges(("a", "z"), ("A", "Z"), ("_", "_"), ("0", "9"))
_SPACE = _ranges((" ", " "), ("\t", "\r"))  # Java \s: space, \t \n \x0B \f \r
_SHORTHANDS = {"d": _DIGIT, "w": _WORD, "s": _SPACE}
_DOT = complement((ord(c), ord(c)) for c in LINE_TERMINATORS)
ANY = ((0, MAX_CODE_POINT),)
_CONTROL = {"t": "\t", "n": "\n", "r": "\r", "f": "\f", "a": "\a", "e": "\x1b"}


class _Parser:
    """Recursive descent over the pattern."""

    def __init__(self, source: str, dotall: bool):
        self.src, self.pos, self.dot = source, 0, ANY if dotall else _DOT

    def fail(self, reason: str, offset: int | None = None):
        raise PatternError(self.pos if offset is None else offset, reason)

    def peek(self, ahead: int = 0) -> str:
        index = self.pos + ahead
        return self.src[index] if index < len(self.src) else ""

    def alternation(self):
        branches = [self.sequence()]
        while self.peek() == "|":
            self.pos += 1
            branches.append(self.sequence())
        return branches[0] if len(branches) == 1 else ("alt", tuple(branches))

    def sequence(self):
        items: list = []
        while self.peek() not in ("", "|", ")"):
            char = self.peek()
            if char in "*+?{":
                if not items or items[-1][0] in ("bol", "eol", "rep"):
                    self.fail(f"nothing to repeat before {char!r}")
                items[-1] = self.quantifier(items[-1])
            elif self.src.startswith("\\Q", self.pos):
                end = self.src.find("\\E", self.pos + 2)
                end = len(self.src) if end < 0 else end
                items.extend(("set", ((ord(c), ord(c)),)) for c in self.src[self.pos + 2:end])
                self.pos = end + 2
            else:
                items.append(self.atom())
        return items[0] if len(items) == 1 else ("seq", tuple(items))

    def atom(self):
        char = self.peek()
        start = self.pos
        self.pos += 1
        if char == "(":
            if self.peek() == "?":
                if self.peek(1) != ":":
                    self.fail("groups of the form '(?...' other than '(?:' are not supported", start)
                self.pos += 2
            body = self.alternation()
            if self.peek() != ")":
                self.fail("unclosed group", start)
            self.pos += 1
            return ("group", body)
        if char == "[":
            return ("set", self.char_class(start))
        if char == ".":
            return ("set", self.dot)
        if char == "^":
            return ("bol",)
        if char == "$":
            return ("eol",)
        if char == "\\":
            return ("set", self.escape(start))
        return ("set", ((ord(char), ord(char)),))

    def quantifier(self, node):
        start, char = self.pos, self.peek()
        self.pos += 1
        if char == "{":
            match = re.compile(r"([0-9]+)(,([0-9]*))?\}").match(self.src, self.pos)
            if not match:
                self.fail("illegal repetition: '{' must start {n}, {n,} or {n,m}", start)
            self.pos = match.end()
            low = int(match.group(1))
            high = low if match.group(2) is None else (int(match.group(3)) if match.group(3) else None)
            if max(low, high or 0) > MAX_REPEAT:
                self.fail(f"repetition counts above {MAX_REPEAT} are not supported", start)
            if high is not None and high < low:
                self.fail("illegal repetition range", start)
        else:
            low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[char]
        if self.peek() == "+":
            self.fail("possessive quantifiers are not supported")
        if self.peek() == "?":  # lazy: the same strings match as a whole
            self.pos += 1
        return ("rep", node, low, high, start)

    def escape(self, start: int) -> tuple[tuple[int, int], ...]:
        char = self.peek()
        self.pos += 1
        if char == "":
            self.fail("trailing backslash", start)
        if char.lower() in _SHORTHANDS:
            ranges = _SHORTHANDS[char.lower()]
            return complement(ranges) if char.isupper() else ranges
        if char in _CONTROL:
            code = ord(_CONTROL[char])
        elif char == "0":
            digits = re.compile(r"[0-3][0-7]{0,2}|[0-7]{1,2}").match(self.src, self.pos)
            if not digits:
                self.fail("illegal octal escape", start)
            self.pos, code = digits.end(), int(digits.group(), 8)
        elif char in "xu":
            code = self.hex_escape(char, start)
        elif char.isalnum():
            what = "back-references" if char.isdigit() else f"the escape '\\{char}'"
            self.fail(f"{what} not supported", start)
        else:
            code = ord(char)
        return ((code, code),)

    def hex_escape(self, kind: str, start: int) -> int:
        pattern = r"\{([0-9a-fA-F]{1,6})\}|([0-9a-fA-F]{2})" if kind == "x" else r"([0-9a-fA-F]{4})"
        match = re.compile(pattern).match(self.src, self.pos)
        if not match:
            self.fail(f"illegal hexadecimal escape '\\{kind}'", start)
        self.pos = match.end()
        code = int(match.group(match.lastindex), 16)
        if kind == "u" and 0xD800 <= code <= 0xDBFF:  # Java joins \\uD83D\\uDE00 into one
            low = re.compile(r"\\u(d[c-f][0-9a-f]{2})", re.I).match(self.src, self.pos)
            if low:
                self.pos = low.end()
                code = 0x10000 + ((code - 0xD800) << 10) + (int(low.group(1), 16) - 0xDC00)
        if code > MAX_CODE_POINT or 0xD800 <= code <= 0xDFFF:
            self.fail("escape is not a Unicode scalar value", start)
        return code

    def char_class(self, start: int) -> tuple[tuple[int, int], ...]:
        negate = self.peek() == "^"
        self.pos += negate
        ranges: list[tuple[int, int]] = []
        first = True
        while first or self.peek() != "]":
            char = self.peek()
            if char == "":
                self.fail("unclosed character class", start)
            if char == "[" or self.src.startswith("&&", self.pos):
                self.fail("nested classes and class intersections are not supported")
            item_start = self.pos
            self.pos += 1
            item = self.escape(item_start) if char == "\\" else ((ord(char), ord(char)),)
            if self.peek() == "-" and self.peek(1) not in ("]", "") and item[0][0] == item[0][1]:
                self.pos += 1
                end_start = self.pos
                self.pos += 1
                end = self.escape(end_start) if self.src[end_start] == "\\" else (
                    (ord(self.src[end_start]),) * 2,)
                if len(end) != 1 or end[0][0] != end[0][1] or end[0][0] < item[0][0]:
                    self.fail("illegal character range", item_start)
                item = ((item[0][0], end[0][0]),)
            ranges.extend(item)
            first = False
        self.pos += 1
        return complement(ranges) if negate else merge(ranges)


def parse(source: str, dotall: bool = False, max_length: int = MAX_LENGTH):
    """The tree of a Java regex; raises PatternError(offset, reason)."""
    if len(source) > max_length:
        raise PatternError(max_length, f"patterns longer than {max_length} characters are not supported")
    parser = _Parser(source, dotall)
    tree = parser.alternation()
    if parser.pos < len(source):
        parser.fail("unmatched ')'")
    return tree


_DIALECTS = {
    "python": (lambda code: f"\\U{code:08x}", r"\A", r"(?=(?:\r\n|[\n\r\x85\u2028\u2029])?\Z)", "(?!)"),
    "pcre2": (lambda code: f"\\x{{{code:x}}}", r"\A", r"(?=(?:\r\n|[\n\r\x{85}\x{2028}\x{2029}])?\z)", "(?!)"),
    # Java's own syntax, ASCII only (so a UTF-8 decode of it is the identity): what the
    # HBase store writes into ``regexstring:`` comparators.  ``parse`` reads it back.
    "java": (lambda code: f"\\x{{{code:x}}}", "^", "$", "[^\\x{0}-\\x{10ffff}]"),
}


def render(node, dialect: str) -> str:
    """The tree as a pattern for ``dialect`` (python, pcre2, java) with the same meaning."""
    escape, bol, eol, nothing = _DIALECTS[dialect]

    def char(code: int) -> str:
        return chr(code) if chr(code).isascii() and chr(code).isalnum() else escape(code)

    def walk(node) -> str:
        kind = node[0]
        if kind == "set":
            ranges = node[1]
            if not ranges:
                return nothing
            if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
                return char(ranges[0][0])
            return "[" + "".join(char(lo) if lo == hi else f"{char(lo)}-{char(hi)}" for lo, hi in ranges) + "]"
        if kind == "seq":
            return "".join(walk(item) for item in node[1])
        if kind in ("alt", "group"):
            inner = "|".join(walk(b) for b in node[1]) if kind == "alt" else walk(node[1])
            return f"(?:{inner})"
        if kind == "rep":
            body, low, high = walk(node[1]), node[2], node[3]
            body = body if node[1][0] in ("set", "group", "alt") else f"(?:{body})"
            suffix = {(0, None): "*", (1, None): "+", (0, 1): "?"}.get((low, high))
            if suffix is None:
                suffix = f"{{{low}}}" if low == high else f"{{{low},{'' if high is None else high}}}"
            return body + suffix
        return bol if kind == "bol" else eol

    return walk(node)


# Builders, for code that writes patterns as trees.
def literal(codes) -> tuple:
    """A sequence matching exactly these code points."""
    items = tuple(("set", ((c, c),)) for c in codes)
    return items[0] if len(items) == 1 else ("seq", items)


def one_of(ranges) -> tuple:
    return ("set", merge(ranges))


def seq(*items) -> tuple:
    flat = tuple(part for item in items for part in (item[1] if item[0] == "seq" else (item,)))
    return flat[0] if len(flat) == 1 else ("seq", flat)


def alt(*branches) -> tuple:
    return branches[0] if len(branches) == 1 else ("alt", tuple(branches))


def repeat(node, low: int, high: int | None) -> tuple:
    return ("rep", node if node[0] in ("set", "group", "alt") else ("group", node), low, high, 0)


EMPTY = ("seq", ())
BOL = ("bol",)
