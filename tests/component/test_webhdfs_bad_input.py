"""WebHDFS contract: malformed requests get a clear RemoteException and change nothing.

Where Hadoop and HopsHive legitimately answer with different classes (Hadoop checks some
things in Jersey, on the namenode, or on a datanode), the accepted set names both.
"""

from __future__ import annotations

import json

import pytest

from tests.support.webhdfs import raw_exchange, raw_http, remote_exception

ILLEGAL_ARGUMENT = "java.lang.IllegalArgumentException"
INVALID_PATH = "org.apache.hadoop.fs.InvalidPathException"
BAD_OP = {ILLEGAL_ARGUMENT, "java.lang.UnsupportedOperationException"}
TOO_LONG = {INVALID_PATH, "org.apache.hadoop.hdfs.protocol.FSLimitException$PathComponentTooLongException"}


@pytest.mark.parametrize("method,params", [
    ("GET", {}), ("GET", {"op": "NOSUCHOP"}), ("GET", {"op": "MKDIRS"}), ("DELETE", {"op": "GETFILESTATUS"}),
    ("PUT", {"op": ""})])
def test_missing_invalid_or_misplaced_op_is_a_bad_request(alice, root, method, params):
    response = alice.http.request(method, alice.endpoint(f"{root}/x"), params={"user.name": "alice", **params})
    remote_exception(response, 400, BAD_OP)
    assert alice.listing(root) == {}


@pytest.mark.parametrize("value", ["999", "8", "abc", "-1", "17777", "0x1ff", "rwxr-xr-x"])
def test_invalid_permissions_are_refused(alice, root, value):
    alice.write(f"{root}/f", b"1")
    remote_exception(alice.call("PUT", f"{root}/d", "MKDIRS", permission=value), 400, ILLEGAL_ARGUMENT)
    remote_exception(alice.create(f"{root}/g", b"x", permission=value), 400, ILLEGAL_ARGUMENT)
    remote_exception(alice.call("PUT", f"{root}/f", "SETPERMISSION", permission=value), 400, ILLEGAL_ARGUMENT)
    assert list(alice.listing(root)) == ["f"]
    assert alice.status(f"{root}/f")["permission"] == "644"


@pytest.mark.parametrize("name,value", [("overwrite", "yes"), ("overwrite", "1"), ("recursive", "maybe")])
def test_invalid_booleans_are_refused(alice, root, name, value):
    alice.write(f"{root}/f", b"original")
    if name == "overwrite":
        response = alice.create(f"{root}/f", b"new", overwrite=value)
    else:
        response = alice.call("DELETE", f"{root}/f", "DELETE", recursive=value)
    remote_exception(response, 400, ILLEGAL_ARGUMENT)
    assert alice.read(f"{root}/f") == b"original"


@pytest.mark.parametrize("op,params", [
    ("OPEN", {"offset": "abc"}), ("OPEN", {"offset": "-1"}), ("OPEN", {"length": "1.5"}),
    ("CREATE", {"blocksize": "big"}), ("CREATE", {"replication": "x"}),
    ("GETFILEBLOCKLOCATIONS", {"offset": "-5"})])
def test_invalid_integers_are_refused(alice, root, op, params):
    alice.write(f"{root}/f", b"0123456789")
    if op == "CREATE":
        response = alice.create(f"{root}/g", b"x", **params)
    elif op == "OPEN":
        response = alice.open(f"{root}/f", **params)
    else:
        response = alice.call("GET", f"{root}/f", op, **params)
    remote_exception(response, 400, ILLEGAL_ARGUMENT)
    assert list(alice.listing(root)) == ["f"]


@pytest.mark.parametrize("name", ["a:b", "x:", ":"])
def test_colons_in_names_are_refused(alice, root, name):
    remote_exception(alice.call("PUT", f"{root}/{name}", "MKDIRS"), 400, INVALID_PATH)
    remote_exception(alice.create(f"{root}/{name}", b"x"), 400, INVALID_PATH)
    assert alice.listing(root) == {}


@pytest.mark.parametrize("segment", [".", "..", "%2E%2E", "%2e"])
def test_dot_segments_are_refused_not_normalised(webhdfs, alice, root, segment):
    alice.mkdirs(f"{root}/a")
    response = raw_http(webhdfs.url, "PUT", f"/webhdfs/v1{root}/a/{segment}/b?op=MKDIRS&user.name=alice")
    body = response.read()
    assert response.status == 400, body
    if body:
        assert json.loads(body)["RemoteException"]["javaClassName"] == INVALID_PATH
    assert list(alice.listing(root)) == ["a"] and alice.listing(f"{root}/a") == {}


