"""WebHDFS round trips with the two Python clients people use: HdfsCLI and fsspec."""

from __future__ import annotations

import hashlib
import os

import pytest

from harness.support import identity

pytestmark = [pytest.mark.namespace]

MiB = 1 << 20
NAMES = ["plain.txt", "with space.txt", "100%.txt", "k=v.txt", "it's \"q\".txt", "é.txt", "日本.txt"]


def payload(size: int, seed: int = 0) -> bytes:
    """Deterministic, incompressible-looking bytes."""
    out, block = bytearray(), hashlib.sha256(str(seed).encode()).digest()
    while len(out) < size:
        block = hashlib.sha256(block).digest()
        out += block * 64
    return bytes(out[:size])


@pytest.fixture
def hdfscli(targets, webhdfs):
    pytest.importorskip("hdfs")
    return identity.hdfs_client(targets.webhdfs_url, targets.user)


@pytest.fixture
def fs(targets, webhdfs):
    fsspec = pytest.importorskip("fsspec")
    host, _, port = targets.authority.rpartition(":")
    return fsspec.filesystem("webhdfs", host=host, port=int(port or 80), skip_instance_cache=True,
                             use_https=targets.tls, **identity.fsspec_identity(targets.user))


# ------------------------------------------------------------------ HdfsCLI
def test_hdfscli_upload_download_list_rename_delete(hdfscli, workdir, tmp_path):
    local = tmp_path / "in.bin"
    local.write_bytes(payload(300_000, 1))
    hdfscli.makedirs(f"{workdir}/a/b")
    assert hdfscli.upload(f"{workdir}/a/b/in.bin", str(local)) == f"{workdir}/a/b/in.bin"
    for i, name in enumerate(NAMES):
        hdfscli.write(f"{workdir}/a/{name}", data=f"row {i}\n".encode())

    assert sorted(hdfscli.list(f"{workdir}/a")) == sorted(NAMES + ["b"])
    status = hdfscli.status(f"{workdir}/a/b/in.bin")
    assert (status["type"], status["length"]) == ("FILE", 300_000)
    for i, name in enumerate(NAMES):
        with hdfscli.read(f"{workdir}/a/{name}") as reader:
            assert reader.read() == f"row {i}\n".encode(), name

    out = tmp_path / "out.bin"
    hdfscli.download(f"{workdir}/a/b/in.bin", str(out))
    assert out.read_bytes() == local.read_bytes()

    hdfscli.rename(f"{workdir}/a/b", f"{workdir}/moved")
    assert hdfscli.status(f"{workdir}/a/b", strict=False) is None
    assert hdfscli.list(f"{workdir}/moved") == ["in.bin"]
    hdfscli.rename(f"{workdir}/a/日本.txt", f"{workdir}/moved/名前 %=.txt")
    assert sorted(hdfscli.list(f"{workdir}/moved")) == ["in.bin", "名前 %=.txt"]

    assert hdfscli.delete(f"{workdir}/moved/in.bin") is True
    assert hdfscli.delete(f"{workdir}/moved/in.bin") is False
    assert hdfscli.delete(f"{workdir}/a", recursive=True) is True
    assert hdfscli.list(workdir) == ["moved"]


def test_hdfscli_large_file_spans_blocks(hdfscli, webhdfs, workdir):
    data = payload(5 * MiB + 12345, 2)
    path = f"{workdir}/large.bin"
    hdfscli.write(path, data=data, blocksize=MiB)

    blocks = webhdfs.block_locations(path)
    assert [b["length"] for b in blocks] == [MiB] * 5 + [12345]
    assert [b["offset"] for b in blocks] == [i * MiB for i in range(6)]
    with hdfscli.read(path) as reader:
        assert hashlib.sha256(reader.read()).digest() == hashlib.sha256(data).digest()
    # a range that straddles two block boundaries
    with hdfscli.read(path, offset=MiB - 10, length=MiB + 20) as reader:
        assert reader.read() == data[MiB - 10:2 * MiB + 10]
    assert hdfscli.content(path)["length"] == len(data)

    hdfscli.write(path, data=b"tail", append=True)
    with hdfscli.read(path, offset=len(data) - 2) as reader:
        assert reader.read() == data[-2:] + b"tail"


# ------------------------------------------------------------------- fsspec
def test_fsspec_put_get_ls_mv_rm(fs, workdir, tmp_path):
    local = tmp_path / "in.bin"
    local.write_bytes(payload(200_000, 3))
    fs.mkdir(f"{workdir}/d")
    fs.put_file(str(local), f"{workdir}/d/in.bin")
    for name in NAMES:
        with fs.open(f"{workdir}/d/{name}", "wb") as handle:
            handle.write(name.encode())

    listed = {os.path.basename(p) for p in fs.ls(f"{workdir}/d")}
    assert listed == set(NAMES) | {"in.bin"}
    assert fs.info(f"{workdir}/d/in.bin")["size"] == 200_000
    for name in NAMES:
        assert fs.cat_file(f"{workdir}/d/{name}") == name.encode(), name

    out = tmp_path / "out.bin"
    fs.get_file(f"{workdir}/d/in.bin", str(out))
    assert out.read_bytes() == local.read_bytes()
    with fs.open(f"{workdir}/d/in.bin", "rb") as handle:
        handle.seek(150_000)
        assert handle.read(100) == local.read_bytes()[150_000:150_100]

    fs.mv(f"{workdir}/d/é.txt", f"{workdir}/é 2.txt")
    assert fs.cat_file(f"{workdir}/é 2.txt") == "é.txt".encode()
    assert not fs.exists(f"{workdir}/d/é.txt")
    fs.rm(f"{workdir}/d", recursive=True)
    assert not fs.exists(f"{workdir}/d")
    assert [os.path.basename(p) for p in fs.ls(workdir)] == ["é 2.txt"]


def test_fsspec_large_file_written_in_appends(fs, webhdfs, workdir):
    data = payload(12 * MiB + 777, 4)
    path = f"{workdir}/large.bin"
    # fsspec writes webhdfs files as CREATE (empty) then one APPEND per buffered block
    with fs.open(path, "wb", block_size=4 * MiB) as handle:
        for start in range(0, len(data), MiB):
            handle.write(data[start:start + MiB])
    assert fs.info(path)["size"] == len(data)
    assert hashlib.sha256(fs.cat_file(path)).digest() == hashlib.sha256(data).digest()
    assert fs.cat_file(path, start=8 * MiB - 5, end=8 * MiB + 5) == data[8 * MiB - 5:8 * MiB + 5]
    assert sum(b["length"] for b in webhdfs.block_locations(path)) == len(data)


def test_clients_see_each_others_files(hdfscli, fs, workdir):
    hdfscli.write(f"{workdir}/from-hdfscli", data=b"one")
    with fs.open(f"{workdir}/from-fsspec", "wb") as handle:
        handle.write(b"two")
    assert fs.cat_file(f"{workdir}/from-hdfscli") == b"one"
    with hdfscli.read(f"{workdir}/from-fsspec") as reader:
        assert reader.read() == b"two"
    assert sorted(hdfscli.list(workdir)) == sorted(os.path.basename(p) for p in fs.ls(workdir))
