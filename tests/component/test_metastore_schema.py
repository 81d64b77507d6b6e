"""The metastore schema on the real MariaDB: Hive 2.3's tables, and foreign keys that make
the metadata follow the namespace (thesis 3.1).  Rows are written by hand, the way the
store writes them; `Catalog` is reused by test_fsck.py."""

from __future__ import annotations

import datetime
import decimal
import itertools
from dataclasses import dataclass

import pytest

from hopshive.core.db import DriverError, error_code
from hopshive.core.migrations import upgrade, validate
from hopshive.core.schematool import COMPONENTS
from hopshive.namespace.inodes import partition_id

NN = "hdfs://nn:8020"
FK_PARENT_HAS_CHILDREN, FK_NO_PARENT, DUPLICATE, CHECK_FAILED = 1451, 1452, 1062, 4025


@dataclass(frozen=True)
class Dir:
    id: int
    key: tuple
    path: str

    @property
    def location(self) -> str:
        return NN + self.path


ROOT = Dir(1, (0, 0, ""), "")


@dataclass(frozen=True)
class Table:
    id: int
    sd: int
    cd: int
    dir: Dir | None


class Catalog:
    """Hand-made namespace and metastore rows inside one transaction."""

    def __init__(self, tx):
        self.tx = tx
        self._ids = itertools.count(1000)

    def _insert(self, table: str, **values) -> int:
        columns = ", ".join(f"`{column}`" for column in values)
        self.tx.execute(f"INSERT INTO {table} ({columns}) VALUES ({', '.join(['%s'] * len(values))})",
                        tuple(values.values()))
        return self.tx.lastrowid

    def mkdir(self, parent: Dir, name: str) -> Dir:
        inode_id = next(self._ids)
        key = (partition_id(parent.id, name), parent.id, name)
        self._insert("hops.hdfs_inodes", partition_id=key[0], parent_id=key[1], name=key[2], id=inode_id,
                     permission=0o755, is_dir=1)
        return Dir(inode_id, key, f"{parent.path}/{name}")

    def cd(self, *columns: str) -> int:
        cd_id = self._insert("metastore.CDS")
        for idx, column in enumerate(columns):
            self._insert("metastore.COLUMNS_V2", CD_ID=cd_id, COLUMN_NAME=column, TYPE_NAME="string",
                         INTEGER_IDX=idx)
        return cd_id

    def sd(self, where: Dir | None, cd: int | None = None, location: str | None = None,
           with_serde: bool = True) -> int:
        serde = None
        if with_serde:
            serde = self._insert("metastore.SERDES",
                                 SLIB="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe")
            self._insert("metastore.SERDE_PARAMS", SERDE_ID=serde, PARAM_KEY="serialization.format",
                         PARAM_VALUE="1")
        key = where.key if where else (None, None, None)
        sd_id = self._insert("metastore.SDS", CD_ID=cd, SERDE_ID=serde, LOCATION=location or (where and where.location),
                             INPUT_FORMAT="org.apache.hadoop.mapred.SequenceFileInputFormat",
                             PARTITION_ID=key[0], PARENT_ID=key[1], NAME=key[2])
        self._insert("metastore.SD_PARAMS", SD_ID=sd_id, PARAM_KEY="k", PARAM_VALUE="v")
        self._insert("metastore.BUCKETING_COLS", SD_ID=sd_id, BUCKET_COL_NAME="id", INTEGER_IDX=0)
        self._insert("metastore.SORT_COLS", SD_ID=sd_id, COLUMN_NAME="id", ORDER=1, INTEGER_IDX=0)
        return sd_id

    def skew(self, sd_id: int, *values: str) -> int:
        list_id = self._insert("metastore.SKEWED_STRING_LIST")
        for idx, value in enumerate(values):
            self._insert("metastore.SKEWED_STRING_LIST_VALUES", STRING_LIST_ID=list_id, STRING_LIST_VALUE=value,
                         INTEGER_IDX=idx)
        self._insert("metastore.SKEWED_COL_NAMES", SD_ID=sd_id, SKEWED_COL_NAME="id", INTEGER_IDX=0)
        self._insert("metastore.SKEWED_VALUES", SD_ID_OID=sd_id, STRING_LIST_ID_EID=list_id, INTEGER_IDX=0)
        self._insert("metastore.SKEWED_COL_VALUE_LOC_MAP", SD_ID=sd_id, STRING_LIST_ID_KID=list_id,
                     LOCATION=f"{NN}/skew/{list_id}")
        return list_id

    def database(self, name: str, where: Dir) -> int:
        sd_id = self.sd(where, with_serde=False)
        db_id = self._insert("metastore.DBS", NAME=name, DB_LOCATION_URI=where.location, SD_ID=sd_id,
                             OWNER_NAME="hive", OWNER_TYPE="USER")
        self._insert("metastore.DATABASE_PARAMS", DB_ID=db_id, PARAM_KEY="owner", PARAM_VALUE="ops")
        func = self._insert("metastore.FUNCS", DB_ID=db_id, FUNC_NAME=f"{name}_udf", CLASS_NAME="a.B",
                            CREATE_TIME=1, FUNC_TYPE=1)
        self._insert("metastore.FUNC_RU", FUNC_ID=func, RESOURCE_TYPE=1, RESOURCE_URI=f"{NN}/jars/u.jar",
                     INTEGER_IDX=0)
        self._insert("metastore.DB_PRIVS", DB_ID=db_id, CREATE_TIME=1, GRANT_OPTION=0, PRINCIPAL_NAME="bob",
                     PRINCIPAL_TYPE="USER", DB_PRIV="SELECT")
        return db_id

    def table(self, db_id: int, name: str, where: Dir | None, keys: tuple[str, ...] = (),
              table_type: str = "MANAGED_TABLE") -> Table:
        cd_id = self.cd("id", "v")
        sd_id = self.sd(where, cd_id)
        tbl_id = self._insert("metastore.TBLS", CREATE_TIME=1, DB_ID=db_id, SD_ID=sd_id, TBL_NAME=name,
                              TBL_TYPE=table_type, OWNER="hive")
        self._insert("metastore.TABLE_PARAMS", TBL_ID=tbl_id, PARAM_KEY="comment", PARAM_VALUE="données")
        for idx, key in enumerate(keys):
            self._insert("metastore.PARTITION_KEYS", TBL_ID=tbl_id, PKEY_NAME=key, PKEY_TYPE="string",
                         INTEGER_IDX=idx)
        self._insert("metastore.TAB_COL_STATS", TBL_ID=tbl_id, DB_NAME="db", TABLE_NAME=name, COLUMN_NAME="id",
                     COLUMN_TYPE="int", NUM_NULLS=0, LAST_ANALYZED=1)
        self._insert("metastore.TBL_PRIVS", TBL_ID=tbl_id, CREATE_TIME=1, GRANT_OPTION=0, PRINCIPAL_NAME="bob",
                     PRINCIPAL_TYPE="USER", TBL_PRIV="SELECT")
        self._insert("metastore.TBL_COL_PRIVS", TBL_ID=tbl_id, COLUMN_NAME="id", CREATE_TIME=1, GRANT_OPTION=0,
                     PRINCIPAL_NAME="bob", PRINCIPAL_TYPE="USER", TBL_COL_PRIV="SELECT")
        return Table(tbl_id, sd_id, cd_id, where)

    def partition(self, table: Table, values: dict[str, str], where: Dir) -> int:
        sd_id = self.sd(where, table.cd)
        name = "/".join(f"{k}={v}" for k, v in values.items())
        part_id = self._insert("metastore.PARTITIONS", CREATE_TIME=1, PART_NAME=name, SD_ID=sd_id,
                               TBL_ID=table.id)
        for idx, value in enumerate(values.values()):
            self._insert("metastore.PARTITION_KEY_VALS", PART_ID=part_id, TBL_ID=table.id, PART_KEY_VAL=value,
                         PART_KEY_VAL_NUM=_number(value), PART_KEY_VAL_DATE=_date(value), INTEGER_IDX=idx)
        self._insert("metastore.PARTITION_PARAMS", PART_ID=part_id, PARAM_KEY="numFiles", PARAM_VALUE="1")
        self._insert("metastore.PART_COL_STATS", PART_ID=part_id, DB_NAME="db", TABLE_NAME="t",
                     PARTITION_NAME=name, COLUMN_NAME="id", COLUMN_TYPE="int", NUM_NULLS=0, LAST_ANALYZED=1)
        self._insert("metastore.PART_PRIVS", PART_ID=part_id, CREATE_TIME=1, GRANT_OPTION=0,
                     PRINCIPAL_NAME="bob", PRINCIPAL_TYPE="USER", PART_PRIV="SELECT")
        self._insert("metastore.PART_COL_PRIVS", PART_ID=part_id, COLUMN_NAME="id", CREATE_TIME=1,
                     GRANT_OPTION=0, PRINCIPAL_NAME="bob", PRINCIPAL_TYPE="USER", PART_COL_PRIV="SELECT")
        return part_id

    def index(self, name: str, base: Table, index_table: Table) -> int:
        sd_id = self.sd(None, base.cd)  # an index's own SD has no location (thesis 3.1.3)
        index_id = self._insert("metastore.IDXS", INDEX_NAME=name, ORIG_TBL_ID=base.id,
                                INDEX_TBL_ID=index_table.id, SD_ID=sd_id, CREATE_TIME=1,
                                INDEX_HANDLER_CLASS="org.apache.hadoop.hive.ql.index.compact.CompactIndexHandler")
        self._insert("metastore.INDEX_PARAMS", INDEX_ID=index_id, PARAM_KEY="k", PARAM_VALUE="v")
        return index_id

    def constraint(self, name: str, parent: Table, child: Table | None = None) -> None:
        self._insert("metastore.KEY_CONSTRAINTS", CONSTRAINT_NAME=name, POSITION=1, CONSTRAINT_TYPE=1 if child else 0,
                     PARENT_TBL_ID=parent.id, PARENT_CD_ID=parent.cd, PARENT_INTEGER_IDX=0,
                     CHILD_TBL_ID=child and child.id, CHILD_CD_ID=child and child.cd,
                     CHILD_INTEGER_IDX=0 if child else None, ENABLE_VALIDATE_RELY=0)


