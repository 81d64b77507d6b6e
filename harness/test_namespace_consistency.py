"""What the clients see must be exactly what `hops.hdfs_inodes` holds.

The tree below a test directory is walked three ways and compared: through the database
(parent_id/name/is_dir/size, raw SQL), through WebHDFS LISTSTATUS recursion, and through
Spark's own file listing (binaryFile with recursive lookup, and a dataset's input files).
"""

from __future__ import annotations

import pytest

from harness.support import identity, inodes
from harness.support.spark import input_files

pytestmark = [pytest.mark.namespace, pytest.mark.spark]

MiB = 1 << 20
ODD_NAMES = ["with space", "100%", "k=v", "it's", "é", "日本", "%2F"]


def hidden(relative: str) -> bool:
    """Spark's listing skips names starting with '_' or '.' (partition dirs `_k=v` excepted)."""
    return any(part.startswith((".", "_")) and "=" not in part for part in relative.split("/") if part)


@pytest.fixture(scope="module")
def populated(spark, targets, webhdfs, root):
    """A tree made by every client: a partitioned Spark dataset, raw files of odd names, a
    multi-block file, an empty directory, and a rename and a delete on top."""
    workdir = f"{root}/consistency"
    spark.range(0, 5000).selectExpr("id", "id % 7 AS k", "CAST(id AS STRING) AS s",
                                    "element_at(array('a b', 'é', '日本', 'x%y'), CAST(id % 4 + 1 AS INT)) AS p") \
        .write.partitionBy("p", "k").parquet(targets.uri(f"{workdir}/spark"))
    pytest.importorskip("hdfs")
    hdfs = identity.hdfs_client(targets.webhdfs_url, targets.user)
    for i, name in enumerate(ODD_NAMES):
        hdfs.write(f"{workdir}/raw/{name}/{name}.txt", data=b"x" * (i * 100))
    hdfs.write(f"{workdir}/raw/blocks.bin", data=b"\x01" * (3 * MiB + 5), blocksize=MiB)
    webhdfs.mkdirs(f"{workdir}/raw/empty")
    hdfs.rename(f"{workdir}/raw/é", f"{workdir}/raw/renamed é")
    hdfs.delete(f"{workdir}/raw/k=v", recursive=True)
    yield workdir
    webhdfs.delete(workdir, recursive=True)


def test_database_matches_liststatus(db, webhdfs, populated):
    in_db = inodes.walk(db, populated)
    listed = dict(webhdfs.walk(populated))
    assert sorted(in_db) == sorted(listed), "paths differ between hops.hdfs_inodes and LISTSTATUS"
    mismatched = {}
    for path, row in in_db.items():
        status = listed[path]
        seen = (status["fileId"], status["type"] == "DIRECTORY", 0 if row.is_dir else status["length"])
        if seen != (row.id, row.is_dir, 0 if row.is_dir else row.size):
            mismatched[path] = {"db": row, "webhdfs": status}
    assert not mismatched
    assert not [p for p, r in in_db.items() if r.under_construction], "files left under construction"
    assert "/raw/renamed é/é.txt" in in_db and "/raw/é" not in in_db and "/raw/k=v" not in in_db
    files = {r.id: (p, r.size) for p, r in in_db.items() if not r.is_dir}
    stored = inodes.stored_bytes(db, list(files))
    assert {i: stored.get(i, 0) for i in files} == {i: size for i, (_, size) in files.items()}, \
        "bytes in hops.hdfs_block_infos and hops.hdfs_small_files differ from inode sizes"


def test_database_matches_spark_listing(spark, targets, db, populated):
    in_db = inodes.walk(db, populated)
    by_spark = {}
    listing = spark.read.format("binaryFile").option("recursiveFileLookup", "true") \
        .load(targets.uri(populated)).select("path", "length").collect()
    prefix = targets.uri(populated)
    for row in listing:
        assert row.path.startswith(prefix), row.path
        by_spark[row.path[len(prefix):]] = row.length  # Path.toString: not percent-encoded
    visible = {p: r.size for p, r in in_db.items() if not r.is_dir and not hidden(p)}
    # Spark's file scan drops zero-length files (on file:// too)
    assert by_spark == {p: size for p, size in visible.items() if size}

    dataset = spark.read.parquet(targets.uri(f"{populated}/spark"))
    assert dataset.count() == 5000
    read = {p[len(populated):] for p in input_files(dataset)}
    assert read == {p for p in visible if p.startswith("/spark/")}
    assert {p.split("/")[2] for p in read} == {"p=a b", "p=é", "p=日本", "p=x%25y"}