def test_relative_destinations_are_refused(alice, root):
    alice.write(f"{root}/f", b"1")
    for destination in ("relative/f", "f2", "./f2"):
        response = alice.call("PUT", f"{root}/f", "RENAME", destination=destination)
        remote_exception(response, 400, {ILLEGAL_ARGUMENT, INVALID_PATH})
    assert list(alice.listing(root)) == ["f"]


def test_names_up_to_255_bytes_are_fine_longer_ones_are_refused(alice, root):
    for name in ("n" * 255, "é" * 127 + "n"):  # 255 bytes of UTF-8
        alice.mkdirs(f"{root}/{name}")
    before = sorted(alice.listing(root))
    for name in ("n" * 256, "é" * 128):  # 256 bytes
        response = alice.call("PUT", f"{root}/{name}", "MKDIRS")
        remote_exception(response, {400, 403}, TOO_LONG)
        remote_exception(alice.create(f"{root}/{name}", b"x"), {400, 403}, TOO_LONG)
    assert sorted(alice.listing(root)) == before


def test_bad_utf8_in_the_request_target_is_a_bad_request(webhdfs, alice, root):
    request = f"PUT /webhdfs/v1{root}/".encode() + b"\xff\xfe?op=MKDIRS&user.name=alice HTTP/1.1\r\n" \
        b"Host: namenode\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    answer = raw_exchange(webhdfs.url, request)
    assert answer.startswith(b"HTTP/1.1 400 "), answer
    assert alice.listing(root) == {}


GARBAGE = {
    "random bytes": bytes(range(256)) * 8,
    "no http version": b"GET /webhdfs/v1/?op=LISTSTATUS\r\n\r\n",
    "header without colon": b"GET /webhdfs/v1/?op=LISTSTATUS HTTP/1.1\r\nHost: x\r\nthis is not a header\r\n\r\n",
    "huge header": b"GET /webhdfs/v1/?op=LISTSTATUS HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n",
    "bad chunked body": b"PUT /webhdfs/v1/x?op=CREATE&data=true HTTP/1.1\r\nHost: x\r\n"
                        b"Transfer-Encoding: chunked\r\n\r\nZZZ\r\nnot hex\r\n",
    "half a request": b"GET /webhdfs/v1/?op=LISTST",
}


@pytest.mark.parametrize("kind", sorted(GARBAGE))
def test_garbage_on_the_socket_is_answered_400_or_dropped_and_service_goes_on(webhdfs, alice, root, kind):
    for _ in range(5):
        answer = raw_exchange(webhdfs.url, GARBAGE[kind], half_close=kind == "half a request")
        assert answer == b"" or answer.split(b" ", 2)[1] in (b"400", b"413", b"431"), answer[:200]
    assert alice.status(root)["type"] == "DIRECTORY"
    alice.write(f"{root}/still-serving", b"yes")
    assert alice.read(f"{root}/still-serving") == b"yes"


@pytest.mark.parametrize("op,params", [
    ("CREATE", {"replication": str(2 ** 40)}), ("CREATE", {"replication": "0"}),
    ("CREATE", {"blocksize": str(2 ** 63)}), ("SETTIMES", {"modificationtime": "1e25"}),
    ("SETTIMES", {"accesstime": str(10 ** 25)}), ("SETREPLICATION", {"replication": str(2 ** 40)}),
    ("CREATE", {"replication": " 3 "}), ("CREATE", {"replication": "1_0"}), ("CREATE", {"replication": "٣"}),
    ("OPEN", {"offset": "+1"}), ("MKDIRS", {"permission": "0o755"}), ("MKDIRS", {"permission": " 755"})])
def test_out_of_range_and_loosely_written_numbers_are_refused(alice, root, op, params):
    """400 IllegalArgumentException, never a database error; numbers parse as Java's
    Long.parseLong does (no spaces, underscores, signs other than '-', non-ASCII digits)."""
    alice.write(f"{root}/f", b"0123456789")
    before = alice.status(f"{root}/f")
    if op == "CREATE":
        response = alice.create(f"{root}/g", b"x", **params)
    elif op == "OPEN":
        response = alice.open(f"{root}/f", **params)
    elif op == "MKDIRS":
        response = alice.call("PUT", f"{root}/d", "MKDIRS", **params)
    else:
        response = alice.call("PUT", f"{root}/f", op, **params)
    remote_exception(response, 400, ILLEGAL_ARGUMENT)
    assert list(alice.listing(root)) == ["f"]
    assert alice.status(f"{root}/f") == before


def test_an_overlong_user_name_is_refused(webhdfs, root, ours_only):
    """Hadoop takes any length; our user table holds 100 characters: a clear 400, not a 500."""
    response = webhdfs.client("u" * 101).call("GET", root, "GETFILESTATUS")
    remote_exception(response, 400, ILLEGAL_ARGUMENT)
