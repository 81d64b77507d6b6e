"""Path resolution with an inode cache, as HopsFS does it.

The cache maps path prefixes to inode primary keys.  A cached path is read back in one
batched query and *validated* (each row's parent must be the previous row), so a stale
entry costs a fallback to component-by-component resolution, never a wrong answer.

Mutating operations lock what they resolve: ancestors with shared locks (so a subtree
lock or move of an ancestor waits for them, and they see a lock set before them) and the
last ``exclusive`` components with exclusive locks.  The root is immutable (HopsFS) and is
never locked.  Locks are always taken root to leaf, the total order that avoids deadlocks.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.db import Tx
from .inodes import KEY_WHERE, ROOT_KEY, SELECT, SELECT_BY_KEYS, Inode, keys_in, partition_id

CACHE_LIMIT = 200_000
_LOCKS = {None: "", "share": " LOCK IN SHARE MODE", "update": " FOR UPDATE"}


@dataclass
class Resolved:
    """The inodes along a path: ``inodes[0]`` is the root; shorter than the path when a
    component is missing."""

    components: list[str]
    inodes: list[Inode]

    @property
    def exists(self) -> bool:
        return len(self.inodes) == len(self.components) + 1

    @property
    def last(self) -> Inode | None:
        return self.inodes[-1] if self.exists else None

    @property
    def ancestors(self) -> list[Inode]:
        """The existing inodes above the last component: those a caller must traverse
        (all of them when the path is missing, so a missing name in an unreadable
        directory is refused, not reported missing)."""
        return self.inodes[:len(self.components)]

    @property
    def parent(self) -> Inode | None:
        return self.inodes[len(self.components) - 1] if len(self.inodes) >= len(self.components) else None


class Resolver:
    def __init__(self):
        self._cache: dict[tuple[str, ...], tuple[int, int, str]] = {}

    def forget(self, components: list[str]) -> None:
        """Drop a path and everything under it (after a move or delete)."""
        prefix = tuple(components)
        for key in [k for k in self._cache if k[: len(prefix)] == prefix]:
            self._cache.pop(key, None)

    def _remember(self, components: list[str], inodes: list[Inode]) -> None:
        if len(self._cache) > CACHE_LIMIT:
            self._cache.clear()
        for depth, inode in enumerate(inodes[1:], start=1):
            self._cache[tuple(components[:depth])] = inode.key

    def _read_keys(self, tx: Tx, keys: list[tuple], lock: str | None) -> dict[tuple, Inode]:
        if not keys:
            return {}
        where = keys_in(len(keys))
        params = [value for key in keys for value in key]
        rows = tx.query(f"{SELECT_BY_KEYS} WHERE {where}{_LOCKS[lock]}", params)
        return {inode.key: inode for inode in (Inode(*row) for row in rows)}

    def resolve(self, tx: Tx, components: list[str], exclusive: int = 0, lock: bool = False) -> Resolved:
        """Resolve ``components``; with ``lock``, share-lock ancestors and exclusively lock
        the last ``exclusive`` components that exist."""
        cut = max(len(components) - exclusive, 0)
        prefix = []
        for i in range(len(components)):
            key = self._cache.get(tuple(components[: i + 1]))
            if key is None:
                break
            prefix.append(key)
        # One batched read of the root and the cached prefix (then validated), per lock mode.
        if lock:
            found = self._read_keys(tx, [ROOT_KEY] + prefix[:cut], "share")
            found.update(self._read_keys(tx, prefix[cut:], "update"))
        else:
            found = self._read_keys(tx, [ROOT_KEY] + prefix, None)
        root = found[ROOT_KEY]
        inodes = [root]
        start = 0
        if prefix:
            parent = root
            for i, key in enumerate(prefix):
                inode = found.get(key)
                if inode is None or inode.parent_id != parent.id or inode.name != components[i]:
                    break
                inodes.append(inode)
                parent = inode
            start = len(inodes) - 1
            if start < len(prefix):
                self.forget(components[:start + 1])
        parent = inodes[-1]
        for i in range(start, len(components)):
            if not parent.is_dir:
                break
            name = components[i]
            mode = ("share" if i < cut else "update") if lock else None
            row = tx.query_one(f"{SELECT} WHERE {KEY_WHERE}{_LOCKS[mode]}",
                               (partition_id(parent.id, name), parent.id, name))
            if row is None:
                break
            parent = Inode(*row)
            inodes.append(parent)
        self._remember(components, inodes)
        return Resolved(components, inodes)

