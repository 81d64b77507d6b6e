"""The metastore bench's client and workload: one Thrift connection per client process, the
tables it builds, and the calls it measures, declared as a table.

Partition ``i`` of a table with ``n`` partitions has the keys
``p_int = i % 100``, ``p_str = "s%04d" % (i // 100)``, ``p_big = 10000000000 + i``,
so every string value covers 100 partitions and the filters below return fixed row counts
at any size (a multiple of 1,000).
"""

from __future__ import annotations

import getpass
import os
import time
from dataclasses import dataclass
from typing import Callable
from urllib.parse import quote, urlparse

import requests

from hmsclient.genthrift.hive_metastore import ThriftHiveMetastore
from hmsclient.genthrift.hive_metastore.ttypes import (AddPartitionsRequest, Database, FieldSchema,
                                                       NoSuchObjectException, Partition, SerDeInfo,
                                                       StorageDescriptor, Table)
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport.TSocket import TSocket
from thrift.transport.TTransport import TBufferedTransport

BIG = 10_000_000_000          # p_big values start above 2**31, as a bigint key should
BATCH = 1000                  # partitions per add_partitions_req
SOCKET_TIMEOUT_S = 900        # dropping 100k partitions takes ~2 min on the reference

COLUMNS = [FieldSchema("id", "bigint", None), FieldSchema("payload", "string", None)]
PARTITION_KEYS = [FieldSchema("p_int", "int", None), FieldSchema("p_str", "string", None),
                  FieldSchema("p_big", "bigint", None)]
PARQUET = {  # what Spark writes for a `STORED AS PARQUET` Hive table
    "inputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
    "outputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
    "serde": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
}


class MetastoreClient:
    """One connection: socket, buffered transport, accelerated binary protocol, and the
    ``set_ugi`` Spark sends first. ``with MetastoreClient("127.0.0.1:9083") as hms: ...``

    With ``token`` (a delegation token's identifier and password bytes) the connection
    authenticates with SASL DIGEST-MD5 instead (a metastore in ``security.mode: token``), at
    ``qop`` (auth, or auth-conf: every message encrypted), and sends no set_ugi, as Hive's
    client does: the caller is the token's owner."""

    def __init__(self, address: str, timeout_s: float = SOCKET_TIMEOUT_S, user: str | None = None,
                 token: tuple[bytes, bytes] | None = None, qop: str = "auth"):
        self.user = user or getpass.getuser()
        self.token = token
        host, _, port = address.rpartition(":")
        sock = TSocket(host, int(port))
        sock.setTimeout(timeout_s * 1000)
        if token is None:
            self.transport = TBufferedTransport(sock)
        else:   # the repository's SASL client (thrift_sasl + our DIGEST-MD5), as the platform and the tests use it
            from hopshive.security.sasl_client import digest_md5_transport
            self.transport = digest_md5_transport(sock, *token, qop=qop)
        self.client = ThriftHiveMetastore.Client(TBinaryProtocolAccelerated(self.transport))

    def __enter__(self) -> ThriftHiveMetastore.Client:
        self.transport.open()
        if self.token is None:
            self.client.set_ugi(self.user, [self.user])
        return self.client

    def __exit__(self, *exc) -> None:
        self.transport.close()


def partition_values(i: int) -> list[str]:
    return [str(i % 100), f"s{i // 100:04d}", str(BIG + i)]


def _sd(location: str) -> StorageDescriptor:
    return StorageDescriptor(cols=COLUMNS, location=location, inputFormat=PARQUET["inputFormat"],
                             outputFormat=PARQUET["outputFormat"], compressed=False, numBuckets=-1,
                             serdeInfo=SerDeInfo(None, PARQUET["serde"], {"serialization.format": "1"}),
                             bucketCols=[], sortCols=[], parameters={})


def make_partitions(db: str, table: str, table_location: str, values: list[list[str]]) -> list[Partition]:
    now = int(time.time())
    parts = []
    for vals in values:
        path = "/".join(f"{key.name}={val}" for key, val in zip(PARTITION_KEYS, vals))
        parts.append(Partition(values=vals, dbName=db, tableName=table, createTime=now, lastAccessTime=0,
                               sd=_sd(f"{table_location}/{path}"), parameters={}))
    return parts


class DirMaker:
    """Creates partition directories before add_partitions_req, untimed, the way a Spark INSERT
    has written them before it registers the partitions. ``file:`` locations are made with
    os.makedirs (HMS 2.3 on the local FS otherwise forks ls/chmod/chgrp per directory: no native
    Hadoop library in the pyspark jars); ``webhdfs:`` ones with MKDIRS, only when ``webhdfs``."""

    def __init__(self, mode: str, user: str | None = None):
        self.mode = mode                      # "none", "local" or "all"
        self.user = user or getpass.getuser()
        self._http: requests.Session | None = None

    def applies(self, location: str) -> bool:
        scheme = urlparse(location).scheme
        return (self.mode in ("local", "all") and scheme == "file") or (self.mode == "all" and scheme == "webhdfs")

    def make(self, locations: list[str]) -> None:
        for location in locations:
            url = urlparse(location)
            if not self.applies(location):
                continue
            if url.scheme == "file":
                os.makedirs(url.path, exist_ok=True)
                continue
            self._http = self._http or requests.Session()
            resp = self._http.put(f"http://{url.netloc}/webhdfs/v1{quote(url.path)}",
                                  params={"op": "MKDIRS", "user.name": self.user}, timeout=60)
            if resp.status_code != 200:
                raise RuntimeError(f"MKDIRS {location}: HTTP {resp.status_code} {resp.text[:200]}")


