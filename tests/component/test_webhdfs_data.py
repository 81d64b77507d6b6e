"""WebHDFS contract: file data (CREATE, APPEND, OPEN in two steps; GETFILEBLOCKLOCATIONS;
GETFILECHECKSUM).  Block sizes are 1 MiB, Hadoop's smallest by default."""

from __future__ import annotations

import hashlib
import os
import struct

import crc32c
import pytest

from tests.support.webhdfs import remote_exception

BLOCK = 1 << 20
BYTES_PER_CRC = 512


def md5_of_md5_of_crc32c(data: bytes, block_size: int) -> tuple[str, str]:
    """HDFS's file checksum computed from scratch: per 512-byte chunk a CRC32C, per block the
    MD5 of its CRCs, for the file the MD5 of the block MD5s.  Returns (algorithm, hex bytes)."""
    blocks = [data[i:i + block_size] for i in range(0, len(data), block_size)]
    block_md5s = b"".join(
        hashlib.md5(b"".join(struct.pack(">I", crc32c.crc32c(block[i:i + BYTES_PER_CRC]))
                             for i in range(0, len(block), BYTES_PER_CRC))).digest()
        for block in blocks)
    crc_per_block = block_size // BYTES_PER_CRC if len(blocks) > 1 else 0
    value = struct.pack(">IQ", BYTES_PER_CRC, crc_per_block) + hashlib.md5(block_md5s).digest()
    return f"MD5-of-{crc_per_block}MD5-of-{BYTES_PER_CRC}CRC32C", value.hex()


def test_the_reference_crc32c_is_the_castagnoli_polynomial():
    assert crc32c.crc32c(b"123456789") == 0xE3069283


# ---------------------------------------------------------------------- CREATE
def test_create_is_two_steps_and_creates_nothing_before_the_data(alice, root):
    path = f"{root}/new/file"
    location = alice.redirected("PUT", path, "CREATE", overwrite="false")
    assert not alice.exists(path)
    response = alice.send("PUT", location, b"payload")
    assert response.status_code == 201, response.text
    assert alice.read(path) == b"payload"
    assert alice.status(f"{root}/new")["type"] == "DIRECTORY"  # missing parents are made


def test_create_data_url_tolerates_extra_parameters(alice, root):
    location = alice.redirected("PUT", f"{root}/f", "CREATE")
    response = alice.send("PUT", location + "&offset=0&foo=bar", b"abc")
    assert response.status_code == 201, response.text
    assert alice.read(f"{root}/f") == b"abc"


def test_create_applies_permission_replication_and_blocksize(alice, root):
    alice.write(f"{root}/f", b"x", permission="600", replication=1, blocksize=BLOCK)
    status = alice.status(f"{root}/f")
    assert (status["permission"], status["replication"], status["blockSize"]) == ("600", 1, BLOCK)


def test_create_overwrite_replaces_the_content(alice, root):
    alice.write(f"{root}/f", b"first version")
    alice.write(f"{root}/f", b"second", overwrite="true")
    assert alice.read(f"{root}/f") == b"second"


def test_create_without_overwrite_conflicts_and_keeps_the_file(alice, root):
    alice.write(f"{root}/f", b"original")
    response = alice.create(f"{root}/f", b"intruder", overwrite="false")
    remote_exception(response, 403, "org.apache.hadoop.fs.FileAlreadyExistsException")
    assert alice.read(f"{root}/f") == b"original"


def test_create_over_a_directory_is_refused(alice, root):
    alice.mkdirs(f"{root}/d/inner")
    response = alice.create(f"{root}/d", b"data", overwrite="true")
    remote_exception(response, 403, "org.apache.hadoop.fs.FileAlreadyExistsException")
    assert alice.status(f"{root}/d")["type"] == "DIRECTORY"
    assert list(alice.listing(f"{root}/d")) == ["inner"]


def test_create_under_a_file_is_refused(alice, root):
    alice.write(f"{root}/f", b"data")
    response = alice.create(f"{root}/f/child", b"x")
    remote_exception(response, 403, {"org.apache.hadoop.fs.ParentNotDirectoryException",
                                      "org.apache.hadoop.fs.FileAlreadyExistsException"})
    assert alice.read(f"{root}/f") == b"data"


def test_an_empty_file(alice, root):
    alice.write(f"{root}/empty", b"")
    assert alice.status(f"{root}/empty")["length"] == 0
    assert alice.read(f"{root}/empty") == b""


# ---------------------------------------------------------------------- APPEND
def test_append_is_two_steps_and_answers_200(alice, root):
    alice.write(f"{root}/f", b"hello ")
    location = alice.redirected("POST", f"{root}/f", "APPEND")
    response = alice.send("POST", location, b"world")
    assert response.status_code == 200, response.text
    assert alice.read(f"{root}/f") == b"hello world"
    assert alice.status(f"{root}/f")["length"] == 11


