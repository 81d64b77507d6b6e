"""From binlog row events to the objects worth checking (pure logic, no database).

MariaDB logs only the rows a statement changed directly: rows removed by ON DELETE CASCADE
never appear (facts.md).  So each event is read for what it *implies*:

* a directory inode deleted, or moved (a move deletes and re-inserts the row, same id, or
  updates its key): SDs stored below it may have lost their owner (a database or table
  directory moved away takes its tables and partitions out of the catalog), and SDs over
  it cascaded away with their CDs, serdes and skewed lists, which no event names;
* a DBS / TBLS / PARTITIONS / IDXS row deleted: its SD, and the SDs below that SD's
  directory, may be orphaned; a deleted IDXS row leaves its index table behind;
* an SDS row deleted: its CD and serde may be orphaned (its skewed lists cascaded).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..metastore.orphans import ORPHAN_CD, ORPHAN_SERDE

INODES = ("hops", "hdfs_inodes")
OWNERS = {("metastore", "DBS"), ("metastore", "TBLS"), ("metastore", "PARTITIONS"), ("metastore", "IDXS")}
SDS = ("metastore", "SDS")
IDXS = ("metastore", "IDXS")
WATCHED_TABLES = ["hdfs_inodes", "DBS", "TBLS", "PARTITIONS", "IDXS", "SDS"]
WATCHED_SCHEMAS = ["hops", "metastore"]


@dataclass
class Touches:
    """What one or more binlog transactions make worth checking."""

    inode_ids: set[int] = field(default_factory=set)    # directories deleted or moved
    owner_sds: set[int] = field(default_factory=set)    # SDs whose owner row was deleted
    parts: dict[str, set[int]] = field(default_factory=lambda: {ORPHAN_CD: set(), ORPHAN_SERDE: set()})
    index_tables: set[int] = field(default_factory=set)  # INDEX_TBL_ID of deleted indexes
    cascaded: bool = False   # SDs may have cascaded away unseen: check all CDs/serdes/lists
    sds_deleted: bool = False  # their skewed lists cascaded unseen: check all lists
    events: int = 0

    def __bool__(self) -> bool:
        return bool(self.inode_ids or self.owner_sds or any(self.parts.values()) or self.index_tables
                    or self.cascaded or self.sds_deleted)

    def merge(self, other: "Touches") -> None:
        self.inode_ids |= other.inode_ids
        self.owner_sds |= other.owner_sds
        for kind, ids in other.parts.items():
            self.parts.setdefault(kind, set()).update(ids)
        self.index_tables |= other.index_tables
        self.cascaded |= other.cascaded
        self.sds_deleted |= other.sds_deleted
        self.events += other.events

    def add_rows(self, schema: str, table: str, action: str, rows: list[dict]) -> None:
        """Record one row event.  ``action`` is "delete", "update" or "write"; ``rows`` as
        pymysqlreplication gives them ({"values": …} or {"before_values", "after_values"})."""
        self.events += 1
        where = (schema, table)
        if where == INODES:
            for row in rows:
                self._inode(action, row)
        elif action == "delete" and where in OWNERS:
            for row in rows:
                values = row["values"]
                if values.get("SD_ID") is not None:
                    self.owner_sds.add(int(values["SD_ID"]))
                if where == IDXS and values.get("INDEX_TBL_ID") is not None:
                    self.index_tables.add(int(values["INDEX_TBL_ID"]))
        elif action == "delete" and where == SDS:
            self.sds_deleted = True
            for row in rows:
                values = row["values"]
                if values.get("CD_ID") is not None:
                    self.parts[ORPHAN_CD].add(int(values["CD_ID"]))
                if values.get("SERDE_ID") is not None:
                    self.parts[ORPHAN_SERDE].add(int(values["SERDE_ID"]))

    def _inode(self, action: str, row: dict) -> None:
        if action == "delete":
            values = row["values"]
            if values.get("is_dir"):
                self.inode_ids.add(int(values["id"]))
                self.cascaded = True
        elif action == "update":
            before, after = row["before_values"], row["after_values"]
            moved = any(before.get(k) != after.get(k) for k in ("partition_id", "parent_id", "name"))
            if after.get("is_dir") and moved:
                self.inode_ids.add(int(after["id"]))
                self.cascaded = True