def ensure_database(hms, db: str, location_prefix: str) -> str:
    """The bench database (created if missing); returns its location."""
    try:
        return hms.get_database(db).locationUri
    except NoSuchObjectException:
        location = f"{location_prefix.rstrip('/')}/{db}.db"
        hms.create_database(Database(db, "HopsHive metastore bench", location, {}))
        return location


def create_table(hms, db: str, table: str, db_location: str, owner: str | None = None) -> str:
    """A fresh managed Parquet table partitioned by (int, string, bigint); returns its location."""
    drop_if_exists(hms, db, table)
    location = f"{db_location}/{table}"
    hms.create_table(Table(tableName=table, dbName=db, owner=owner or getpass.getuser(), createTime=int(time.time()),
                           lastAccessTime=0, retention=0, sd=_sd(location), partitionKeys=PARTITION_KEYS,
                           parameters={"EXTERNAL": "FALSE"}, tableType="MANAGED_TABLE"))
    return location


def drop_if_exists(hms, db: str, table: str) -> None:
    try:
        hms.get_table(db, table)
    except NoSuchObjectException:
        return
    hms.drop_table_with_environment_context(db, table, True, None)


def partition_count(hms, db: str, table: str) -> int | None:
    """Partitions in ``table``, or None when it does not exist."""
    try:
        hms.get_table(db, table)
    except NoSuchObjectException:
        return None
    return len(hms.get_partition_names(db, table, -1))


def add_batch(hms, db: str, table: str, parts: list[Partition], need_result: bool = True) -> int:
    """What Spark's ALTER TABLE ADD PARTITION / INSERT sends: add_partitions_req."""
    result = hms.add_partitions_req(AddPartitionsRequest(db, table, parts, ifNotExists=False,
                                                         needResult=need_result))
    return len(result.partitions or []) if need_result else len(parts)


@dataclass(frozen=True)
class Target:
    """What a measured call works on: the database, the table, its size and location."""
    db: str
    table: str
    partitions: int
    location: str = ""
    tag: str = ""       # distinguishes the partitions different add cells create
    dirs: DirMaker | None = None


@dataclass(frozen=True)
class Call:
    """One measured call. ``prepare(target, rng, worker, i)`` builds the arguments outside the
    timed region; ``invoke(hms, target, args)`` makes the call and returns the rows it got."""
    name: str
    per_size: bool                          # measured at every table size (else once)
    expect: Callable[[int], int] | None      # rows expected for a table of n partitions
    prepare: Callable
    invoke: Callable
    warmup: bool = True


def _by_filter(hms, t: Target, flt: str) -> int:
    return len(hms.get_partitions_by_filter(t.db, t.table, flt, -1))


def _point(t: Target, rng, worker, i) -> str:
    a, b, c = partition_values(rng.randrange(t.partitions))
    return f'p_int = {a} and p_str = "{b}" and p_big = {c}'


def _range(t: Target, rng, worker, i) -> str:
    lo = BIG + rng.randrange(t.partitions - 1000 + 1)
    return f"p_big >= {lo} and p_big < {lo + 1000}"


def _in10(t: Target, rng, worker, i) -> str:
    values = ", ".join(f'"s{v:04d}"' for v in sorted(rng.sample(range(t.partitions // 100), 10)))
    return f"(p_str) in ({values})"


def _new_batch(t: Target, rng, worker, i) -> list[Partition]:
    # p_int = worker and p_str unique per (cell, iteration): no two batches collide.
    values = [[str(worker), f"a{t.tag}-{i:04d}", str(BIG + k)] for k in range(BATCH)]
    parts = make_partitions(t.db, t.table, t.location, values)
    if t.dirs:
        t.dirs.make([p.sd.location for p in parts])
    return parts


def _get_database(hms, t: Target, _) -> int:
    hms.get_database(t.db)
    return 1


def _get_table(hms, t: Target, _) -> int:
    hms.get_table(t.db, t.table)
    return 1


def _nothing(*_) -> None:
    return None


READ_CALLS = [
    Call("get_database", False, lambda n: 1, _nothing, _get_database),
    Call("get_table", False, lambda n: 1, _nothing, _get_table),
    Call("get_partitions_by_filter point", True, lambda n: 1, _point, _by_filter),
    Call("get_partitions_by_filter range 1k", True, lambda n: 1000, _range, _by_filter),
    Call("get_partitions_by_filter IN of 10", True, lambda n: 1000, _in10, _by_filter),
    Call("get_partitions_by_filter all", True, lambda n: n, lambda t, *_: "p_int >= 0", _by_filter),
]
ADD_CALL = Call("add_partitions_req ×1000", False, lambda n: BATCH, _new_batch,
                lambda hms, t, parts: add_batch(hms, t.db, t.table, parts), warmup=False)
LOAD_NAME = "add_partitions_req ×1000 (load)"
DROP_NAME = "drop_table deleteData=true"

FILTER_EXAMPLES = {  # for the README and --help: what each filter looks like on the wire
    "point": 'p_int = 17 and p_str = "s0042" and p_big = 10000004217',
    "range 1k": "p_big >= 10000003000 and p_big < 10000004000",
    "IN of 10": '(p_str) in ("s0003", "s0011", ...)  -- 10 values x 100 partitions each',
    "all": "p_int >= 0",
}