def _number(value: str) -> decimal.Decimal | None:
    try:
        return decimal.Decimal(value)
    except decimal.InvalidOperation:
        return None


def _date(value: str) -> datetime.date | None:
    try:
        return datetime.date.fromisoformat(value)
    except ValueError:
        return None


def count(tx, table: str, where: str = "1", *params) -> int:
    return tx.query_one(f"SELECT COUNT(*) FROM metastore.{table} WHERE {where}", params)[0]


def move_inode(tx, inode: Dir, parent: Dir, name: str) -> Dir:
    """The namespace's move: the inode row is replaced (new key, same id)."""
    new = Dir(inode.id, (partition_id(parent.id, name), parent.id, name), f"{parent.path}/{name}")
    tx.execute("DELETE FROM hops.hdfs_inodes WHERE partition_id=%s AND parent_id=%s AND name=%s", inode.key)
    tx.execute("INSERT INTO hops.hdfs_inodes (partition_id, parent_id, name, id, permission, is_dir)"
               " VALUES (%s, %s, %s, %s, 493, 1)", (*new.key, new.id))
    return new


@dataclass
class World:
    """/warehouse/sales.db with tables orders (partitioned ds/h, indexed), customers, lines,
    a view and an index table; /warehouse/other.db with one table; /user/hive/.Trash."""

    dirs: dict[str, Dir]
    dbs: dict[str, int]
    tables: dict[str, Table]
    parts: dict[str, int]
    index: int


