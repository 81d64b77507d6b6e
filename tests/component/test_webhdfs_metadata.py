"""WebHDFS contract: metadata reads and attribute changes (GETFILESTATUS, LISTSTATUS,
LISTSTATUS_BATCH, GETCONTENTSUMMARY, GETHOMEDIRECTORY, GETTRASHROOT, GETSERVERDEFAULTS,
SETPERMISSION, SETOWNER, SETTIMES), and the protocol's leniencies."""

from __future__ import annotations

import pytest

from tests.support.webhdfs import assert_no_content_type, in_parallel, remote_exception

FILE_STATUS_FIELDS = {"pathSuffix", "type", "length", "owner", "group", "permission", "accessTime",
                      "modificationTime", "blockSize", "replication", "fileId", "childrenNum"}


def test_getfilestatus_of_a_directory_and_a_file(alice, root):
    alice.mkdirs(f"{root}/dir")
    alice.write(f"{root}/dir/file", b"x" * 1000, replication=1)

    directory = alice.status(f"{root}/dir")
    assert FILE_STATUS_FIELDS <= directory.keys()
    assert (directory["pathSuffix"], directory["type"], directory["length"]) == ("", "DIRECTORY", 0)
    assert (directory["owner"], directory["permission"], directory["childrenNum"]) == ("alice", "755", 1)

    file = alice.status(f"{root}/dir/file")
    assert (file["pathSuffix"], file["type"], file["length"]) == ("", "FILE", 1000)
    assert (file["owner"], file["permission"], file["replication"]) == ("alice", "644", 1)
    assert file["blockSize"] > 0 and file["fileId"] != directory["fileId"]
    for field in ("accessTime", "modificationTime", "fileId"):
        assert isinstance(file[field], int) and file[field] > 0, (field, file)


def test_getfilestatus_of_a_missing_path_is_404(alice, root):
    remote_exception(alice.call("GET", f"{root}/missing", "GETFILESTATUS"), 404, "java.io.FileNotFoundException")


def test_liststatus_lists_children_in_name_order(alice, root):
    for name in ("b", "a", "c"):
        alice.mkdirs(f"{root}/{name}")
    alice.write(f"{root}/file", b"abc")
    statuses = alice.json("GET", root, "LISTSTATUS")["FileStatuses"]["FileStatus"]
    assert [s["pathSuffix"] for s in statuses] == ["a", "b", "c", "file"]
    assert [s["type"] for s in statuses] == ["DIRECTORY"] * 3 + ["FILE"]
    assert statuses[-1]["length"] == 3


def test_liststatus_of_a_file_is_the_file_itself(alice, root):
    alice.write(f"{root}/file", b"abc")
    [status] = alice.json("GET", f"{root}/file", "LISTSTATUS")["FileStatuses"]["FileStatus"]
    assert (status["pathSuffix"], status["length"]) == ("", 3)


def test_liststatus_batch_pages_through_more_than_1000_entries(webhdfs, alice, root):
    names = sorted(f"d{i:05d}" for i in range(1005))
    in_parallel(webhdfs, "alice", lambda client, name: client.mkdirs(f"{root}/{name}"), names)

    seen, start, pages = [], None, 0
    while True:
        params = {"startAfter": start} if start else {}
        listing = alice.json("GET", root, "LISTSTATUS_BATCH", **params)["DirectoryListing"]
        page = [s["pathSuffix"] for s in listing["partialListing"]["FileStatuses"]["FileStatus"]]
        pages += 1
        assert page == sorted(page) and page, listing["remainingEntries"]
        seen += page
        if not listing["remainingEntries"]:
            break
        assert len(page) <= 1000
        start = page[-1]
    assert seen == names
    assert pages >= 2


def test_content_summary_counts_the_whole_subtree(alice, root):
    alice.mkdirs(f"{root}/t/a/b")
    alice.write(f"{root}/t/f1", b"x" * 10, replication=1)
    alice.write(f"{root}/t/a/b/f2", b"y" * 32, replication=1)
    summary = alice.json("GET", f"{root}/t", "GETCONTENTSUMMARY")["ContentSummary"]
    assert (summary["directoryCount"], summary["fileCount"], summary["length"]) == (3, 2, 42)
    assert summary["spaceConsumed"] == 42
    assert summary["quota"] == -1 and summary["spaceQuota"] == -1


def test_home_directory_and_trash_root_belong_to_the_caller(alice, bob, root):
    assert alice.json("GET", "/", "GETHOMEDIRECTORY") == {"Path": "/user/alice"}
    assert bob.json("GET", "/", "GETHOMEDIRECTORY") == {"Path": "/user/bob"}
    assert alice.json("GET", root, "GETTRASHROOT") == {"Path": "/user/alice/.Trash"}


