"""WebHDFS protocol pieces without a server: parameters, request paths, RemoteException
mapping, the front's request parser."""

from __future__ import annotations

import json

import pytest

from hopshive import exceptions as e
from hopshive.webhdfs.app import request_path
from hopshive.webhdfs.errors import remote_exception
from hopshive.webhdfs.front import parse
from hopshive.webhdfs.params import Params


@pytest.mark.parametrize("raw,expected", [
    ("true", True), ("True", True), ("TRUE", True), ("false", False), ("False", False), (None, None)])
def test_booleans_in_any_case(raw, expected):
    params = Params({} if raw is None else {"overwrite": raw})
    assert params.boolean("overwrite", None) is expected


@pytest.mark.parametrize("raw", ["yes", "1", "t", " true"])
def test_invalid_booleans(raw):
    with pytest.raises(e.InvalidArgument, match='"overwrite"'):
        Params({"overwrite": raw}).boolean("overwrite", False)


def test_parameter_names_are_case_insensitive_and_empty_means_absent():
    params = Params({"OP": "MKDIRS", "Permission": "700", "owner": ""})
    assert (params.text("op"), params.permission(), params.text("owner", "default")) == ("MKDIRS", 0o700, "default")


@pytest.mark.parametrize("raw,expected", [("0", 0), ("755", 0o755), ("1777", 0o1777), ("0644", 0o644)])
def test_permissions(raw, expected):
    assert Params({"permission": raw}).permission() == expected


@pytest.mark.parametrize("raw", ["8", "999", "abc", "-1", "17777", "2000", "0x1ff"])
def test_invalid_permissions(raw):
    with pytest.raises(e.InvalidArgument, match="not an octal permission"):
        Params({"permission": raw}).permission()


@pytest.mark.parametrize("raw,minimum", [("abc", None), ("1.5", None), ("-1", 0), ("100", 512)])
def test_invalid_integers(raw, minimum):
    with pytest.raises(e.InvalidArgument):
        Params({"offset": raw}).integer("offset", 0, minimum=minimum)


@pytest.mark.parametrize("target,path", [
    ("/webhdfs/v1/a/b?op=LISTSTATUS", "/a/b"), ("/webhdfs/v1?op=GETFILESTATUS", "/"),
    ("/webhdfs/v1/with%20space/q%3Fmark", "/with space/q?mark"),
    ("/webhdfs/v1/" + "日本".encode().decode("utf-8", "surrogateescape"), "/日本"),  # raw UTF-8 from Hadoop
    ("/webhdfs/v1/%E6%97%A5", "/日"), ("/webhdfs/v1/per%25cent", "/per%cent"),
])
def test_request_paths(target, path):
    assert request_path(target) == path


def test_request_paths_must_be_utf8():
    with pytest.raises(UnicodeDecodeError):
        request_path("/webhdfs/v1/%FF%FE")


@pytest.mark.parametrize("error,status,java", [
    (e.FileNotFound("x"), 404, "java.io.FileNotFoundException"),
    (e.FileAlreadyExists("x"), 403, "org.apache.hadoop.fs.FileAlreadyExistsException"),
    (e.PathIsNotEmptyDirectory("x"), 403, "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException"),
    (e.AccessDenied("x"), 403, "org.apache.hadoop.security.AccessControlException"),
    (e.InvalidPath("x"), 400, "org.apache.hadoop.fs.InvalidPathException"),
    (e.InvalidArgument("x"), 400, "java.lang.IllegalArgumentException"),
    (e.SubtreeLocked("x"), 403, "io.hops.exception.SubtreeLockedException"),
    (e.AlreadyBeingCreated("x"), 403, "org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException"),
    (e.NamespaceError("x"), 403, "java.io.IOException"),
    (RuntimeError("secret detail"), 500, "java.io.IOException"),
])
def test_remote_exceptions(error, status, java):
    response = remote_exception(error)
    body = json.loads(response.body)["RemoteException"]
    assert (response.status, body["javaClassName"], body["exception"]) == (status, java, java.rsplit(".", 1)[1])
    assert ("secret detail" not in body["message"]) if status == 500 else body["message"] == "x"


# ------------------------------------------------------------------ the front's request parser
HEAD = b"GET /webhdfs/v1/a?op=GETFILESTATUS&user.name=hdfs HTTP/1.1\r\nHost: x\r\n"


def parsed(data: bytes, max_body: int = 100):
    return parse(bytearray(data), max_body, "127.0.0.1")


def test_the_front_takes_a_plain_request_and_says_how_long_it_was():
    request, length = parsed(HEAD + b"\r\n" + b"GET /next")
    assert (request.method, request.raw_path, length) == ("GET", "/webhdfs/v1/a?op=GETFILESTATUS&user.name=hdfs",
                                                          len(HEAD) + 2)
    assert dict(request.query) == {"op": "GETFILESTATUS", "user.name": "hdfs"}
    assert request.content_length is None and not request.close


def test_the_front_reads_raw_utf8_targets_and_small_bodies():
    data = ("PUT /webhdfs/v1/日本?op=CREATE&data=true HTTP/1.1\r\nHost: x\r\n"
            "Content-Length: 5\r\nConnection: close\r\n\r\nhello!").encode()
    request, length = parsed(data)
    assert request_path(request.raw_path) == "/日本"
    assert (request.content_length, request.close) == (5, True)
    assert data[length - 5:] == b"hello!"


@pytest.mark.parametrize("data", [b"", b"GE", b"GET /webhdfs/v1/a?op=X HTTP/1.1\r\nHo", HEAD,
                                  HEAD.replace(b"Host", b"Content-Length: 9\r\nHost") + b"\r\nabc"])
def test_the_front_waits_for_the_rest_of_a_request(data):
    assert parsed(data) is None


@pytest.mark.parametrize("data", [
    bytes(range(256)) * 8,                                                    # not HTTP at all
    b"GET /webhdfs/v1/a?op=X HTTP/1.0\r\nHost: x\r\n\r\n",                   # HTTP/1.0
    b"GET /webhdfs/v1/a?op=X\r\n\r\n",                                        # no version
    b"OPTIONS /webhdfs/v1/a HTTP/1.1\r\nHost: x\r\n\r\n",                    # a method it does not serve
    b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n",                              # not under /webhdfs/v1
    b"GET /webhdfs/v1/a\x01b?op=X HTTP/1.1\r\nHost: x\r\n\r\n",              # a control character
    b"GET /webhdfs/v1/a?op=X HTTP/1.1\r\n\r\n",                              # no Host
    HEAD + b"Transfer-Encoding: chunked\r\n\r\n",
    HEAD + b"Expect: 100-continue\r\n\r\n",
    HEAD + b"Upgrade: h2c\r\n\r\n",
    HEAD + b" folded: line\r\n\r\n",                                          # obs-fold
    HEAD + b"not a header\r\n\r\n",
    HEAD + b"Content-Length: 1\r\nContent-Length: 1\r\n\r\nab",
    HEAD + b"Content-Length: -1\r\n\r\n",
    HEAD + b"Content-Length: 101\r\n\r\n" + b"x" * 101,                    # over max_body
    HEAD + b"X-Big: " + b"a" * 20_000 + b"\r\n\r\n",
])
def test_the_front_hands_everything_else_to_aiohttp(data):
    assert parsed(data) is False
