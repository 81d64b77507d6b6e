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
from .inodes import COLUMNS, INODES, KEY_WHERE, ROOT_ID, ROOT_KEY, SELECT, SELECT_BY_KEYS, Inode, from_row, \
    partition_id

CACHE_LIMIT = 200_000
# The inodes of some keys plus, for the one a parenthesised condition picks (a directory),
# its number of children: the subquery runs for that row only (IF evaluates one branch).
_SELECT_COUNTING = (f"SELECT {', '.join(COLUMNS)}, IF({{}} AND i.is_dir, (SELECT COUNT(*) FROM {INODES} c"
                    f" WHERE c.parent_id=i.id), 0) FROM {INODES} i FORCE INDEX (PRIMARY)")
_LOCKS = {"share": " LOCK IN SHARE MODE", "update": " FOR UPDATE"}


@dataclass
class Resolved:
    """The inodes along a path: ``inodes[0]`` is the root; shorter than the path when a
    component is missing."""

    components: list[str]
    inodes: list[Inode]
    # With ``count_children``: how many children the last inode has (0 for a file), read in
    # the same statement; None when it could not be (the caller counts them itself).
    children: int | None = None

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
        # path prefix -> (primary key, id, is_dir) of its inode; name -> its SQL literal
        self._cache: dict[tuple[str, ...], tuple[tuple[int, int, str], int, int]] = {}
        self._literals: dict[str, str] = {}

    def forget(self, components: list[str]) -> None:
        """Drop a path and everything under it (after a move or delete)."""
        prefix = tuple(components)
        for key in [k for k in self._cache if k[: len(prefix)] == prefix]:
            self._cache.pop(key, None)

    def _remember(self, prefixes: list[tuple[str, ...]], inodes: list[Inode]) -> None:
        cache = self._cache
        if len(cache) > CACHE_LIMIT:
            cache.clear()
        for prefix, inode in zip(prefixes, inodes[1:]):
            entry = (inode.key, inode.id, inode.is_dir)
            if cache.get(prefix) != entry:
                cache[prefix] = entry

    def _read_keys(self, tx: Tx, keys: list[tuple], lock: str, counted: tuple | None = None
                   ) -> tuple[dict[tuple, Inode], int | None]:
        """The inodes of ``keys``, in one statement written out in full: its names escaped
        once per process by the driver (formatting the statement's parameters for each call
        cost as much as MariaDB took to run it); and with ``counted`` (one of ``keys``, plain
        reads only) the number of children of that inode when it is found (else None)."""
        if not keys:
            return {}, None
        literals = self._literals
        if len(literals) > CACHE_LIMIT:
            literals.clear()
        for _, _, name in keys:
            if name not in literals:
                literals[name] = tx.literal(name)
        where = ", ".join(f"({int(p)}, {int(q)}, {literals[name]})" for p, q, name in keys)
        if counted is None:
            rows = tx.query(f"{SELECT_BY_KEYS} WHERE (partition_id, parent_id, name) IN ({where}){lock}")
            return {(row[0], row[1], row[2]): Inode._make(row) for row in rows}, None
        p, q, name = counted
        picked = f"(i.partition_id={int(p)} AND i.parent_id={int(q)} AND i.name={literals[name]})"
        rows = tx.query(f"{_SELECT_COUNTING.format(picked)} WHERE (partition_id, parent_id, name) IN ({where})")
        found, children = {}, None
        for row in rows:
            key = (row[0], row[1], row[2])
            found[key] = Inode._make(row[:-1])
            if key == counted:
                children = int(row[-1])
        return found, children

    def resolve(self, tx: Tx, components: list[str], exclusive: int = 0, lock: bool = False,
                nowait: bool = False, count_children: bool = False) -> Resolved:
        """Resolve ``components``; with ``lock``, share-lock ancestors and exclusively lock
        the last ``exclusive`` components that exist (with ``nowait``, a row locked by
        another transaction fails the statement at once: error 1205).  The root and the
        cached prefix are read in one statement per lock mode (a plain read also takes the
        component after the prefix, whose key follows from the last cached id); each row is
        then checked against the key its parent's actual id gives, and a component the cache
        guessed wrong is read on its own.  A locking read also reads on its own each
        component it found missing, once its parent's lock is held: a statement may look
        for a key before it waits for another row's lock, so the absence it saw may be stale
        by the time it returns (a concurrent creator held the parent and has committed)."""
        if lock:
            cut = max(len(components) - exclusive, 0)
            wait = " NOWAIT" if nowait else ""
            modes = (_LOCKS["share"] + wait, _LOCKS["update"] + wait)
        else:
            cut, modes = len(components), ("", "")
        prefixes = [tuple(components[:i + 1]) for i in range(len(components))]
        keys = [ROOT_KEY]       # keys[i + 1] is the guessed key of components[i]
        parent_id = ROOT_ID
        directory = True        # whether the last component read was a directory when cached
        for i, name in enumerate(components):
            cached = self._cache.get(prefixes[i])
            if cached is None:
                if not lock:
                    keys.append((partition_id(parent_id, name), parent_id, name))
                directory = False
                break
            keys.append(cached[0])
            parent_id, directory = cached[1], cached[2]
        # A plain read of a cached path to a directory counts its children in the same statement
        # (the subquery makes MariaDB's work on a statement ~30 % dearer, so only there).
        counted = keys[-1] if count_children and not lock and directory and len(keys) == len(components) + 1 \
            else None
        found, children = self._read_keys(tx, keys[:cut + 1], modes[0], counted)
        found.update(self._read_keys(tx, keys[cut + 1:], modes[1])[0])
        parent = found[ROOT_KEY]
        inodes = [parent]
        for i, name in enumerate(components):
            if not parent.is_dir:
                break
            key = (partition_id(parent.id, name), parent.id, name)
            if i + 1 < len(keys) and keys[i + 1] == key and (key in found or not lock):
                inode = found.get(key)          # read above, with the lock wanted here
            else:
                inode = from_row(tx.query_one(f"{SELECT} WHERE {KEY_WHERE}{modes[i >= cut]}", key))
            if inode is None:
                self._cache.pop(prefixes[i], None)
                break
            inodes.append(inode)
            parent = inode
        self._remember(prefixes, inodes)
        resolved = Resolved(components, inodes)
        if counted is not None and resolved.exists and inodes[-1] is found.get(counted):
            resolved.children = children     # counted in the statement that read this very row
        return resolved
