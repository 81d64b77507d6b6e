"""Hadoop's Writable encodings that tokens use: variable-length integers (WritableUtils)
and Text (a vint length, then UTF-8).  Facts of the format, so a Java client reads what
we write and we read what it writes."""

from __future__ import annotations

import io


class WritableError(ValueError):
    """Bytes that are not the Writable they should be."""


def write_vlong(out: io.BytesIO, value: int) -> None:
    if -112 <= value <= 127:
        out.write(bytes((value & 0xFF,)))
        return
    length = -112
    if value < 0:
        value ^= -1
        length = -120
    tmp = value
    while tmp:
        tmp >>= 8
        length -= 1
    out.write(bytes((length & 0xFF,)))
    size = -(length + 120) if length < -120 else -(length + 112)
    out.write(value.to_bytes(size, "big"))


def read_vlong(data: io.BytesIO) -> int:
    first = _byte(data)
    signed = first - 256 if first > 127 else first
    if signed >= -112:
        return signed
    negative = signed < -120
    size = (-119 - signed if negative else -111 - signed) - 1
    raw = data.read(size)
    if len(raw) != size:
        raise WritableError("truncated variable-length integer")
    value = int.from_bytes(raw, "big")
    return value ^ -1 if negative else value


def write_text(out: io.BytesIO, text: str) -> None:
    write_bytes(out, text.encode("utf-8"))


def read_text(data: io.BytesIO) -> str:
    try:
        return read_bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WritableError("text is not UTF-8") from exc


def write_bytes(out: io.BytesIO, raw: bytes) -> None:
    """A vint length and the bytes (how Token writes its identifier and password)."""
    write_vlong(out, len(raw))
    out.write(raw)


def read_bytes(data: io.BytesIO, limit: int = 1 << 20) -> bytes:
    size = read_vlong(data)
    if not 0 <= size <= limit:
        raise WritableError(f"length {size} out of range")
    raw = data.read(size)
    if len(raw) != size:
        raise WritableError("truncated field")
    return raw


def _byte(data: io.BytesIO) -> int:
    raw = data.read(1)
    if not raw:
        raise WritableError("truncated variable-length integer")
    return raw[0]
