"""Small files in the database (HopsFS): a file whose whole content fits the limit is one row
next to its inode, written in the transaction that completes it, with no block; growing past
the limit by append moves it to blocks; delete, move, recovery and checksums treat both
kinds alike.  Through WebHDFS: real clients (HdfsCLI, fsspec, Spark) round-trip them, stored
as rows and not blocks, and a second namenode with a block directory of its own serves a
small file another namenode received."""

from __future__ import annotations

import fsspec
import pytest
import requests
from hdfs import InsecureClient

from hopshive.namespace.liveness import Liveness
from hopshive.namespace.maintenance import recover_dead
from hopshive.namespace.namespace import Namespace
from tests.support.invariants import inode_id
from tests.support.library import declare_dead, namespace_config, read_file, unfinished_write, write_file
from tests.support.namenode import NamenodeServer

LIMIT = 4096


@pytest.fixture
def small(db, tmp_path):
    """A namespace keeping files up to LIMIT bytes in the database (blocks of 1 KiB)."""
    liveness = Liveness(db, "127.0.0.1:1", dead_after=10.0)
    liveness.register()
    return Namespace(db, namespace_config(tmp_path / "data", small_file_limit=LIMIT), "127.0.0.1:1", liveness)


@pytest.fixture
def hdfs(small):
    return small.caller("hdfs")


def storage(db, inode_id) -> tuple[int, int]:
    """(small-file rows, block rows) of a file."""
    return db.run(lambda tx: (
        tx.query_one("SELECT COUNT(*) FROM hops.hdfs_small_files WHERE inode_id=%s", (inode_id,))[0],
        tx.query_one("SELECT COUNT(*) FROM hops.hdfs_block_infos WHERE inode_id=%s", (inode_id,))[0]))


def test_a_file_within_the_limit_is_one_row_and_no_block(small, hdfs, db, tmp_path):
    data = bytes(range(256)) * 16          # exactly the limit
    inode = write_file(small, hdfs, "/s/f", data)
    assert storage(db, inode.id) == (1, 0)
    assert read_file(small, hdfs, "/s/f") == data
    assert not any((tmp_path / "data").rglob("blk_*")), "a small file wrote a block file"
    big = write_file(small, hdfs, "/s/big", data + b"!")
    assert storage(db, big.id) == (0, 5)
    assert read_file(small, hdfs, "/s/big") == data + b"!"


def test_appends_keep_a_small_file_small_until_it_outgrows_the_limit(small, hdfs, db):
    inode = write_file(small, hdfs, "/s/f", b"a" * 1000)
    write_file(small, hdfs, "/s/f", b"b" * 1000, append=True)
    assert storage(db, inode.id) == (1, 0)
    write_file(small, hdfs, "/s/f", b"c" * 3000, append=True)
    assert storage(db, inode.id) == (0, 5), "grown past the limit: blocks only"
    assert read_file(small, hdfs, "/s/f") == b"a" * 1000 + b"b" * 1000 + b"c" * 3000
    assert small.get_status(hdfs, "/s/f").length == 5000


def test_delete_and_move_treat_small_files_like_any_file(small, hdfs, db):
    inode = write_file(small, hdfs, "/s/f", b"content")
    assert small.rename(hdfs, "/s/f", "/s/g")
    assert read_file(small, hdfs, "/s/g") == b"content"
    assert small.delete(hdfs, "/s", True)
    assert storage(db, inode.id) == (0, 0)


def test_an_unfinished_small_write_leaves_nothing(small, hdfs, db, peer_namespace):
    """The namenode dies mid-write: its buffer was only in memory, recovery removes the file."""
    inode, _, _ = unfinished_write(small, hdfs, "/s/half", b"half of it")
    write_file(small, hdfs, "/s/kept", b"kept")
    appended, _, _ = unfinished_write(small, hdfs, "/s/kept", b" and more", append=True)
    declare_dead(db, small.liveness.namenode_id)
    recover_dead(peer_namespace())
    assert storage(db, inode.id) == (0, 0)
    assert not small.db.run(lambda tx: small.resolve(tx, "/s/half"))
    assert read_file(small, hdfs, "/s/kept") == b"kept", "an unfinished append adds nothing"


def checksum(ns, caller, path):
    inode, blocks = ns.file_blocks(caller, path)
    return ns.blocks.checksum(blocks, inode.block_size)