@pytest.fixture
def world(db) -> World:
    with db.transaction() as tx:
        cat = Catalog(tx)
        d: dict[str, Dir] = {}
        d["warehouse"] = cat.mkdir(ROOT, "warehouse")
        d["trash"] = cat.mkdir(cat.mkdir(cat.mkdir(ROOT, "user"), "hive"), ".Trash")
        d["sales"] = cat.mkdir(d["warehouse"], "sales.db")
        d["other"] = cat.mkdir(d["warehouse"], "other.db")
        dbs = {"sales": cat.database("sales", d["sales"]), "other": cat.database("other", d["other"])}
        t: dict[str, Table] = {}
        for name in ("orders", "customers", "lines", "sales__orders_orders_idx__"):
            d[name] = cat.mkdir(d["sales"], name)
        t["orders"] = cat.table(dbs["sales"], "orders", d["orders"], keys=("ds", "h"))
        t["customers"] = cat.table(dbs["sales"], "customers", d["customers"])
        t["lines"] = cat.table(dbs["sales"], "lines", d["lines"])
        t["index_table"] = cat.table(dbs["sales"], "sales__orders_orders_idx__", d["sales__orders_orders_idx__"],
                                     table_type="INDEX_TABLE")
        t["view"] = cat.table(dbs["sales"], "orders_view", None, table_type="VIRTUAL_VIEW")
        d["events"] = cat.mkdir(d["other"], "events")
        t["events"] = cat.table(dbs["other"], "events", d["events"])
        parts = {}
        for ds, h in (("2024-01-01", "1"), ("2024-01-01", "2"), ("2024-01-02", "1")):
            ds_dir = d.get(f"ds={ds}") or cat.mkdir(d["orders"], f"ds={ds}")
            d[f"ds={ds}"] = ds_dir
            d[f"ds={ds}/h={h}"] = cat.mkdir(ds_dir, f"h={h}")
            parts[f"ds={ds}/h={h}"] = cat.partition(t["orders"], {"ds": ds, "h": h}, d[f"ds={ds}/h={h}"])
        index = cat.index("orders_idx", t["orders"], t["index_table"])
        cat.constraint("customers_pk", t["customers"])
        cat.constraint("orders_pk", t["orders"])
        cat.constraint("orders_customer_fk", t["customers"], child=t["orders"])
        cat.constraint("lines_order_fk", t["orders"], child=t["lines"])
    return World(d, dbs, t, parts, index)


