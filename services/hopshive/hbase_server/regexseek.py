"""Seek hints for ``RowFilter(=, 'regexstring:^...')``: the smallest row after a failing one
that the regex could still match, so that a scanner jumps there instead of reading every
row in between.

Apache HBase does not do this: its RowFilter has no seek hint, so a region server reads
every row of the scan range and only the matching ones leave it.  This server reads fewer
rows; it returns the same ones, because the hint comes from the very tree the comparator
matches with (``core.javaregex``).

The model is what HBase does with a row key: the key's bytes are decoded as UTF-8 (Java's
``new String(bytes, UTF_8)``; each maximal invalid subsequence becomes U+FFFD, as with
Python's ``errors="replace"``) and the regex is searched with ``find``.  Hints exist for
patterns that start with ``^`` and hold no other anchor: such a pattern matches a row
exactly when a prefix of the row's text is in its language.  The automaton (a Thompson NFA
over code points) is driven byte by byte through a UTF-8 decoder, so rows that are not
valid UTF-8 are modelled too and never skipped wrongly.
"""

from __future__ import annotations

from bisect import bisect_right

from ..core.javaregex import merge

FFFD = 0xFFFD
MAX_STATES = 20000
MAX_ROW = 480               # the longest row key the storage takes: hints never need more
NO_MORE = b""               # hint meaning: no row after this one can match
_SURROGATES = (0xD800, 0xDFFF)


class NotSeekable(Exception):
    """The pattern is not anchored at the start, holds other anchors, or is too large."""


def _lead(b: int):
    """(bits, bytes still to come, range of the next byte) for a valid UTF-8 lead byte."""
    if 0xC2 <= b <= 0xDF:
        return (b & 0x1F, 1, 0x80, 0xBF)
    if 0xE0 <= b <= 0xEF:
        return (b & 0x0F, 2, 0xA0 if b == 0xE0 else 0x80, 0x9F if b == 0xED else 0xBF)
    if 0xF0 <= b <= 0xF4:
        return (b & 0x07, 3, 0x90 if b == 0xF0 else 0x80, 0x8F if b == 0xF4 else 0xBF)
    return None


_LEADS = [_lead(b) for b in range(256)]


def _first_lead_cp(b: int) -> int | None:
    """The smallest code point whose UTF-8 lead byte is >= ``b`` (b >= 0x80)."""
    if b <= 0xC2:
        return 0x80
    if b <= 0xDF:
        return (b & 0x1F) << 6
    if b <= 0xEF:
        return 0x800 if b == 0xE0 else (b & 0x0F) << 12
    if b <= 0xF4:
        return 0x10000 if b == 0xF0 else (b & 0x07) << 18
    return None


def _lead_byte(cp: int) -> int:
    if cp < 0x80:
        return cp
    if cp < 0x800:
        return 0xC0 | cp >> 6
    if cp < 0x10000:
        return 0xE0 | cp >> 12
    return 0xF0 | cp >> 18


def _without_surrogates(ranges) -> tuple:
    out = []
    for lo, hi in ranges:
        if hi < _SURROGATES[0] or lo > _SURROGATES[1]:
            out.append((lo, hi))
            continue
        if lo < _SURROGATES[0]:
            out.append((lo, _SURROGATES[0] - 1))
        if hi > _SURROGATES[1]:
            out.append((_SURROGATES[1] + 1, hi))
    return tuple(out)


class _Ranges:
    """Sorted disjoint code-point ranges with "first member >= x"."""

    def __init__(self, ranges):
        self.ranges = merge(ranges)
        self.highs = [hi for _, hi in self.ranges]

    def __bool__(self):
        return bool(self.ranges)

    def first(self, at_least: int) -> int | None:
        index = bisect_right(self.highs, at_least - 1)
        if index == len(self.ranges):
            return None
        return max(self.ranges[index][0], at_least)

    def meets(self, lo: int, hi: int) -> bool:
        found = self.first(lo)
        return found is not None and found <= hi


