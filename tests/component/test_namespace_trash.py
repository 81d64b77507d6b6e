"""The trash: deletes without skip_trash move to /user/<caller>/.Trash/Current/<path>, name
collisions get a unique suffix, and expunge checkpoints Current and drops old checkpoints."""

from __future__ import annotations

import pytest

import hopshive.namespace.namespace as namespace_module
from hopshive.exceptions import InvalidArgument
from tests.support.library import read_file, write_file

TRASH = "/user/alice/.Trash"


@pytest.fixture
def alice(namespace):
    hdfs = namespace.caller("hdfs")
    namespace.mkdirs(hdfs, "/data", permission=0o777)
    return namespace.caller("alice")


def names(namespace, caller, path) -> list[str]:
    return sorted(s.path_suffix for s in namespace.list_status(caller, path))


def test_a_trashed_file_keeps_its_path_under_current(namespace, alice):
    write_file(namespace, alice, "/data/a/b/f", b"keep me")
    assert namespace.delete(alice, "/data/a/b/f", recursive=False, skip_trash=False) is True
    assert read_file(namespace, alice, f"{TRASH}/Current/data/a/b/f") == b"keep me"
    assert names(namespace, alice, "/data/a/b") == []
    trash = namespace.get_status(alice, f"{TRASH}/Current")
    assert (trash.owner, trash.permission) == ("alice", 0o700)


def test_name_collisions_in_the_trash_get_unique_names(namespace, alice, monkeypatch):
    monkeypatch.setattr(namespace_module, "now_ms", lambda: 1_700_000_000_000)  # all in one millisecond
    for version in range(4):
        write_file(namespace, alice, "/data/f", b"v%d" % version)
        assert namespace.delete(alice, "/data/f", recursive=False, skip_trash=False) is True
    trashed = names(namespace, alice, f"{TRASH}/Current/data")
    assert len(trashed) == 4 and "f" in trashed
    contents = {read_file(namespace, alice, f"{TRASH}/Current/data/{name}") for name in trashed}
    assert contents == {b"v0", b"v1", b"v2", b"v3"}


def test_deleting_inside_the_trash_deletes_for_good(namespace, alice):
    write_file(namespace, alice, "/data/f", b"1")
    namespace.delete(alice, "/data/f", recursive=False, skip_trash=False)
    assert namespace.delete(alice, f"{TRASH}/Current/data/f", recursive=False, skip_trash=False) is True
    assert names(namespace, alice, f"{TRASH}/Current/data") == []
    assert namespace.list_status(alice, f"{TRASH}/Current") != []


def test_the_trash_cannot_be_moved_into_itself(namespace, alice):
    namespace.mkdirs(namespace.caller("hdfs"), "/user/alice")
    namespace.set_owner(namespace.caller("hdfs"), "/user/alice", "alice", None)
    write_file(namespace, alice, "/user/alice/f", b"1")
    with pytest.raises(InvalidArgument):
        namespace.delete(alice, "/user/alice", recursive=True, skip_trash=False)
    assert read_file(namespace, alice, "/user/alice/f") == b"1"


def test_expunge_checkpoints_current_and_drops_old_checkpoints(namespace, alice):
    write_file(namespace, alice, "/data/f", b"recent")
    namespace.delete(alice, "/data/f", recursive=False, skip_trash=False)
    namespace.mkdirs(alice, f"{TRASH}/200101000000/data")
    namespace.set_times(alice, f"{TRASH}/200101000000", mtime=1_000, atime=None)

    removed = namespace.expunge(alice, keep_minutes=60)
    assert "Current checkpointed" in removed and f"{TRASH}/200101000000" in removed
    [checkpoint] = names(namespace, alice, TRASH)
    assert checkpoint != "Current"
    assert read_file(namespace, alice, f"{TRASH}/{checkpoint}/data/f") == b"recent"


def test_two_expunges_in_one_second_make_two_checkpoints(namespace, alice, monkeypatch):
    class FrozenClock:
        time = staticmethod(namespace_module.time.time)

        @staticmethod
        def strftime(pattern):
            return "240101120000"
    monkeypatch.setattr(namespace_module, "time", FrozenClock)
    for content in (b"first", b"second"):
        write_file(namespace, alice, "/data/f", content)
        namespace.delete(alice, "/data/f", recursive=False, skip_trash=False)
        namespace.expunge(alice, keep_minutes=60)
    checkpoints = names(namespace, alice, TRASH)
    assert len(checkpoints) == 2 and all(c.startswith("240101120000") for c in checkpoints), checkpoints
    assert {read_file(namespace, alice, f"{TRASH}/{c}/data/f") for c in checkpoints} == {b"first", b"second"}


def test_expunge_with_no_trash_is_harmless(namespace, alice):
    assert namespace.expunge(alice, keep_minutes=60) == []
