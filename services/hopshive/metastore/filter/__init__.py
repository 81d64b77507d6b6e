"""Hive metastore partition filters (``get_partitions_by_filter``): parse, type, run.

``parse`` reads the language of Hive's ``Filter.g`` as Spark and Hive send it;
``compile_filter`` turns it into a parameterised SQL boolean for the MariaDB store;
``compile_predicate`` (and ``CompiledFilter.matches``) evaluates the same typed filter in
memory; ``compile_value_sets`` is the "key in set" path for map-join partition pruning.

Semantic choices (Hive leaves several of these to its JDO/direct-SQL fallbacks):

* String literals are the raw text between the quotes, as Hive's ``TrimQuotes`` leaves it:
  a backslash only stops the next character from closing the literal and stays in the
  value (``'a\\'b'`` is ``a\\'b``).  Spark never escapes; it picks the quote the value lacks,
  so values holding backslashes round-trip.  Integers are 64-bit, as Hive's ``Long``.
* Keys: case-insensitive; a name that is not a partition key is an error.  Numeric keys
  (tinyint..bigint, decimal, float, double) compare as exact decimals, date keys as dates,
  all other types (string, varchar, char, timestamp, boolean) as the stored string in code
  point order.  A value that does not parse for its key's type (``__HIVE_DEFAULT_PARTITION__``
  in an int key, ``300`` in a tinyint key, ``1e5``: only plain decimal notation is numeric)
  is unknown to every test of that key, ``<>``, NOT and NOT IN included: it never matches.
* Literals meet keys by coercion: a string literal compared with a numeric or date key must
  parse as a number / ``yyyy-mm-dd`` date, or the filter is rejected; integers, dates and
  timestamps compared with string keys compare as their text (``2024-01-02``).  Integers
  against date keys and dates against numeric keys are rejected.
* LIKE takes a Java regular expression that must match the whole value (``String.matches``).
  On non-string keys it matches the stored text, but only of values that parse for the
  key.  See ``likeregex`` for the supported subset and its backtracking limit.
* Beyond Filter.g: unary NOT, ``key in (...)`` without parentheses, ``date '...'`` with a
  space or double quotes.  ``value LIKE key`` is rejected as in Hive.  More than
  ``MAX_DEPTH`` (200) nested NOT/AND/OR levels are rejected (redundant parentheses are free).
* SQL assumes the store's string column has a binary, NO PAD collation
  (``utf8mb4_nopad_bin``): ``utf8mb4_bin`` pads, so ``'a' = 'a '`` and ``'a\\t' < 'a'``
  there, unlike Hive and the evaluator.  LIKE becomes ``REGEXP`` (PCRE2, case-sensitive
  under that collation; patterns are written so that ``default_regex_flags`` other than
  CASELESS cannot change them).
"""

from .ast import render
from .bind import bind
from .compile import CompiledFilter, KeyColumn, compile_filter, compile_value_sets
from .errors import FilterError
from .evaluate import Predicate, compile_predicate
from .keytypes import NUMBER_SQL_TYPE, typed_shadow_values
from .parser import MAX_DEPTH, parse

__all__ = [
    "MAX_DEPTH", "NUMBER_SQL_TYPE", "CompiledFilter", "FilterError", "KeyColumn", "Predicate",
    "bind", "compile_filter", "compile_predicate", "compile_value_sets", "parse", "render",
    "typed_shadow_values",
]
