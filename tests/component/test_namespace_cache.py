"""The inode cache may go stale when another namenode changes the tree; a stale entry must
cost a fallback to resolution by name, never a wrong answer."""

from __future__ import annotations

import pytest

from hopshive.exceptions import FileNotFound
from tests.support.library import read_file, write_file


@pytest.fixture
def hdfs(namespace):
    return namespace.caller("hdfs")


def test_a_directory_renamed_behind_the_cache_is_not_found_at_its_old_path(namespace, peer_namespace, hdfs):
    other = peer_namespace()
    write_file(namespace, hdfs, "/a/b/c/f", b"old")
    assert read_file(namespace, hdfs, "/a/b/c/f") == b"old"  # caches /a, /a/b, /a/b/c
    assert namespace.resolver._cache, "the first namenode cached nothing"

    assert other.rename(hdfs, "/a/b", "/a/moved") is True
    with pytest.raises(FileNotFound):
        namespace.get_status(hdfs, "/a/b/c/f")
    assert read_file(namespace, hdfs, "/a/moved/c/f") == b"old"


def test_a_path_recreated_behind_the_cache_resolves_to_the_new_inodes(namespace, peer_namespace, hdfs):
    other = peer_namespace()
    write_file(namespace, hdfs, "/a/b/f", b"first")
    old_b = namespace.get_status(hdfs, "/a/b").file_id

    assert other.rename(hdfs, "/a/b", "/a/b-old") is True
    new_b = other.mkdirs(hdfs, "/a/b").id
    assert new_b != old_b
    assert namespace.get_status(hdfs, "/a/b").file_id == new_b
    with pytest.raises(FileNotFound):
        namespace.get_status(hdfs, "/a/b/f")
    # A write through the stale prefix lands in the new directory.
    write_file(namespace, hdfs, "/a/b/f", b"second")
    assert other.list_status(hdfs, "/a/b")[0].file_id == namespace.get_status(hdfs, "/a/b/f").file_id
    assert read_file(namespace, hdfs, "/a/b/f") == b"second"
    assert read_file(namespace, hdfs, "/a/b-old/f") == b"first"


def test_a_directory_swapped_for_a_file_behind_the_cache(namespace, peer_namespace, hdfs):
    other = peer_namespace()
    namespace.mkdirs(hdfs, "/x/y/z")
    assert namespace.get_status(hdfs, "/x/y/z").is_dir
    assert other.delete(hdfs, "/x/y", recursive=True) is True
    write_file(other, hdfs, "/x/y", b"now a file")
    with pytest.raises(FileNotFound):
        namespace.get_status(hdfs, "/x/y/z")
    assert not namespace.get_status(hdfs, "/x/y").is_dir
    # A mutation through the stale prefix must see the file too.
    with pytest.raises(Exception) as refused:
        namespace.mkdirs(hdfs, "/x/y/z/w")
    assert type(refused.value).__name__ in ("ParentNotDirectory", "FileAlreadyExists")


def test_a_directorys_children_are_counted_in_the_resolving_statement_and_stay_right(
        namespace, peer_namespace, hdfs, monkeypatch):
    other = peer_namespace()
    namespace.mkdirs(hdfs, "/d/e")
    write_file(namespace, hdfs, "/d/f", b"x")
    assert namespace.get_status(hdfs, "/d").children_num == 2          # caches /d
    statements = []
    run = type(namespace.db).run

    def counting(db, work, *args, **kwargs):
        def traced(tx):
            original = tx.query, tx.query_one
            tx.query = lambda *a: statements.append(a[0]) or original[0](*a)
            tx.query_one = lambda *a: statements.append(a[0]) or original[1](*a)
            return work(tx)
        return run(db, traced, *args, **kwargs)
    monkeypatch.setattr(type(namespace.db), "run", counting)
    assert namespace.get_status(hdfs, "/d").children_num == 2
    assert namespace.get_status(hdfs, "/d/f").children_num == 0
    assert len(statements) == 2                                      # one statement each
    monkeypatch.undo()
    other.mkdirs(hdfs, "/d/g")                                        # behind this namenode's cache
    assert namespace.get_status(hdfs, "/d").children_num == 3
    other.delete(hdfs, "/d/e", recursive=True)
    assert namespace.get_status(hdfs, "/d").children_num == 2
    assert namespace.get_status(hdfs, "/").children_num == len(namespace.list_status(hdfs, "/"))