class Seeker:
    """Built from a ``core.javaregex`` tree; raises NotSeekable."""

    def __init__(self, tree):
        items = tree[1] if tree[0] == "seq" else (tree,)
        if not items or items[0] != ("bol",):
            raise NotSeekable("not anchored with a leading ^")
        self.eps: list[list[int]] = []
        self.edges: list[list[tuple[tuple, int]]] = []
        start = self._state()
        self.accept = self._build(("seq", items[1:]), start)
        self.live = self._live()
        self._closures: dict = {}
        self._steps: dict = {}
        self._live_cps: dict = {}
        self.initial = self._closure(frozenset((start,)))

    # --------------------------------------------------------------- the NFA
    def _state(self) -> int:
        if len(self.eps) >= MAX_STATES:
            raise NotSeekable(f"more than {MAX_STATES} automaton states")
        self.eps.append([])
        self.edges.append([])
        return len(self.eps) - 1

    def _build(self, node, start: int) -> int:
        kind = node[0]
        if kind == "set":
            end = self._state()
            self.edges[start].append((_without_surrogates(node[1]), end))
            return end
        if kind == "seq":
            for item in node[1]:
                start = self._build(item, start)
            return start
        if kind == "group":
            return self._build(node[1], start)
        if kind == "alt":
            end = self._state()
            for branch in node[1]:
                entry = self._state()
                self.eps[start].append(entry)
                self.eps[self._build(branch, entry)].append(end)
            return end
        if kind == "rep":
            body, low, high = node[1], node[2], node[3]
            for _ in range(low):
                start = self._build(body, start)
            if high is None:
                loop = self._state()
                self.eps[start].append(loop)
                self.eps[self._build(body, loop)].append(loop)
                return loop
            for _ in range(high - low):
                after = self._state()
                self.eps[start].append(after)
                self.eps[self._build(body, start)].append(after)
                start = after
            return start
        raise NotSeekable("an anchor other than the leading ^")

    def _live(self) -> frozenset:
        """States from which the accepting state can be reached."""
        back: list[list[int]] = [[] for _ in self.eps]
        for state, targets in enumerate(self.eps):
            for target in targets:
                back[target].append(state)
        for state, edges in enumerate(self.edges):
            for ranges, target in edges:
                if ranges:
                    back[target].append(state)
        seen, todo = {self.accept}, [self.accept]
        while todo:
            for source in back[todo.pop()]:
                if source not in seen:
                    seen.add(source)
                    todo.append(source)
        return frozenset(seen)

    def _closure(self, states: frozenset) -> frozenset:
        found = self._closures.get(states)
        if found is None:
            seen, todo = set(states), list(states)
            while todo:
                for target in self.eps[todo.pop()]:
                    if target not in seen:
                        seen.add(target)
                        todo.append(target)
            found = self._closures[states] = frozenset(s for s in seen if s in self.live)
        return found

    def _step(self, states: frozenset, cp: int) -> frozenset:
        key = (states, cp)
        found = self._steps.get(key)
        if found is None:
            if len(self._steps) > 200000:
                self._steps.clear()
            targets = frozenset(target for state in states for ranges, target in self.edges[state]
                                if any(lo <= cp <= hi for lo, hi in ranges))
            found = self._steps[key] = self._closure(targets)
        return found

    def _cps(self, states: frozenset) -> _Ranges:
        """The code points after which some state of ``states`` can still reach acceptance."""
        found = self._live_cps.get(states)
        if found is None:
            found = self._live_cps[states] = _Ranges(
                r for state in states for ranges, target in self.edges[state] if target in self.live for r in ranges)
        return found

    # ------------------------------------------------- bytes through UTF-8
    def _feed(self, state, b: int):
        """(state after byte ``b``, whether the text decoded so far has a matching prefix)."""
        pending, states = state
        if pending is not None:
            bits, remaining, lo, hi = pending
            if lo <= b <= hi:
                bits = bits << 6 | (b & 0x3F)
                if remaining > 1:
                    return ((bits, remaining - 1, 0x80, 0xBF), states), False
                states = self._step(states, bits)
                return (None, states), self.accept in states
            states = self._step(states, FFFD)            # the sequence broke off: U+FFFD
            if self.accept in states:
                return (None, states), True
        if b < 0x80 or _LEADS[b] is None:
            states = self._step(states, b if b < 0x80 else FFFD)
            return (None, states), self.accept in states
        return (_LEADS[b], states), False

    def _alive(self, state) -> bool:
        pending, states = state
        cps = self._cps(states)
        if pending is None or not cps:
            return bool(cps)
        bits, remaining, lo, hi = pending
        shift = 6 * (remaining - 1)
        first = ((bits << 6) | (lo & 0x3F)) << shift
        last = ((bits << 6) | (hi & 0x3F)) << shift | ((1 << shift) - 1)
        return cps.meets(first, last) or cps.meets(FFFD, FFFD)

    def _first_live_byte(self, state, lo: int) -> int | None:
        """The smallest byte >= ``lo`` after which the text can still match."""
        pending, states = state
        if pending is not None:
            for b in range(lo, 256):
                after, matched = self._feed(state, b)
                if matched or self._alive(after):
                    return b
            return None
        cps = self._cps(states)
        ascii_cp = cps.first(lo)
        if ascii_cp is not None and ascii_cp < 0x80:
            return ascii_cp
        lowest = max(lo, 0x80)
        if lowest > 0xFF:
            return None
        if cps.meets(FFFD, FFFD):          # any byte >= 0x80 can decode to U+FFFD
            return lowest
        floor = _first_lead_cp(lowest)
        cp = None if floor is None else cps.first(floor)
        return None if cp is None else _lead_byte(cp)

    def next_row(self, row: bytes) -> bytes | None:
        """For a row the regex does not match: the smallest later row it might match,
        ``NO_MORE`` when there is none, or None when the next row is no further than that."""
        state = (None, self.initial)
        if self.accept in self.initial:
            return None
        states = [state]
        for b in row:
            state, matched = self._feed(state, b)
            if matched:
                return None
            if not self._alive(state):
                break
            states.append(state)
        else:
            pending, live_states = state
            if pending is not None and self.accept in self._step(live_states, FFFD):
                return None
        for i in range(len(states) - 1, -1, -1):
            lo = row[i] + 1 if i < len(row) else 0
            b = self._first_live_byte(states[i], lo) if lo <= 0xFF else None
            if b is None:
                continue
            if i == len(row):
                return None
            target = bytearray(row[:i])
            target.append(b)
            state, matched = self._feed(states[i], b)
            seen = {state}
            while not matched and len(target) < MAX_ROW:      # the smallest way on: a tighter bound
                b = self._first_live_byte(state, 0)
                if b is None:
                    break
                target.append(b)
                state, matched = self._feed(state, b)
                if state in seen:       # going round a loop (.*): no end to the smallest way
                    break
                seen.add(state)
            return bytes(target)
        return NO_MORE
