"""Path syntax: what HDFS accepts as a path, split into components."""

from __future__ import annotations

from ..exceptions import InvalidPath

MAX_COMPONENT_BYTES = 255
MAX_DEPTH = 1000


def split_path(path: str) -> list[str]:
    """Components of an absolute path ('/' gives []).

    Raises:
        InvalidPath: relative paths, '.', '..', ':' or NUL in a name, names over 255 bytes.
    """
    if not isinstance(path, str) or not path.startswith("/"):
        raise InvalidPath(f"Invalid path name {path!r}: a path must be absolute")
    components = [c for c in path.split("/") if c]
    if len(components) > MAX_DEPTH:
        raise InvalidPath(f"Invalid path name {path}: deeper than {MAX_DEPTH} levels")
    for name in components:
        if name in (".", "..") or ":" in name or "\0" in name:
            raise InvalidPath(f"Invalid path name {path}: component {name!r} is not allowed")
        try:
            size = len(name.encode("utf-8"))
        except UnicodeEncodeError as exc:
            raise InvalidPath(f"Invalid path name {path!r}: not valid UTF-8") from exc
        if size > MAX_COMPONENT_BYTES:
            raise InvalidPath(f"Invalid path name {path}: component longer than {MAX_COMPONENT_BYTES} bytes")
    return components


def join(components: list[str]) -> str:
    return "/" + "/".join(components)


def is_ancestor(ancestor: list[str], path: list[str]) -> bool:
    """True when ``ancestor`` is ``path`` or one of its parents."""
    return path[: len(ancestor)] == ancestor
