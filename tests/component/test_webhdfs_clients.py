"""WebHDFS contract through real clients nobody here wrote: HdfsCLI (`hdfs`) and fsspec's
webhdfs implementation."""

from __future__ import annotations

import os
from urllib.parse import unquote, urlsplit

import fsspec
import hdfs
import pytest


@pytest.fixture
def hdfscli(webhdfs):
    return hdfs.InsecureClient(webhdfs.url, user="alice")


@pytest.fixture
def fs(webhdfs):
    url = urlsplit(webhdfs.url)
    return fsspec.filesystem("webhdfs", host=url.hostname, port=url.port, user="alice",
                             skip_instance_cache=True)


# --------------------------------------------------------------------- HdfsCLI
def test_hdfscli_write_read_list_status(hdfscli, root):
    hdfscli.write(f"{root}/dir/a.txt", data=b"alpha\nbeta\n")
    hdfscli.write(f"{root}/dir/b.txt", data=(chunk for chunk in [b"one", b"two", b"three"]))  # chunked
    with hdfscli.read(f"{root}/dir/a.txt", encoding="utf-8") as reader:
        assert reader.read() == "alpha\nbeta\n"
    with hdfscli.read(f"{root}/dir/b.txt", offset=3, length=3) as reader:
        assert reader.read() == b"two"
    assert hdfscli.list(f"{root}/dir") == ["a.txt", "b.txt"]
    status = hdfscli.status(f"{root}/dir/b.txt")
    assert (status["type"], status["length"], status["owner"]) == ("FILE", 11, "alice")
    assert hdfscli.status(f"{root}/missing", strict=False) is None
    content = hdfscli.content(f"{root}/dir")
    assert (content["fileCount"], content["length"]) == (2, 22)


def test_hdfscli_append_rename_delete(hdfscli, root):
    hdfscli.write(f"{root}/f", data=b"start")
    hdfscli.write(f"{root}/f", data=b"+more", append=True)
    hdfscli.makedirs(f"{root}/sub")
    hdfscli.rename(f"{root}/f", f"{root}/sub")
    with hdfscli.read(f"{root}/sub/f") as reader:
        assert reader.read() == b"start+more"
    assert hdfscli.delete(f"{root}/sub", recursive=True) is True
    assert hdfscli.delete(f"{root}/sub") is False


def test_hdfscli_upload_download_walk(hdfscli, root, tmp_path):
    local = tmp_path / "tree"
    (local / "x").mkdir(parents=True)
    (local / "top.bin").write_bytes(os.urandom(300_000))
    (local / "x" / "inner.txt").write_text("inner")
    hdfscli.upload(f"{root}/tree", str(local))
    walked = {path: sorted(files) for path, _, files in hdfscli.walk(f"{root}/tree")}
    assert walked == {f"{root}/tree": ["top.bin"], f"{root}/tree/x": ["inner.txt"]}
    hdfscli.download(f"{root}/tree", str(tmp_path / "back"))
    assert (tmp_path / "back" / "top.bin").read_bytes() == (local / "top.bin").read_bytes()
    assert (tmp_path / "back" / "x" / "inner.txt").read_text() == "inner"


@pytest.mark.parametrize("name", ["日本", "é", "with space", "100%", "k=v"])
def test_small_files_with_odd_names_round_trip(hdfscli, alice, root, name):
    """A small file is answered whole in one request: its 201 still names it, percent-encoded
    as HDFS's Location does, and the client never waits on an answer that was not sent."""
    hdfscli.write(f"{root}/{name}/{name}.txt", data=name.encode())
    with hdfscli.read(f"{root}/{name}/{name}.txt") as reader:
        assert reader.read() == name.encode()
    created = alice.create(f"{root}/{name}/again.txt", name.encode())
    assert created.status_code == 201, created.text
    location = created.headers["Location"]
    assert location.isascii() and unquote(urlsplit(location).path) == f"{root}/{name}/again.txt", location


def test_hdfscli_errors_and_attributes(hdfscli, root):
    hdfscli.write(f"{root}/f", data=b"1")
    with pytest.raises(hdfs.HdfsError, match="already exists"):
        hdfscli.write(f"{root}/f", data=b"2")
    with pytest.raises(hdfs.HdfsError, match="does not exist|not found"):
        with hdfscli.read(f"{root}/missing") as reader:
            reader.read()
    hdfscli.set_permission(f"{root}/f", "600")
    hdfscli.set_times(f"{root}/f", modification_time=123_000)
    status = hdfscli.status(f"{root}/f")
    assert (status["permission"], status["modificationTime"]) == ("600", 123_000)
    checksum = hdfscli.checksum(f"{root}/f")
    assert checksum["length"] == 28 and checksum["algorithm"].endswith("CRC32C")


# ---------------------------------------------------------------------- fsspec
def test_fsspec_pipe_cat_ls_info(fs, root):
    fs.pipe(f"{root}/a/one", b"1" * 10)
    fs.pipe(f"{root}/a/two", b"2" * 20)
    assert fs.cat(f"{root}/a/two") == b"2" * 20
    assert fs.ls(f"{root}/a") == [f"{root}/a/one", f"{root}/a/two"]
    info = fs.info(f"{root}/a/one")
    assert (info["type"], info["size"]) == ("file", 10)
    assert fs.isdir(f"{root}/a") and fs.exists(f"{root}/a/one") and not fs.exists(f"{root}/a/three")
    assert fs.du(f"{root}/a") == 30


def test_fsspec_writes_in_appended_chunks_and_reads_with_seeks(fs, root):
    data = os.urandom(3 * 65536 + 123)
    with fs.open(f"{root}/big", "wb", block_size=65536) as handle:  # CREATE then several APPENDs
        for i in range(0, len(data), 10_000):
            handle.write(data[i:i + 10_000])
    with fs.open(f"{root}/big", "rb", block_size=4096) as handle:
        handle.seek(100_000)
        assert handle.read(5000) == data[100_000:105_000]
        handle.seek(-50, os.SEEK_END)
        assert handle.read() == data[-50:]
    assert fs.cat_file(f"{root}/big", start=7, end=70) == data[7:70]


def test_fsspec_mv_rm_mkdir_chmod(fs, root):
    fs.makedirs(f"{root}/d/e", exist_ok=True)
    fs.pipe(f"{root}/d/e/f", b"x")
    fs.mv(f"{root}/d/e/f", f"{root}/d/g")
    assert fs.cat(f"{root}/d/g") == b"x"
    fs.chmod(f"{root}/d/g", "600")  # fsspec sends an int in decimal, which no namenode accepts
    assert fs.info(f"{root}/d/g")["permission"] == "600"
    with pytest.raises(FileNotFoundError):
        fs.info(f"{root}/d/e/f")
    fs.rm(f"{root}/d", recursive=True)
    assert not fs.exists(f"{root}/d")


def test_fsspec_permission_errors(webhdfs, fs, root):
    url = urlsplit(webhdfs.url)
    bob = fsspec.filesystem("webhdfs", host=url.hostname, port=url.port, user="bob", skip_instance_cache=True)
    fs.pipe(f"{root}/f", b"alice")
    with pytest.raises(PermissionError):
        bob.rm(f"{root}/f")
    with pytest.raises(PermissionError):
        bob.mkdir(f"{root}/bobs")
    assert fs.cat(f"{root}/f") == b"alice"
