"""HDFS path syntax: what split_path accepts and how it splits."""

from __future__ import annotations

import pytest

from hopshive.exceptions import InvalidPath
from hopshive.namespace.paths import MAX_DEPTH, is_ancestor, join, split_path


@pytest.mark.parametrize("path,components", [
    ("/", []), ("//", []), ("/a", ["a"]), ("/a/b/c", ["a", "b", "c"]), ("/a//b/", ["a", "b"]),
    ("/with space/ünï/日本", ["with space", "ünï", "日本"]), ("/.hidden/..x/x..", [".hidden", "..x", "x.."]),
    ("/" + "n" * 255, ["n" * 255]), ("/" + "é" * 127 + "n", ["é" * 127 + "n"]),
])
def test_valid_paths(path, components):
    assert split_path(path) == components
    assert join(components) == ("/" + "/".join(components))


@pytest.mark.parametrize("path,reason", [
    ("", "absolute"), ("a/b", "absolute"), ("relative", "absolute"), (None, "absolute"),
    ("/a/./b", "'.'"), ("/a/../b", "'..'"), ("/..", "'..'"), ("/a:b", "'a:b'"), ("/x/nul\0", "nul"),
    ("/" + "n" * 256, "255 bytes"), ("/" + "é" * 128, "255 bytes"), ("/" + "/d" * (MAX_DEPTH + 1), "deeper"),
    ("/bad\udcff", "UTF-8"),
])
def test_invalid_paths(path, reason):
    with pytest.raises(InvalidPath, match="Invalid path name") as refused:
        split_path(path)
    assert reason.strip("'") in str(refused.value)


@pytest.mark.parametrize("ancestor,path,expected", [
    ([], ["a"], True), (["a"], ["a"], True), (["a"], ["a", "b"], True), (["a", "b"], ["a"], False),
    (["a"], ["ab"], False), (["a", "b"], ["a", "c"], False),
])
def test_is_ancestor(ancestor, path, expected):
    assert is_ancestor(ancestor, path) is expected
