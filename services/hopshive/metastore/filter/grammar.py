"""The lark grammar of Hive's metastore filter language (``Filter.g``, Hive 2.3 to 4).

Kept as a Python string so it ships with the package without package-data rules.  Beyond
Filter.g it accepts a unary NOT, an unparenthesised IN key, and whitespace or a double
quote in ``date '...'``; keywords are case-insensitive as in Hive's no-case lexer.  The
lexer is the basic one with explicit priorities (dates before integers before names), so a
keyword is never a key name and ``2024-01-02`` is a date, as in Hive.
"""

from __future__ import annotations

import re
from functools import lru_cache

from lark import Lark

_END = r"(?![A-Za-z0-9_])"
_WS = r"[ \t\r\n]"
_DAY = r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
_TIME = _DAY + r" [0-9]{2}:[0-9]{2}:[0-9]{2}"

# Literal tokens, highest lexing priority first (a date is not an integer minus an integer).
LITERALS = {
    "TIMESTAMP": rf"(?i:timestamp){_WS}*(?:'{_TIME}'|\"{_TIME}\")",
    "DATE": rf"(?:(?i:date){_WS}*(?:'{_DAY}'|\"{_DAY}\"|{_DAY})|{_DAY}){_END}",
    "INT": rf"-?[0-9]+{_END}",
    "STRING": r'"(?:[^"\\]|\\[\s\S])*"|' + r"'(?:[^'\\]|\\[\s\S])*'",
}
LITERAL_RE = re.compile("|".join(f"(?P<{name}>{pattern})" for name, pattern in LITERALS.items()))
_ANY = "(?:" + "|".join(LITERALS.values()) + ")"

# A whole "(v1, v2, ...)" list is one VALUES token, split later with LITERAL_RE: lexing and
# parsing 100k IN values one token at a time in Python would take seconds.  A list with an
# error in it does not match VALUES and is parsed token by token, for a precise message.
GRAMMAR = rf"""
start: or_expr

?or_expr: and_expr (_OR and_expr)*
?and_expr: not_expr (_AND not_expr)*
?not_expr: NOT not_expr                                    -> negation
    | atom
?atom: "(" or_expr ")"
    | NAME OP value                                        -> key_op_value
    | value OP NAME                                        -> value_op_key
    | NAME LIKE value                                      -> key_op_value
    | value LIKE NAME                                      -> value_op_key
    | NAME NOT? BETWEEN value _AND value                    -> between
    | "(" NAME ")" NOT? IN values                           -> in_list
    | NAME NOT? IN values                                   -> in_list
    | "(" STRUCT "(" NAME ("," NAME)* ")" ")" NOT? IN "(" struct_row ("," struct_row)* ")" -> struct_in
struct_row: CONST STRUCT values
values: VALUES | "(" value ("," value)* ")"
?value: STRING | INT | DATE | TIMESTAMP

_OR.3: /or{_END}/i
_AND.3: /and{_END}/i
NOT.3: /not{_END}/i
LIKE.3: /like{_END}/i
BETWEEN.3: /between{_END}/i
IN.3: /in{_END}/i
STRUCT.3: /struct{_END}/i
CONST.3: /const{_END}/i
OP: /<=|>=|<>|!=|=|<|>/
VALUES.6: /\({_WS}*{_ANY}(?:{_WS}*,{_WS}*{_ANY})*{_WS}*\)/
TIMESTAMP.5: /{LITERALS["TIMESTAMP"]}/
DATE.4: /{LITERALS["DATE"]}/
INT.3: /{LITERALS["INT"]}/
STRING: /{LITERALS["STRING"]}/
NAME.1: /[A-Za-z0-9_]+/

%ignore /{_WS}+/
"""

# What the parser expected, in words, for error messages (terminal name -> description).
EXPECTED = {
    "NAME": "a partition key name", "STRING": "a value", "INT": "a value", "DATE": "a value",
    "TIMESTAMP": "a value", "OP": "a comparison operator", "LIKE": "LIKE", "NOT": "NOT",
    "BETWEEN": "BETWEEN", "IN": "IN", "STRUCT": "STRUCT", "CONST": "CONST", "_AND": "AND",
    "_OR": "OR", "LPAR": "'('", "VALUES": "'('", "RPAR": "')'", "COMMA": "','", "$END": "the end of the filter",
}


@lru_cache(maxsize=1)
def lark_parser() -> Lark:
    """The LALR parser, built once per process (building the tables is the slow part)."""
    return Lark(GRAMMAR, parser="lalr", lexer="basic", maybe_placeholders=False)