def test_server_defaults_have_an_integer_checksum_type(alice):
    defaults = alice.json("GET", "/", "GETSERVERDEFAULTS")["FsServerDefaults"]
    assert isinstance(defaults["checksumType"], int)
    for field in ("blockSize", "bytesPerChecksum", "replication", "writePacketSize", "fileBufferSize"):
        assert isinstance(defaults[field], int) and defaults[field] > 0, (field, defaults)


# ------------------------------------------------------------------ attributes
def test_setpermission_changes_the_mode_and_keeps_the_sticky_bit(alice, root):
    alice.mkdirs(f"{root}/d")
    alice.chmod(f"{root}/d", "1777")
    assert alice.status(f"{root}/d")["permission"] == "1777"
    alice.chmod(f"{root}/d", "700")
    assert alice.status(f"{root}/d")["permission"] == "700"


def test_setpermission_by_a_non_owner_is_refused(alice, bob, root):
    alice.mkdirs(f"{root}/d")
    response = bob.call("PUT", f"{root}/d", "SETPERMISSION", permission="777")
    remote_exception(response, 403, "org.apache.hadoop.security.AccessControlException")
    assert alice.status(f"{root}/d")["permission"] == "755"


def test_setowner_by_the_superuser_and_refused_for_others(webhdfs, alice, bob, root):
    alice.write(f"{root}/f", b"1")
    remote_exception(alice.call("PUT", f"{root}/f", "SETOWNER", owner="bob"), 403,
                     "org.apache.hadoop.security.AccessControlException")
    assert alice.status(f"{root}/f")["owner"] == "alice"
    webhdfs.admin.chown(f"{root}/f", "bob", "staff")
    status = alice.status(f"{root}/f")
    assert (status["owner"], status["group"]) == ("bob", "staff")
    webhdfs.admin.chown(f"{root}/f", group="other")
    assert (alice.status(f"{root}/f")["owner"], alice.status(f"{root}/f")["group"]) == ("bob", "other")


def test_settimes_sets_either_time_and_minus_one_keeps_it(alice, root):
    alice.write(f"{root}/f", b"1")
    before = alice.status(f"{root}/f")
    response = alice.call("PUT", f"{root}/f", "SETTIMES", modificationtime=1_000_000, accesstime=-1)
    assert response.status_code == 200, response.text
    after = alice.status(f"{root}/f")
    assert (after["modificationTime"], after["accessTime"]) == (1_000_000, before["accessTime"])
    assert alice.call("PUT", f"{root}/f", "SETTIMES", accesstime=2_000_000).status_code == 200
    assert alice.status(f"{root}/f")["accessTime"] == 2_000_000


# --------------------------------------------------------------- leniencies
@pytest.mark.parametrize("spelling", ["true", "True", "TRUE", "tRuE"])
def test_booleans_are_accepted_in_any_case(alice, root, spelling):
    alice.write(f"{root}/f", b"old")
    alice.write(f"{root}/f", b"new", overwrite=spelling)
    assert alice.read(f"{root}/f") == b"new"
    alice.mkdirs(f"{root}/d/e")
    assert alice.json("DELETE", f"{root}/d", "DELETE", recursive=spelling) == {"boolean": True}


def test_unknown_parameters_are_ignored(alice, root):
    alice.mkdirs(f"{root}/d", foo="bar", **{"x.y": "1", "noredirect": "false"})
    assert alice.json("GET", f"{root}/d", "GETFILESTATUS", whatever="1")["FileStatus"]["type"] == "DIRECTORY"


@pytest.mark.parametrize("method,op,where,status", [
    ("GET", "GETFILESTATUS", "", 200), ("GET", "LISTSTATUS", "", 200), ("GET", "GETCONTENTSUMMARY", "", 200),
    ("GET", "GETHOMEDIRECTORY", "", 200), ("PUT", "MKDIRS", "/new", 200), ("DELETE", "DELETE", "/absent", 200),
    ("GET", "GETFILESTATUS", "/absent", 404), ("PUT", "SETPERMISSION", "/absent", 404),
    ("GET", "GETFILEBLOCKLOCATIONS", "", 404)])
def test_json_answers_carry_no_content_type(alice, root, method, op, where, status):
    response = alice.call(method, root + where, op)
    assert response.status_code == status, response.text
    assert_no_content_type(response)
    assert isinstance(response.json(), dict)
