"""Text formats of the dfs shell, as `hdfs dfs` prints and parses them: permissions, `ls`
lines, human-readable sizes, `stat` formats and chmod modes."""

from __future__ import annotations

import re
import time

STICKY = 0o1000
_SYMBOLIC = re.compile(r"^([ugoa]*)([+\-=])([rwxXt]*)$")
_WHO = {"u": 0o4700, "g": 0o2070, "o": 0o1007}
_BITS = {"r": 0o444, "w": 0o222, "x": 0o111, "t": STICKY}
_PREFIXES = "KMGTPE"


def mode_string(mode: int, is_dir: bool) -> str:
    """drwxr-xr-x style, with t/T for the sticky bit."""
    text = "".join(("r" if mode & (4 << s) else "-") + ("w" if mode & (2 << s) else "-")
                   + ("x" if mode & (1 << s) else "-") for s in (6, 3, 0))
    if mode & STICKY:
        text = text[:-1] + ("t" if mode & 1 else "T")
    return ("d" if is_dir else "-") + text


def is_dir(status: dict) -> bool:
    return status["type"] == "DIRECTORY"


def permission(status: dict) -> int:
    return int(status["permission"], 8)


def ls_lines(entries: list[tuple[str, dict]]) -> list[str]:
    """`hdfs dfs -ls` lines for (display path, FileStatus) pairs, columns aligned."""
    if not entries:
        return []
    widths = [max(len(str(field(status))) for _, status in entries)
              for field in (_replication, lambda s: s["owner"], lambda s: s["group"], lambda s: s["length"])]
    lines = []
    for path, status in entries:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(status["modificationTime"] / 1000))
        lines.append(f"{mode_string(permission(status), is_dir(status))} {_replication(status):>{widths[0]}} "
                     f"{status['owner']:<{widths[1]}} {status['group']:<{widths[2]}} "
                     f"{status['length']:>{widths[3]}} {when} {path}")
    return lines


def _replication(status: dict) -> str:
    return "-" if is_dir(status) else str(status["replication"])


def human(size: int, readable: bool) -> str:
    """Bytes, or with -h a binary-prefixed value with one decimal (1.5 K, 12.0 M)."""
    if not readable or size < 1024:
        return str(size)
    value, prefix = float(size), ""
    for prefix in _PREFIXES:
        value /= 1024
        if value < 1024:
            break
    return f"{value:.1f} {prefix}"


def stat_line(fmt: str, path: str, status: dict) -> str:
    """Expand a `hdfs dfs -stat` format (%a %A %b %F %g %n %o %r %u %x %X %y %Y)."""
    mtime, atime = status["modificationTime"], status["accessTime"]
    values = {
        "a": format(permission(status), "o"), "A": mode_string(permission(status), is_dir(status))[1:],
        "b": str(status["length"]), "F": "directory" if is_dir(status) else "regular file",
        "g": status["group"], "n": path.rstrip("/").rsplit("/", 1)[-1] or "/", "o": str(status["blockSize"]),
        "r": str(status["replication"]), "u": status["owner"],
        "x": _utc(atime), "X": str(atime), "y": _utc(mtime), "Y": str(mtime), "%": "%",
    }
    return re.sub(r"%(.)", lambda m: values.get(m.group(1), m.group(0)), fmt)


def _utc(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ms / 1000))


def parse_mode(text: str, current: int, directory: bool) -> int:
    """An octal mode (755, 1777) or symbolic clauses (u+x,go-w,a=r,+t) applied to ``current``.

    Raises:
        ValueError: the mode is neither.
    """
    if re.fullmatch(r"[0-7]{1,4}", text):
        return int(text, 8)
    mode = current
    for clause in text.split(","):
        match = _SYMBOLIC.match(clause)
        if not match:
            raise ValueError(f"chmod : mode '{text}' does not match the expected pattern.")
        who, op, perms = match.groups()
        mask = 0
        for letter in who or "a":
            mask |= 0o7777 if letter == "a" else _WHO[letter]
        bits = 0
        for letter in perms:
            if letter == "X":
                bits |= 0o111 if directory or current & 0o111 else 0
            else:
                bits |= _BITS[letter]
        bits &= mask
        if op == "+":
            mode |= bits
        elif op == "-":
            mode &= ~bits
        else:
            mode = (mode & ~(mask & 0o777)) | bits
    return mode & 0o1777