def test_a_small_files_checksum_is_the_same_as_on_blocks(small, hdfs, namespace):
    data = b"checksummed content\n" * 50
    write_file(small, hdfs, "/s/f", data, block_size=LIMIT * 2)
    write_file(namespace, namespace.caller("hdfs"), "/b/f", data, block_size=LIMIT * 2)
    assert checksum(small, hdfs, "/s/f") == checksum(namespace, namespace.caller("hdfs"), "/b/f")


def test_clients_and_a_second_namenode_read_small_files(db, tmp_path):
    first = NamenodeServer(tmp_path / "nn1", db.config, workers=1).start()
    second = NamenodeServer(tmp_path / "nn2", db.config, workers=1).start()
    try:
        writer = InsecureClient(first.url, user="hdfs")
        writer.write("/small/f", b"x" * 1000, overwrite=True)
        writer.write("/small/f", b"y" * 100, append=True)
        reader = InsecureClient(second.url, user="hdfs")
        with reader.read("/small/f") as handle:
            assert handle.read() == b"x" * 1000 + b"y" * 100
        with reader.read("/small/f", offset=990, length=20) as handle:
            assert handle.read() == b"x" * 10 + b"y" * 10
        locations = requests.get(f"{second.url}/webhdfs/v1/small/f", timeout=10, params={
            "op": "GETFILEBLOCKLOCATIONS", "user.name": "hdfs"}).json()["BlockLocations"]["BlockLocation"]
        assert [b["names"] for b in locations] == [[second.address]]
        assert not any((tmp_path / "nn1").rglob("blk_*")) and not any((tmp_path / "nn2").rglob("blk_*"))
    finally:
        assert first.stop() == 0, first.log_tail()
        assert second.stop() == 0, second.log_tail()


# --------------------------------------------------------- through clients nobody here wrote
def stored(db, path) -> tuple[int, int]:
    """(small-file rows, block rows) of the file at ``path``."""
    return storage(db, inode_id(db, path))


def test_fsspec_round_trips_small_files_kept_in_the_database(namenode, db):
    fs = fsspec.filesystem("webhdfs", host="127.0.0.1", port=namenode.port, user="hdfs", skip_instance_cache=True)
    data = bytes(range(256)) * 20
    fs.pipe("/fs/one", data)
    with fs.open("/fs/two", "wb") as handle:
        handle.write(b"a" * 3000)
        handle.write(b"b" * 3000)
    assert fs.cat("/fs/one") == data
    assert fs.cat("/fs/two") == b"a" * 3000 + b"b" * 3000
    assert fs.info("/fs/one")["size"] == len(data)
    assert stored(db, "/fs/one") == (1, 0) and stored(db, "/fs/two") == (1, 0)
    assert not any(namenode.data_dir.rglob("blk_*"))


def test_hdfscli_append_past_the_limit_moves_a_small_file_to_blocks(namenode, db):
    client = InsecureClient(namenode.url, user="hdfs")
    client.write("/grow/f", b"x" * 60_000)
    assert stored(db, "/grow/f") == (1, 0)
    client.write("/grow/f", b"y" * 10_000, append=True)     # 70,000 bytes: past the 64 KiB limit
    assert stored(db, "/grow/f") == (0, 1)
    assert any(namenode.data_dir.rglob("blk_*"))
    with client.read("/grow/f") as handle:
        assert handle.read() == b"x" * 60_000 + b"y" * 10_000
    assert client.status("/grow/f")["length"] == 70_000


def test_spark_round_trips_small_files_kept_in_the_database(namenode, db, monkeypatch):
    monkeypatch.setenv("HADOOP_USER_NAME", "hdfs")
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[1]").appName("small-files")
             .config("spark.ui.enabled", "false").config("spark.sql.catalogImplementation", "in-memory")
             .config("spark.sql.shuffle.partitions", "1").getOrCreate())
    try:
        url = f"webhdfs://{namenode.address}/spark/small"
        spark.range(1000).selectExpr("id", "CAST(id * 7 AS STRING) AS s").repartition(2).write.parquet(url)
        assert sorted(tuple(r) for r in spark.read.parquet(url).collect()) == [(i, str(i * 7)) for i in range(1000)]
    finally:
        spark.stop()
    parts = [name for name in InsecureClient(namenode.url, user="hdfs").list("/spark/small")
             if name.endswith(".parquet")]
    assert len(parts) == 2
    for name in parts:
        assert stored(db, f"/spark/small/{name}") == (1, 0), name
    assert not any(namenode.data_dir.rglob("blk_*"))