def test_schema_is_valid_upgrade_is_idempotent_and_seeded(db):
    assert validate(db, COMPONENTS["metastore"]) == []
    assert upgrade(db, COMPONENTS["metastore"]) == []
    with db.transaction() as tx:
        assert tx.query_one("SELECT SCHEMA_VERSION FROM metastore.VERSION") == ("2.3.0",)
        for table in ("NEXT_TXN_ID", "NEXT_LOCK_ID", "NEXT_COMPACTION_QUEUE_ID", "NOTIFICATION_SEQUENCE"):
            assert count(tx, table) == 1, table
        assert tx.query_one("SELECT OWNER, EXPIRES <= NOW(3) FROM metastore.CLEANER_LEASE"
                            " WHERE NAME='cleaner'") == (None, 1)


def test_no_index_is_a_silent_long_unique_hash_and_rows_fit_ndb(db):
    """MariaDB turns a UNIQUE key longer than 3072 bytes into a HASH index that only it
    knows; NDB (8.0.18+) caps a row at 30,000 bytes, TEXT counting 264."""
    with db.transaction() as tx:
        hashes = tx.query("SELECT TABLE_NAME, INDEX_NAME FROM information_schema.STATISTICS"
                          " WHERE TABLE_SCHEMA='metastore' AND INDEX_TYPE <> 'BTREE'")
        columns = tx.query("SELECT TABLE_NAME, DATA_TYPE, CHARACTER_OCTET_LENGTH, NUMERIC_PRECISION"
                           " FROM information_schema.COLUMNS WHERE TABLE_SCHEMA='metastore'")
    assert hashes == []
    fixed = {"bigint": 8, "int": 4, "smallint": 2, "tinyint": 1, "bit": 1, "double": 8, "date": 3,
             "timestamp": 7, "enum": 2}      # an ENUM: 1 byte up to 255 values, else 2
    sizes: dict[str, int] = {}
    for table, kind, octets, precision in columns:
        if kind in ("varchar", "varbinary"):
            size = octets + 2
        elif kind in ("char", "binary"):
            size = octets
        elif kind.endswith(("text", "blob")):
            size = 264
        elif kind == "decimal":
            size = (precision // 9 + 2) * 4
        else:
            size = fixed[kind]
        sizes[table] = sizes.get(table, 0) + size
    too_big = {table: size for table, size in sizes.items() if size > 30000}
    assert too_big == {}, f"rows over NDB's 30,000 bytes: {too_big}"


def _cascade_graph(tx) -> tuple[dict, list]:
    edges = tx.query("SELECT UNIQUE_CONSTRAINT_SCHEMA, REFERENCED_TABLE_NAME, CONSTRAINT_SCHEMA, TABLE_NAME,"
                     " DELETE_RULE FROM information_schema.REFERENTIAL_CONSTRAINTS"
                     " WHERE CONSTRAINT_SCHEMA IN ('hops', 'metastore')")
    graph: dict = {}
    for parent_schema, parent, child_schema, child, rule in edges:
        if rule == "CASCADE":
            graph.setdefault((parent_schema, parent), set()).add((child_schema, child))
    return graph, edges


def test_cascades_from_an_inode_stay_shallow_and_are_never_blocked(db):
    with db.transaction() as tx:
        graph, edges = _cascade_graph(tx)

    def chains(node, seen=()):
        assert node not in seen, f"cascade cycle through {node}"
        below = [chain for child in graph.get(node, ()) for chain in chains(child, seen + (node,))]
        return [[node[1]] + chain for chain in below] or [[node[1]]]

    every = chains(("hops", "hdfs_inodes"))
    depth = max(len(chain) for chain in every) - 1
    assert depth == 5 < 15  # InnoDB fails a statement beyond 15 nested cascades
    deepest = sorted(" -> ".join(chain[1:]) for chain in every if len(chain) - 1 == depth)
    assert "SDS -> DBS -> TBLS -> PARTITIONS -> PARTITION_KEY_VALS" in deepest
    assert "SDS -> DBS -> TBLS -> IDXS -> INDEX_PARAMS" in deepest

    reachable, pending = set(), [("hops", "hdfs_inodes")]
    while pending:
        node = pending.pop()
        if node not in reachable:
            reachable.add(node)
            pending += graph.get(node, ())
    blocking = [(child, parent, rule) for parent_schema, parent, _, child, rule in edges
                if (parent_schema, parent) in reachable and rule not in ("CASCADE", "SET NULL")]
    assert blocking == [], "these foreign keys would make metadata block a file system delete"


def test_a_storage_descriptor_links_a_whole_existing_inode_or_none(db, world):
    with db.transaction() as tx:
        with pytest.raises(DriverError) as half:
            tx.execute("INSERT INTO metastore.SDS (LOCATION, PARTITION_ID) VALUES ('x', 1)")
        assert error_code(half.value) == CHECK_FAILED
        with pytest.raises(DriverError) as missing:
            tx.execute("INSERT INTO metastore.SDS (LOCATION, PARTITION_ID, PARENT_ID, NAME) VALUES ('x', 5, 5, 'no')")
        assert error_code(missing.value) == FK_NO_PARENT


def test_deleting_a_partition_directory_removes_the_partition(db, world):
    part, other = world.parts["ds=2024-01-01/h=1"], world.parts["ds=2024-01-02/h=1"]
    with db.transaction() as tx:
        sd = tx.query_one("SELECT SD_ID FROM metastore.PARTITIONS WHERE PART_ID=%s", (part,))[0]
        tx.execute("DELETE FROM hops.hdfs_inodes WHERE id=%s", (world.dirs["ds=2024-01-01/h=1"].id,))
    with db.transaction() as tx:
        for table in ("PARTITIONS", "PARTITION_KEY_VALS", "PARTITION_PARAMS", "PART_COL_STATS", "PART_PRIVS",
                      "PART_COL_PRIVS"):
            per_partition = 2 if table == "PARTITION_KEY_VALS" else 1  # two keys: ds, h
            assert count(tx, table, "PART_ID=%s", part) == 0, table
            assert count(tx, table, "PART_ID=%s", other) == per_partition, table
        for table in ("SDS", "SD_PARAMS", "BUCKETING_COLS", "SORT_COLS"):
            assert count(tx, table, "SD_ID=%s", sd) == 0, table
        assert count(tx, "TBLS", "TBL_ID=%s", world.tables["orders"].id) == 1


def _assert_orders_gone(tx, world: World, constraints_left: tuple = ("customers_pk",)) -> None:
    orders = world.tables["orders"]
    for table in ("TBLS", "TABLE_PARAMS", "PARTITION_KEYS", "TAB_COL_STATS", "TBL_PRIVS", "TBL_COL_PRIVS",
                  "PARTITIONS", "PARTITION_KEY_VALS"):
        assert count(tx, table, "TBL_ID=%s", orders.id) == 0, table
    assert count(tx, "PART_COL_STATS", f"PART_ID IN ({','.join(map(str, world.parts.values()))})") == 0
    assert count(tx, "IDXS") == count(tx, "INDEX_PARAMS") == 0
    names = [row[0] for row in tx.query("SELECT CONSTRAINT_NAME FROM metastore.KEY_CONSTRAINTS")]
    assert names == list(constraints_left)  # orders as parent (orders_pk, lines_order_fk) and as child


def test_deleting_a_table_directory_removes_the_table_and_what_hangs_off_it(db, world):
    with db.transaction() as tx:
        tx.execute("DELETE FROM hops.hdfs_inodes WHERE id=%s", (world.dirs["orders"].id,))
    with db.transaction() as tx:
        _assert_orders_gone(tx, world)
        assert count(tx, "SDS", "SD_ID=%s", world.tables["orders"].sd) == 0
        for name in ("customers", "lines", "index_table", "view"):  # index table: fsck reports it
            assert count(tx, "TBLS", "TBL_ID=%s", world.tables[name].id) == 1, name
        # The partitions' directories still exist in this hand-made tree, so their SDs stay
        # (a recursive delete would remove them; a move to the trash leaves them to fsck).
        assert count(tx, "SDS", "PARENT_ID IN (%s, %s)", world.dirs["ds=2024-01-01"].id,
                     world.dirs["ds=2024-01-02"].id) == 3


def test_deleting_a_database_directory_removes_the_database_five_levels_deep(db, world):
    sales = world.dbs["sales"]
    with db.transaction() as tx:
        sds_before = count(tx, "SDS")
        tx.execute("DELETE FROM hops.hdfs_inodes WHERE id=%s", (world.dirs["sales"].id,))
    with db.transaction() as tx:
        for table in ("DBS", "DATABASE_PARAMS", "FUNCS", "DB_PRIVS", "TBLS"):
            assert count(tx, table, "DB_ID=%s", sales) == 0, table
        assert count(tx, "FUNC_RU") == 1  # the other database's
        _assert_orders_gone(tx, world, constraints_left=())
        assert count(tx, "PARTITION_KEY_VALS") == 0  # inode -> SDS -> DBS -> TBLS -> PARTITIONS -> here
        assert count(tx, "TBLS", "TBL_ID=%s", world.tables["events"].id) == 1
        # Only the database's own SD went; 5 tables' + 3 partitions' + the index's SDs remain.
        assert count(tx, "SDS") == sds_before - 1
        assert count(tx, "SDS", f"NOT {_owned()}") == 9


def _owned() -> str:
    return ("(EXISTS (SELECT 1 FROM metastore.DBS o WHERE o.SD_ID = SDS.SD_ID)"
            " OR EXISTS (SELECT 1 FROM metastore.TBLS o WHERE o.SD_ID = SDS.SD_ID)"
            " OR EXISTS (SELECT 1 FROM metastore.PARTITIONS o WHERE o.SD_ID = SDS.SD_ID)"
            " OR EXISTS (SELECT 1 FROM metastore.IDXS o WHERE o.SD_ID = SDS.SD_ID))")


def test_moving_a_table_directory_away_removes_the_table_like_a_delete(db, world):
    with db.transaction() as tx:
        move_inode(tx, world.dirs["orders"], world.dirs["trash"], "orders")
    with db.transaction() as tx:
        _assert_orders_gone(tx, world)
        assert tx.query_one("SELECT id FROM hops.hdfs_inodes WHERE parent_id=%s AND name='orders'",
                            (world.dirs["trash"].id,)) == (world.dirs["orders"].id,)


def test_rename_that_repoints_its_storage_descriptors_keeps_the_metadata(db, world):
    """The rename contract in the SQL header: insert the new inode row, repoint, delete the
    old row, in one transaction (the order of hopshive.namespace's rename with repoint)."""
    orders, old = world.tables["orders"], world.dirs["orders"]
    new = Dir(old.id, (partition_id(world.dirs["sales"].id, "orders2"), world.dirs["sales"].id, "orders2"),
              world.dirs["sales"].path + "/orders2")
    with db.transaction() as tx:
        before = {table: count(tx, table) for table in ("TBLS", "PARTITIONS", "PARTITION_KEY_VALS", "SDS",
                                                        "KEY_CONSTRAINTS", "IDXS")}
        tx.execute("INSERT INTO hops.hdfs_inodes (partition_id, parent_id, name, id, permission, is_dir)"
                   " VALUES (%s, %s, %s, %s, 493, 1)", (*new.key, new.id))
        tx.execute("UPDATE metastore.SDS SET PARTITION_ID=%s, PARENT_ID=%s, NAME=%s, LOCATION=%s"
                   " WHERE SD_ID=%s AND PARTITION_ID=%s AND PARENT_ID=%s AND NAME=%s",
                   (*new.key, new.location, orders.sd, *old.key))
        tx.execute("UPDATE metastore.SDS s JOIN metastore.PARTITIONS p ON p.SD_ID = s.SD_ID"
                   " SET s.LOCATION = CONCAT(%s, SUBSTRING(s.LOCATION, %s)) WHERE p.TBL_ID=%s",
                   (new.location, len(old.location) + 1, orders.id))
        tx.execute("UPDATE metastore.TBLS SET TBL_NAME='orders2' WHERE TBL_ID=%s", (orders.id,))
        tx.execute("DELETE FROM hops.hdfs_inodes WHERE partition_id=%s AND parent_id=%s AND name=%s", old.key)
    with db.transaction() as tx:
        assert {table: count(tx, table) for table in before} == before
        assert tx.query_one("SELECT PARTITION_ID, PARENT_ID, NAME, LOCATION FROM metastore.SDS WHERE SD_ID=%s",
                            (orders.sd,)) == (*new.key, new.location)
        assert count(tx, "SDS", "LOCATION LIKE %s", f"{new.location}/ds=%") == 3
        tx.execute("DELETE FROM hops.hdfs_inodes WHERE partition_id=%s AND parent_id=%s AND name=%s", new.key)
    with db.transaction() as tx:  # the repointed link is live: deleting the new row cascades
        _assert_orders_gone(tx, world)


def test_updating_a_referenced_inode_key_is_refused(db, world):
    with db.transaction() as tx, pytest.raises(DriverError) as refused:
        tx.execute("UPDATE hops.hdfs_inodes SET name='renamed' WHERE id=%s", (world.dirs["orders"].id,))
    assert error_code(refused.value) == FK_PARENT_HAS_CHILDREN


def test_partition_names_are_unique_per_table_up_to_767_characters(db, world):
    orders, lines = world.tables["orders"], world.tables["lines"]
    long_name = "ds=" + "é" * 764
    with db.transaction() as tx:
        for tbl in (orders, lines):
            tx.execute("INSERT INTO metastore.PARTITIONS (CREATE_TIME, PART_NAME, TBL_ID) VALUES (1, %s, %s)",
                       (long_name, tbl.id))
        with pytest.raises(DriverError) as duplicate:
            tx.execute("INSERT INTO metastore.PARTITIONS (CREATE_TIME, PART_NAME, TBL_ID) VALUES (1, %s, %s)",
                       (long_name, orders.id))
        assert error_code(duplicate.value) == DUPLICATE
        assert tx.query_one("SELECT PART_NAME FROM metastore.PARTITIONS WHERE TBL_ID=%s AND PART_NAME=%s",
                            (lines.id, long_name)) == (long_name,)


def test_key_values_carry_their_partitions_table(db, world):
    part = world.parts["ds=2024-01-01/h=1"]
    with db.transaction() as tx:
        assert tx.query("SELECT PART_KEY_VAL, PART_KEY_VAL_NUM, PART_KEY_VAL_DATE FROM metastore.PARTITION_KEY_VALS"
                        " WHERE PART_ID=%s ORDER BY INTEGER_IDX", (part,)) == [
            ("2024-01-01", None, datetime.date(2024, 1, 1)), ("1", decimal.Decimal(1), None)]
        with pytest.raises(DriverError) as wrong_table:
            tx.execute("INSERT INTO metastore.PARTITION_KEY_VALS (PART_ID, TBL_ID, PART_KEY_VAL, INTEGER_IDX)"
                       " VALUES (%s, %s, 'x', 5)", (part, world.tables["lines"].id))
        assert error_code(wrong_table.value) == FK_NO_PARENT
