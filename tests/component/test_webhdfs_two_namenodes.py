"""Two namenode processes on one database, each with a block directory of its own: a file
written through one is read through the other (redirected to the block holder), and a file
whose blocks lie on both (appended through each) reads whole through either."""

from __future__ import annotations

import pytest
import requests
from hdfs import InsecureClient

from tests.support.namenode import NamenodeServer

BLOCK = 1 << 20


@pytest.fixture
def pair(db, tmp_path):
    servers = [NamenodeServer(tmp_path / f"nn{i}", db.config, workers=1, small_file_limit=0).start() for i in (1, 2)]
    yield servers
    for server in servers:
        assert server.stop() == 0, server.log_tail()


def test_a_file_written_through_one_namenode_reads_through_the_other(pair):
    first, second = pair
    data = bytes(range(256)) * 4096 * 3                    # 3 MiB: three blocks on the first
    InsecureClient(first.url, user="hdfs").write("/two/f", data, overwrite=True, blocksize=BLOCK)
    reader = InsecureClient(second.url, user="hdfs")
    with reader.read("/two/f") as handle:
        assert handle.read() == data
    with reader.read("/two/f", offset=BLOCK - 10, length=20) as handle:
        assert handle.read() == data[BLOCK - 10:BLOCK + 10]
    redirect = requests.get(f"{second.url}/webhdfs/v1/two/f", params={"op": "OPEN", "user.name": "hdfs"},
                            allow_redirects=False, timeout=10)
    assert redirect.status_code == 307
    assert redirect.headers["Location"].startswith(f"http://{first.address}/"), "to the block holder"


def test_blocks_on_both_namenodes_read_whole_through_either(pair):
    first, second = pair
    part = b"a" * (BLOCK + 5)
    InsecureClient(first.url, user="hdfs").write("/two/g", part, overwrite=True, blocksize=BLOCK)
    InsecureClient(second.url, user="hdfs").write("/two/g", b"b" * 1000, append=True)
    holders = {b["names"][0] for b in requests.get(
        f"{first.url}/webhdfs/v1/two/g", params={"op": "GETFILEBLOCKLOCATIONS", "user.name": "hdfs"},
        timeout=10).json()["BlockLocations"]["BlockLocation"]}
    assert holders == {first.address, second.address}
    for server in pair:
        with InsecureClient(server.url, user="hdfs").read("/two/g") as handle:
            assert handle.read() == part + b"b" * 1000
        with InsecureClient(server.url, user="hdfs").read("/two/g", offset=BLOCK + 3, length=5) as handle:
            assert handle.read() == b"aabbb"


def test_the_holder_checks_the_callers_access_again(pair):
    first, second = pair
    admin = InsecureClient(first.url, user="hdfs")
    admin.write("/two/private", b"s" * 200_000, overwrite=True, permission="600")
    with pytest.raises(Exception, match="Permission denied"):
        with InsecureClient(second.url, user="mallory").read("/two/private") as handle:
            handle.read()


def test_checksums_agree_whichever_namenode_computes_them(pair, tmp_path):
    first, second = pair
    InsecureClient(first.url, user="hdfs").write("/two/c", b"c" * (BLOCK + 700), overwrite=True, blocksize=BLOCK)
    InsecureClient(second.url, user="hdfs").write("/two/c", b"d" * 3000, append=True)

    def checksum(server):
        return requests.get(f"{server.url}/webhdfs/v1/two/c", params={"op": "GETFILECHECKSUM", "user.name": "hdfs"},
                            timeout=30).json()["FileChecksum"]
    assert checksum(first) == checksum(second)
