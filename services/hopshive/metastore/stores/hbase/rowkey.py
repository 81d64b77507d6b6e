"""Partition row keys: ``db + table + typed partition values``, as ordered bytes.

The seed's three requirements, and how each is met:

1. *Filters compare bytes without deserialising.*  Every value is written in an
   order-preserving encoding, so a condition ``p2 >= 5`` is a comparison of the field's
   bytes with ``field(5)``, which HBase's own filter language can run: a ``RowFilter`` with
   a ``regexstring`` comparator (``keyregex``).  That comparator decodes the row as UTF-8
   (invalid bytes all become U+FFFD), so **every key is valid UTF-8**: structure bytes are
   ASCII (0x00-0x7f) and strings are UTF-8, whose byte order is code-point order -- the
   decode loses nothing and orders as the bytes do.
2. *Byte order = typed order.*  A field is a tag byte and the value's encoding:
   ``0x01`` + encoding for a value of the key's type, ``0x00`` + the raw string for a value
   that does not parse as that type (``__HIVE_DEFAULT_PARTITION__`` in an int key: the
   filter language never matches those, and the tag keeps them out of every typed range).
   Numbers (tinyint, smallint, int, bigint, decimal, float, double: compared as exact
   decimals, like the evaluator) are ``sign`` (0 negative, 1 zero, 2 positive), then for a
   positive value its base-10 exponent (biased by 0x2000, two 7-bit bytes) and its digits
   (one byte each, digit + 1) ended by 0x00 -- a negative value writes ``0x7f - b`` for each
   byte of its absolute value's exponent, digits and end (so larger magnitudes sort first,
   and the end byte becomes 0x7f).  Dates are the proleptic Gregorian day number in four
   7-bit bytes.  Strings (and timestamps, varchar, char, boolean: the evaluator compares
   those as their text, and a canonical ``yyyy-mm-dd hh:mm:ss[.f]`` text sorts as its time
   does) are UTF-8 with 0x00 written 0x00 0x01, ended by 0x00 0x00: the empty string is
   ``00 00``, and ``"a"`` (``61 00 00``) sorts before ``"ab"`` (``61 62 00 00``).  Every
   encoding is prefix-free, so the first differing field decides the order of two keys and
   a field value's rows are exactly the rows starting with ``prefix + field``.
3. *A value's bytes are found without reading the preceding ones.*  The key ends with a
   trailer: each field's start offset (two 7-bit bytes) and the field count (one byte).
   Field ``i`` is ``key[start_i : start_{i+1}]`` (the last runs to the trailer) -- two
   reads from the end of the key, whatever the fields before it hold (``key_field``).  The
   trailer never changes the order: keys of one table have the same count, and two keys
   differ in a field before any trailer byte is compared.  HBase's regex comparator cannot
   do offset arithmetic, so a regex walks the fields before the one it tests (each field's
   grammar is fixed by its key type); the trailer serves readers outside HBase (``explain``,
   ``fsck``, tests) that want one value of a key.

Identity is typed: ``p=05`` and ``p=5`` of an int key are the same row (the store rejects
the second as already existing), as they are the same value to every filter.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Sequence

from ...filter.keytypes import DATE, NUMBER, KeyType, parse_date, parse_number

TYPED, UNTYPED = b"\x01", b"\x00"
MAX_FIELDS = 127
EXPONENT_BIAS = 0x2000


def _seven_bit(value: int, size: int) -> bytes:
    if not 0 <= value < 1 << (7 * size):
        raise ValueError(f"{value} does not fit {size} 7-bit bytes")
    return bytes((value >> (7 * (size - 1 - i))) & 0x7F for i in range(size))


def _from_seven_bit(data: bytes) -> int:
    value = 0
    for byte in data:
        value = value << 7 | byte
    return value


def encode_string(text: str) -> bytes:
    return text.encode("utf-8").replace(b"\x00", b"\x00\x01") + b"\x00\x00"


def decode_string(data: bytes) -> tuple[str, int]:
    """The string at the start of ``data`` and the bytes it used."""
    end = 0
    while True:
        end = data.index(b"\x00", end)
        if data[end + 1:end + 2] == b"\x01":
            end += 2
            continue
        return data[:end].replace(b"\x00\x01", b"\x00").decode("utf-8"), end + 2


def encode_number(value: Decimal) -> bytes:
    if value.is_zero():
        return b"\x01"
    sign, digits, _ = value.normalize().as_tuple()
    magnitude = _seven_bit(value.adjusted() + EXPONENT_BIAS, 2) + bytes(d + 1 for d in digits) + b"\x00"
    if sign:
        return b"\x00" + bytes(0x7F - b for b in magnitude)
    return b"\x02" + magnitude


def decode_number(data: bytes) -> tuple[Decimal, int]:
    if data[0] == 1:
        return Decimal(0), 1
    negative = data[0] == 0
    body = bytes(0x7F - b for b in data[1:]) if negative else data[1:]
    end = body.index(b"\x00", 2)
    exponent = _from_seven_bit(body[:2]) - EXPONENT_BIAS
    digits = tuple(b - 1 for b in body[2:end])
    value = Decimal((int(negative), digits, exponent - len(digits) + 1))
    return value, end + 2


def encode_date(value: date) -> bytes:
    return _seven_bit(value.toordinal(), 4)


def encode_typed(kind_domain: str, value) -> bytes:
    """A typed value (Decimal, date or str, as ``filter.bind`` produces) as a field."""
    if kind_domain == NUMBER:
        return TYPED + encode_number(value)
    if kind_domain == DATE:
        return TYPED + encode_date(value)
    return TYPED + encode_string(value)


def encode_field(kind: KeyType, raw: str) -> bytes:
    """A partition value (the stored string) of a key of type ``kind`` as a field."""
    if kind.domain == NUMBER:
        number = parse_number(kind, raw)
        return encode_typed(NUMBER, number) if number is not None else UNTYPED + encode_string(raw)
    if kind.domain == DATE:
        day = parse_date(raw)
        return encode_typed(DATE, day) if day is not None else UNTYPED + encode_string(raw)
    return encode_typed(kind.domain, raw)


def decode_field(domain: str, field: bytes) -> str:
    """A field back to text (for ``explain``): the typed value, or the raw untyped string."""
    if field[:1] == UNTYPED:
        return decode_string(field[1:])[0]
    body = field[1:]
    if domain == NUMBER:
        return str(decode_number(body)[0])
    if domain == DATE:
        return date.fromordinal(_from_seven_bit(body[:4])).isoformat()
    return decode_string(body)[0]


def table_prefix(db_name: str, table_name: str) -> bytes:
    """``X`` of the seed: the bytes every partition key of the table starts with."""
    return encode_string(db_name) + encode_string(table_name)


def row_key(db_name: str, table_name: str, kinds: Sequence[KeyType], values: Sequence[str]) -> bytes:
    if len(values) != len(kinds) or not 0 < len(values) <= MAX_FIELDS:
        raise ValueError(f"{len(values)} values for {len(kinds)} partition keys")
    return key_from_fields(table_prefix(db_name, table_name),
                           [encode_field(kind, value) for kind, value in zip(kinds, values)])


def key_from_fields(prefix: bytes, fields: Sequence[bytes]) -> bytes:
    key = bytearray(prefix)
    starts = []
    for field in fields:
        starts.append(len(key))
        key += field
    if len(key) >= 1 << 14:
        raise ValueError("partition key longer than 16 KiB")
    for start in starts:
        key += _seven_bit(start, 2)
    key.append(len(starts))
    return bytes(key)


def key_field(key: bytes, index: int) -> bytes | None:
    """Field ``index`` of a partition key, found from its trailer alone (requirement 3);
    None when the key has no such field."""
    if not key:
        return None
    count = key[-1]
    body_end = len(key) - 1 - 2 * count
    if index >= count or body_end < 0:
        return None

    def start(i: int) -> int:
        return _from_seven_bit(key[body_end + 2 * i:body_end + 2 * i + 2])

    begin = start(index)
    finish = start(index + 1) if index + 1 < count else body_end
    return key[begin:finish] if 0 <= begin <= finish <= body_end else None


def prefix_successor(prefix: bytes) -> bytes:
    """The smallest key greater than every key starting with ``prefix`` (b"" = no limit)."""
    trimmed = prefix.rstrip(b"\xff")
    if not trimmed:
        return b""
    return trimmed[:-1] + bytes([trimmed[-1] + 1])
