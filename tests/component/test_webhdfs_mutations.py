"""WebHDFS contract: MKDIRS, RENAME (HDFS's original semantics) and DELETE (recursion,
missing paths, the trash)."""

from __future__ import annotations

import pytest

from tests.support.webhdfs import remote_exception


# ---------------------------------------------------------------------- MKDIRS
def test_mkdirs_makes_missing_parents_and_is_idempotent(alice, root):
    alice.mkdirs(f"{root}/a/b/c")
    alice.mkdirs(f"{root}/a/b/c")
    assert alice.status(f"{root}/a/b")["type"] == "DIRECTORY"
    assert list(alice.listing(f"{root}/a/b")) == ["c"]


def test_mkdirs_applies_the_permission_to_the_leaf(alice, root):
    alice.mkdirs(f"{root}/p/q", permission="700")
    assert alice.status(f"{root}/p/q")["permission"] == "700"


def test_mkdirs_over_a_file_is_refused(alice, root):
    alice.write(f"{root}/f", b"data")
    remote_exception(alice.call("PUT", f"{root}/f", "MKDIRS"), 403, "org.apache.hadoop.fs.FileAlreadyExistsException")
    remote_exception(alice.call("PUT", f"{root}/f/sub", "MKDIRS"), 403,
                     "org.apache.hadoop.fs.ParentNotDirectoryException")
    assert alice.read(f"{root}/f") == b"data"


def test_names_with_specials_and_non_ascii_round_trip(alice, root):
    names = ["with space", "per%cent", "q?mark", "hash#", "amp&eq=", "plus+", "ünïcødé", "日本語"]
    for name in names:
        alice.mkdirs(f"{root}/{name}")
    assert sorted(alice.listing(root)) == sorted(names)
    for name in names:
        assert alice.status(f"{root}/{name}")["type"] == "DIRECTORY"


# ---------------------------------------------------------------------- RENAME
def rename(client, src: str, dst: str) -> bool:
    return client.json("PUT", src, "RENAME", destination=dst)["boolean"]


def test_rename_a_file_keeps_its_content_and_id(alice, root):
    alice.write(f"{root}/a", b"content")
    file_id = alice.status(f"{root}/a")["fileId"]
    assert rename(alice, f"{root}/a", f"{root}/b") is True
    assert not alice.exists(f"{root}/a")
    assert alice.read(f"{root}/b") == b"content"
    assert alice.status(f"{root}/b")["fileId"] == file_id


def test_rename_into_an_existing_directory_moves_inside(alice, root):
    alice.mkdirs(f"{root}/src/deep")
    alice.write(f"{root}/src/deep/f", b"1")
    alice.mkdirs(f"{root}/dst")
    assert rename(alice, f"{root}/src", f"{root}/dst") is True
    assert alice.read(f"{root}/dst/src/deep/f") == b"1"
    assert not alice.exists(f"{root}/src")


@pytest.mark.parametrize("case", ["existing file", "missing parent", "inside source", "missing source",
                                  "into itself"])
def test_rename_refusals_answer_false_and_change_nothing(alice, root, case):
    alice.mkdirs(f"{root}/dir/sub")
    alice.write(f"{root}/file", b"keep")
    alice.write(f"{root}/other", b"other")
    src, dst = {
        "existing file": (f"{root}/file", f"{root}/other"),
        "missing parent": (f"{root}/file", f"{root}/nowhere/file"),
        "inside source": (f"{root}/dir", f"{root}/dir/sub/moved"),
        "missing source": (f"{root}/absent", f"{root}/x"),
        "into itself": (f"{root}/dir", f"{root}/dir"),
    }[case]
    before = sorted(alice.listing(root))
    assert rename(alice, src, dst) is False
    assert sorted(alice.listing(root)) == before
    assert alice.read(f"{root}/file") == b"keep" and alice.read(f"{root}/other") == b"other"
    assert list(alice.listing(f"{root}/dir")) == ["sub"]


def test_rename_without_destination_is_a_bad_request(alice, root):
    alice.write(f"{root}/f", b"1")
    remote_exception(alice.call("PUT", f"{root}/f", "RENAME"), 400,
                     {"java.lang.IllegalArgumentException", "org.apache.hadoop.fs.InvalidPathException"})
    assert alice.read(f"{root}/f") == b"1"


# ---------------------------------------------------------------------- DELETE
def test_delete_a_file_and_an_empty_directory(alice, root):
    alice.write(f"{root}/f", b"1")
    alice.mkdirs(f"{root}/empty")
    assert alice.delete(f"{root}/f", recursive=False) is True
    assert alice.delete(f"{root}/empty", recursive=False) is True
    assert alice.listing(root) == {}


def test_delete_recursive_removes_the_subtree(alice, root):
    alice.mkdirs(f"{root}/t/a/b")
    alice.write(f"{root}/t/a/b/f", b"1")
    assert alice.delete(f"{root}/t", recursive=True) is True
    assert not alice.exists(f"{root}/t")
    assert not alice.exists(f"{root}/t/a/b/f")


def test_delete_non_recursive_of_a_non_empty_directory_is_refused(alice, root):
    alice.mkdirs(f"{root}/t")
    alice.write(f"{root}/t/f", b"1")
    response = alice.call("DELETE", f"{root}/t", "DELETE", recursive="false")
    remote_exception(response, 403, "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException")
    assert alice.read(f"{root}/t/f") == b"1"


def test_delete_of_a_missing_path_is_false(alice, root):
    assert alice.json("DELETE", f"{root}/missing", "DELETE") == {"boolean": False}


def test_delete_without_skiptrash_moves_to_the_users_trash(alice, root):
    alice.mkdirs(f"{root}/d")
    alice.write(f"{root}/d/f", b"trash me")
    assert alice.delete(f"{root}/d/f", recursive=False, skiptrash="false") is True
    assert not alice.exists(f"{root}/d/f")
    assert alice.read(f"/user/alice/.Trash/Current{root}/d/f") == b"trash me"


def test_trashing_the_same_name_twice_keeps_both(alice, root):
    for content in (b"one", b"two"):
        alice.write(f"{root}/f", content)
        assert alice.delete(f"{root}/f", skiptrash="false") is True
    trashed = alice.listing(f"/user/alice/.Trash/Current{root}")
    assert len(trashed) == 2 and "f" in trashed
    contents = {alice.read(f"/user/alice/.Trash/Current{root}/{name}") for name in trashed}
    assert contents == {b"one", b"two"}


def test_delete_with_skiptrash_true_bypasses_the_trash(alice, root):
    alice.write(f"{root}/f", b"1")
    assert alice.delete(f"{root}/f", skiptrash="true") is True
    assert not alice.exists(f"/user/alice/.Trash/Current{root}/f")