def test_appends_across_block_boundaries(alice, root):
    first, second, third = os.urandom(BLOCK // 2 + 100), os.urandom(BLOCK), os.urandom(BLOCK // 2 + 5000)
    alice.write(f"{root}/f", first, blocksize=BLOCK)
    for part in (second, third):
        assert alice.append(f"{root}/f", part).status_code == 200
    data = first + second + third
    assert alice.read(f"{root}/f") == data
    blocks = alice.json("GET", f"{root}/f", "GETFILEBLOCKLOCATIONS")["BlockLocations"]["BlockLocation"]
    assert [(b["offset"], b["length"]) for b in blocks] == \
        [(0, BLOCK), (BLOCK, BLOCK), (2 * BLOCK, len(data) - 2 * BLOCK)]


def test_append_to_a_missing_file_is_404(alice, root):
    remote_exception(alice.append(f"{root}/missing", b"x"), 404, "java.io.FileNotFoundException")
    assert not alice.exists(f"{root}/missing")


# ------------------------------------------------------------------------ OPEN
def test_open_is_a_redirect_then_the_data(alice, root):
    alice.write(f"{root}/f", b"0123456789")
    location = alice.redirected("GET", f"{root}/f", "OPEN")
    response = alice.http.get(location)
    assert (response.status_code, response.content) == (200, b"0123456789")


@pytest.mark.parametrize("params,expected", [
    ({"offset": 3}, b"3456789"), ({"offset": 3, "length": 4}, b"3456"), ({"length": 2}, b"01"),
    ({"offset": 9, "length": 100}, b"9"), ({"offset": 0, "length": 0}, b"")])
def test_open_with_offset_and_length(alice, root, params, expected):
    alice.write(f"{root}/f", b"0123456789")
    assert alice.read(f"{root}/f", **params) == expected


def test_open_across_blocks_with_offset(alice, root):
    data = os.urandom(2 * BLOCK + 1234)
    alice.write(f"{root}/f", data, blocksize=BLOCK)
    assert alice.read(f"{root}/f", offset=BLOCK - 10, length=BLOCK + 20) == data[BLOCK - 10:2 * BLOCK + 10]
    assert alice.read(f"{root}/f") == data


@pytest.mark.parametrize("offset", [10, 11, 1000])
def test_open_at_or_beyond_the_end_is_an_error(alice, root, offset):
    alice.write(f"{root}/f", b"0123456789")
    message = remote_exception(alice.open(f"{root}/f", offset=offset), 403, "java.io.IOException")
    assert f"Offset={offset}" in message


def test_open_of_a_directory_or_missing_file_is_404(alice, root):
    remote_exception(alice.open(root), 404, "java.io.FileNotFoundException")
    remote_exception(alice.open(f"{root}/missing"), 404, "java.io.FileNotFoundException")


# ------------------------------------------------------- GETFILEBLOCKLOCATIONS
def test_block_locations_format_and_ranges(alice, root):
    data = os.urandom(2 * BLOCK + 500)
    alice.write(f"{root}/f", data, blocksize=BLOCK)
    located = alice.json("GET", f"{root}/f", "GETFILEBLOCKLOCATIONS")["BlockLocations"]["BlockLocation"]
    assert [(b["offset"], b["length"]) for b in located] == [(0, BLOCK), (BLOCK, BLOCK), (2 * BLOCK, 500)]
    for block in located:
        assert {"hosts", "names", "topologyPaths", "offset", "length", "corrupt", "cachedHosts",
                "storageTypes"} <= block.keys()
        assert block["hosts"] and block["names"] and block["corrupt"] is False
        assert all(":" in name for name in block["names"])
    middle = alice.json("GET", f"{root}/f", "GETFILEBLOCKLOCATIONS", offset=BLOCK + 1, length=10)
    assert [b["offset"] for b in middle["BlockLocations"]["BlockLocation"]] == [BLOCK]


# ------------------------------------------------------------ GETFILECHECKSUM
def checksum(client, path: str) -> dict:
    response = client.call("GET", path, "GETFILECHECKSUM", redirect=True)  # Hadoop redirects to a datanode
    assert response.status_code == 200, response.text
    return response.json()["FileChecksum"]


@pytest.mark.parametrize("size", [0, 1, 511, 512, 4097, BLOCK, 2 * BLOCK + 777])
def test_checksum_is_md5_of_md5_of_crc32c(alice, root, size):
    data = os.urandom(size)
    alice.write(f"{root}/f", data, blocksize=BLOCK)
    result = checksum(alice, f"{root}/f")
    assert result["length"] == 28 and len(result["bytes"]) == 56
    assert (result["algorithm"], result["bytes"]) == md5_of_md5_of_crc32c(data, BLOCK)


def test_equal_files_have_equal_checksums(alice, root):
    data = os.urandom(BLOCK + 3000)
    alice.write(f"{root}/a", data, blocksize=BLOCK)
    alice.write(f"{root}/b", data[:1000], blocksize=BLOCK)
    alice.append(f"{root}/b", data[1000:])
    alice.write(f"{root}/c", data[:-1] + bytes([data[-1] ^ 1]), blocksize=BLOCK)
    assert checksum(alice, f"{root}/a") == checksum(alice, f"{root}/b")
    assert checksum(alice, f"{root}/a")["bytes"] != checksum(alice, f"{root}/c")["bytes"]
