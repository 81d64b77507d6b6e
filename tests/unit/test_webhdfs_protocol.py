"""WebHDFS protocol pieces without a server: parameters, request paths, RemoteException
mapping."""

from __future__ import annotations

import json

import pytest

from hopshive import exceptions as e
from hopshive.webhdfs.app import request_path
from hopshive.webhdfs.errors import remote_exception
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
