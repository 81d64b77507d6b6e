"""Client-side Hive Metastore helpers shared by the component tests (tests/) and the e2e
harness (harness/): Thrift clients of both IDL generations, builders of Thrift objects, and
the consistency invariants of the `metastore` schema read straight from the database.

Nothing here imports the metastore service: the harness uses it against a deployed
metastore (only the SASL client comes from hopshive.security).
"""

from __future__ import annotations

import copy
from typing import Callable, Sequence

from pymetastore.hive_metastore import ttypes as api
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport import TSocket, TSSLSocket, TTransport

from hopshive.core.tls import client_context
from hopshive.security.sasl_client import digest_md5_transport


# --------------------------------------------------------------------------- clients
class thrift_client:  # noqa: N801 -- used like the function it replaced: ``with thrift_client(port) as c``
    """A Hive 3.1 (pymetastore) or Hive 2 (hmsclient, with fb303) client, after set_ugi.

    With ``token`` (a delegation token's identifier and password bytes) the connection
    authenticates with SASL DIGEST-MD5 as Hadoop clients do (hopshive.security.sasl_client,
    which the platform's provisioning uses too), at ``qop`` (by default auth over TLS,
    auth-conf without); pass ``user=None`` to send no set_ugi then, as Hive's client does.
    With ``ca_file`` the connection is TLS, verified with that CA.

    A class, not a @contextmanager generator: the generated exceptions are frozen, and
    contextlib re-raising one through a generator sets its __traceback__, which turns a
    MetaException into "TypeError: can't modify immutable instance"."""

    def __init__(self, port: int, hive2: bool = False, user: str | None = "alice", timeout: float = 30.0,
                 host: str = "127.0.0.1", token: tuple[bytes, bytes] | None = None, ca_file: str | None = None,
                 qop: str | None = None):
        if hive2:
            from hmsclient.genthrift.hive_metastore import ThriftHiveMetastore
        else:
            from pymetastore.hive_metastore import ThriftHiveMetastore
        sock = TSocket.TSocket(host, port) if ca_file is None \
            else TSSLSocket.TSSLSocket(host, port, ssl_context=client_context(ca_file))
        sock.setTimeout(int(timeout * 1000))
        self.transport = TTransport.TBufferedTransport(sock) if token is None else digest_md5_transport(sock, *token, qop=qop)
        self.client = ThriftHiveMetastore.Client(TBinaryProtocolAccelerated(self.transport))
        self.user = user

    def __enter__(self):
        self.transport.open()
        try:
            if self.user:
                self.client.set_ugi(self.user, [])
        except BaseException:
            self.transport.close()
            raise
        return self.client

    def __exit__(self, *_exc) -> bool:
        self.transport.close()
        return False


# --------------------------------------------------------------------------- objects
def columns(*specs: str) -> list:
    """``columns("a int", "b string")``."""
    return [api.FieldSchema(*spec.split(" ", 1), None) for spec in specs]


def database(name: str, location: str | None = None, params: dict | None = None):
    return api.Database(name=name, locationUri=location, parameters=dict(params or {}))


def table(db: str, name: str, cols=("a int", "b string"), parts=(), location=None, external=False, params=None,
          owner: str = "alice"):
    sd = api.StorageDescriptor(
        cols=columns(*cols), location=location,
        inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat", compressed=False, numBuckets=-1,
        serdeInfo=api.SerDeInfo(None, "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", {"serialization.format": "1"}),
        bucketCols=[], sortCols=[], parameters={})
    return api.Table(tableName=name, dbName=db, owner=owner, createTime=0, lastAccessTime=0, retention=0, sd=sd,
                     partitionKeys=columns(*parts), parameters=dict(params or {}, **({"EXTERNAL": "TRUE"} if external else {})),
                     tableType="EXTERNAL_TABLE" if external else "MANAGED_TABLE")


def partition(tbl, values, location=None, params: dict | None = None):
    sd = copy.deepcopy(tbl.sd)
    sd.location = location
    return api.Partition(values=list(values), dbName=tbl.dbName, tableName=tbl.tableName, createTime=0,
                         lastAccessTime=0, sd=sd, parameters=dict(params or {}))


COMPACT = "org.apache.hadoop.hive.ql.index.compact.CompactIndexHandler"


def hive2(struct, cls):
    """A Hive 3.1 struct as the Hive 2 struct of ``cls`` (the same bytes on the wire)."""
    from thrift.TSerialization import deserialize, serialize
    return deserialize(cls(), serialize(struct))


