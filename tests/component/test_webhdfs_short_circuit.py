"""Short-circuit reads: the namenode's GETLOCALREPLICAS and the Hadoop file system that uses
it (io.hopshive.spark.ShortCircuitWebHdfsFileSystem, services/spark/), in a Spark JVM of its
own reading files written through WebHDFS."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import requests
from hdfs import InsecureClient

from tests.support.spark_extension import build_jar

pytestmark = [pytest.mark.namespace, pytest.mark.spark]
MiB = 1 << 20
BIG = bytes(range(256)) * (3 * MiB // 256) + b"tail!"      # 4 blocks of 1 MiB, the last 5 bytes


def local_replicas(namenode, path: str, user: str) -> requests.Response:
    return requests.get(f"{namenode.url}/webhdfs/v1{path}", params={"op": "GETLOCALREPLICAS", "user.name": user},
                        timeout=30)


@pytest.fixture
def files(namenode):
    """alice's 4-block file (0600), a small file kept in the database, and a directory."""
    alice = InsecureClient(namenode.url, user="alice")
    InsecureClient(namenode.url, user="hdfs").makedirs("/sc", permission="777")
    alice.write("/sc/big.bin", data=BIG, blocksize=MiB, permission="600")
    alice.write("/sc/small.txt", data=b"in the database", permission="644")
    return namenode


def test_the_namenode_names_its_block_files_to_a_reader_on_its_host(files):
    answer = local_replicas(files, "/sc/big.bin", "alice")
    assert answer.status_code == 200, answer.text
    found = answer.json()["LocalReplicas"]
    assert (found["length"], found["bytesPerChecksum"]) == (len(BIG), 1 << 16)
    assert [(b["offset"], b["length"]) for b in found["blocks"]] == [(0, MiB), (MiB, MiB), (2 * MiB, MiB),
                                                                      (3 * MiB, 5)]
    assert b"".join(Path(b["path"]).read_bytes() for b in found["blocks"]) == BIG
    assert all(Path(b["checksums"]).is_file() for b in found["blocks"])
    assert local_replicas(files, "/sc/small.txt", "alice").json() == {"LocalReplicas": None}
    refused = local_replicas(files, "/sc/big.bin", "bob")
    assert refused.status_code == 403 and "AccessControlException" in refused.text


SCRIPT = r"""
import base64, hashlib, json, sys
from pyspark.sql import SparkSession
url, jar = sys.argv[1], sys.argv[2]
spark = (SparkSession.builder.master("local[2]").appName("short-circuit").config("spark.ui.enabled", "false")
         .config("spark.sql.catalogImplementation", "in-memory").config("spark.driver.extraClassPath", jar)
         .config("spark.executor.extraClassPath", jar)
         .config("spark.hadoop.fs.webhdfs.impl", "io.hopshive.spark.ShortCircuitWebHdfsFileSystem").getOrCreate())
jvm = spark.sparkContext._jvm
conf = spark.sparkContext._jsc.hadoopConfiguration()
out = {}

def read(name, position, length):
    path = jvm.org.apache.hadoop.fs.Path(url + name)
    stream = path.getFileSystem(conf).open(path)
    try:
        stream.seek(position)
        buffer = jvm.org.apache.commons.io.IOUtils.toByteArray(stream, length)     # stays a Java byte[]
        data = base64.b64decode(jvm.java.util.Base64.getEncoder().encodeToString(buffer))
        return stream.getWrappedStream().getClass().getSimpleName(), hashlib.md5(data).hexdigest()
    finally:
        stream.close()

for name, position, length in json.loads(sys.argv[3]):
    try:
        out[f"{name}@{position}+{length}"] = read(name, position, length)
    except Exception as exc:
        out[f"{name}@{position}+{length}"] = ["error", str(exc).splitlines()[0][:300]]
spark.range(200000).selectExpr("id", "CAST(id AS STRING) AS s").repartition(3).write.mode("overwrite").parquet(url + "/parquet")
row = spark.read.parquet(url + "/parquet").selectExpr("count(*)", "sum(id)", "max(s)").collect()[0]
out["parquet"] = [row[0], row[1], row[2]]
print("RESULT " + json.dumps(out))
spark.stop()
"""


def spark_reads(tmp_path, namenode, reads: list[tuple[str, int, int]]) -> dict:
    script = tmp_path / "short_circuit.py"
    script.write_text(SCRIPT)
    jar = build_jar(tmp_path / "extension")
    env = dict(os.environ, HADOOP_USER_NAME="alice", SPARK_LOCAL_IP="127.0.0.1")
    done = subprocess.run([sys.executable, str(script), f"webhdfs://{namenode.address}/sc", str(jar), json.dumps(reads)],
                          capture_output=True, text=True, timeout=600, env=env)
    results = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and results, done.stderr[-3000:]
    return json.loads(results[0][len("RESULT "):])


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def test_spark_reads_the_block_files_itself_and_never_a_corrupt_byte(files, tmp_path):
    reads = [("/big.bin", 0, len(BIG)), ("/big.bin", MiB - 3, 10), ("/big.bin", 3 * MiB, 5),
             ("/small.txt", 0, 15)]
    first = spark_reads(tmp_path, files, reads)
    assert first["/big.bin@0+3145733"] == ["LocalReplicasInputStream", md5(BIG)]
    assert first[f"/big.bin@{MiB - 3}+10"] == ["LocalReplicasInputStream", md5(BIG[MiB - 3:MiB + 7])]
    assert first[f"/big.bin@{3 * MiB}+5"] == ["LocalReplicasInputStream", md5(b"tail!")]
    assert first["/small.txt@0+15"][1] == md5(b"in the database")
    assert first["/small.txt@0+15"][0] != "LocalReplicasInputStream", "a small file has no block file"
    assert first["parquet"] == [200000, sum(range(200000)), "99999"]

    # A replica corrupted on disk: the local read refuses it, hands over to WebHDFS, whose
    # namenode finds it corrupt too (its only replica): an error, never wrong bytes.
    second_block = Path(local_replicas(files, "/sc/big.bin", "alice").json()["LocalReplicas"]["blocks"][1]["path"])
    data = bytearray(second_block.read_bytes())
    data[100] ^= 0xFF
    second_block.write_bytes(bytes(data))
    after = spark_reads(tmp_path, files, [("/big.bin", 0, MiB), ("/big.bin", MiB, MiB)])
    assert after[f"/big.bin@0+{MiB}"] == ["LocalReplicasInputStream", md5(BIG[:MiB])]
    assert after[f"/big.bin@{MiB}+{MiB}"][0] == "error", after
