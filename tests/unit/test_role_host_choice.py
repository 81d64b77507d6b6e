"""The roles pick "the first host" of a group for once-only work (a schema upgrade, a
bootstrap).  Ansible's set filters (intersect, difference, union, symmetric_difference)
return their items in the order of a Python set, which changes from one run to the next with
the hash seed: a host chosen by ``... | intersect(...) | first`` was nn1 in one run and nn2 in
the next, and under upgrade.yml's serial, nn2 still ran the previous release's schema tool
(CI stop 38).  Order-keeping choices use ``select('in', ...)``."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UNORDERED_CHOICE = re.compile(
    r"\|\s*(intersect|difference|union|symmetric_difference)\([^|}]*\)\s*\|\s*(first|last)\b"
    r"|\|\s*(intersect|difference|union|symmetric_difference)\([^|}]*\)\s*\)?\s*\[\s*-?\d+\s*\]")


def test_no_host_is_chosen_by_position_in_an_unordered_set():
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for folder in ("roles", "playbooks")
             for path in sorted((ROOT / folder).rglob("*.yml"))
             for number, line in enumerate(path.read_text().splitlines(), 1)
             if UNORDERED_CHOICE.search(line)]
    assert not found, "a set filter's order is random; choose with select('in', ...):\n" + "\n".join(found)


def test_the_pattern_finds_what_it_is_for():
    assert UNORDERED_CHOICE.search("{{ groups['nn'] | intersect(ansible_play_hosts_all) | first }}")
    assert UNORDERED_CHOICE.search("{{ (a | difference(b))[0] }}")
    assert not UNORDERED_CHOICE.search("{{ groups['nn'] | select('in', ansible_play_batch) | first }}")
    assert not UNORDERED_CHOICE.search("{{ a | intersect(b) | length > 0 }}")