def index(base, name: str, cols: Sequence[str], handler: str = COMPACT, index_table: str | None = None,
          params: dict | None = None, deferred: bool = True):
    """(Index, index Table) as Hive 2.3's CREATE INDEX sends them to add_index for the base
    table ``base`` (a Hive 3.1 Table): the compact layout (indexed columns, ``_bucketname``,
    ``_offsets``), partitioned like the base table.  Hive 2 structs."""
    from hmsclient.genthrift.hive_metastore import ttypes as h2
    by_name = {c.name: c for c in base.sd.cols}
    covered = [by_name.get(c) or api.FieldSchema(c, "string", None) for c in cols]
    sd = copy.deepcopy(base.sd)
    sd.cols, sd.location = covered, None
    idx = h2.Index(indexName=name, indexHandlerClass=handler, dbName=base.dbName, origTableName=base.tableName,
                   createTime=0, lastAccessTime=0, indexTableName=index_table, sd=hive2(sd, h2.StorageDescriptor),
                   parameters=dict(params or {}), deferredRebuild=deferred)
    table_sd = copy.deepcopy(sd)
    table_sd.cols = covered + columns("_bucketname string", "_offsets array<bigint>")
    idx_table = api.Table(tableName=index_table, dbName=base.dbName, owner=base.owner, createTime=0,
                          lastAccessTime=0, retention=0, sd=table_sd, partitionKeys=copy.deepcopy(base.partitionKeys),
                          parameters={}, tableType="INDEX_TABLE")
    return idx, hive2(idx_table, h2.Table)


# ------------------------------------------------------------------------ invariants
INVARIANTS = {
    "databases without their descriptor":
        "SELECT d.NAME FROM metastore.DBS d LEFT JOIN metastore.SDS s ON s.SD_ID=d.SD_ID WHERE s.SD_ID IS NULL",
    "tables without their descriptor":
        "SELECT t.TBL_NAME FROM metastore.TBLS t LEFT JOIN metastore.SDS s ON s.SD_ID=t.SD_ID WHERE s.SD_ID IS NULL",
    "partitions without their descriptor":
        "SELECT p.PART_NAME FROM metastore.PARTITIONS p LEFT JOIN metastore.SDS s ON s.SD_ID=p.SD_ID"
        " WHERE s.SD_ID IS NULL",
    "descriptors pointing at a missing inode":
        "SELECT s.SD_ID FROM metastore.SDS s LEFT JOIN hops.hdfs_inodes i ON i.partition_id=s.PARTITION_ID"
        " AND i.parent_id=s.PARENT_ID AND i.name=s.NAME WHERE s.PARTITION_ID IS NOT NULL AND i.id IS NULL",
    "partitions without key values":
        "SELECT p.PART_NAME FROM metastore.PARTITIONS p WHERE NOT EXISTS"
        " (SELECT 1 FROM metastore.PARTITION_KEY_VALS k WHERE k.PART_ID=p.PART_ID)",
}
OWNED_BY_NOTHING = ("NOT EXISTS (SELECT 1 FROM metastore.DBS d WHERE d.SD_ID=s.SD_ID)"
                    " AND NOT EXISTS (SELECT 1 FROM metastore.TBLS t WHERE t.SD_ID=s.SD_ID)"
                    " AND NOT EXISTS (SELECT 1 FROM metastore.PARTITIONS p WHERE p.SD_ID=s.SD_ID)"
                    " AND NOT EXISTS (SELECT 1 FROM metastore.IDXS x WHERE x.SD_ID=s.SD_ID)")
UNOWNED_SDS = "SELECT s.SD_ID, s.LOCATION FROM metastore.SDS s WHERE " + OWNED_BY_NOTHING
# Descriptors below a location prefix (no LIKE: a prefix may hold % or _).
BELOW = " AND LEFT(s.LOCATION, CHAR_LENGTH(%s)) = %s"

Query = Callable[[str, Sequence], list]


def violations(query: Query, owned: bool = True, location_prefix: str | None = None) -> dict:
    """What breaks the consistency invariants (empty when sound), through ``query(sql, params)``.

    The foreign-key invariants are checked everywhere.  ``owned`` also requires that every
    descriptor has an owner -- true after metastore operations; after a directory was
    removed behind the metastore's back, unowned descriptors are fsck's to clean.  With
    ``location_prefix`` that check covers only descriptors below it (a shared deployment
    may hold other users' orphans)."""
    found = {name: query(sql, ()) for name, sql in INVARIANTS.items()}
    if owned:
        if location_prefix is None:
            found["descriptors owned by nothing"] = query(UNOWNED_SDS, ())
        else:
            found["descriptors owned by nothing"] = query(UNOWNED_SDS + BELOW, (location_prefix, location_prefix))
    return {name: rows for name, rows in found.items() if rows}
