"""From binlog row events to the objects worth checking (pure logic, no database).

MariaDB logs only the rows a statement changed directly: rows removed by ON DELETE CASCADE
never appear (facts.md).  So each event is read for what it *implies*:

* a directory inode deleted, or moved (a move deletes and re-inserts the row, same id, or
  updates its key): the SDs over its old key cascaded away unseen (``keys``: the cleaner's
  record, ``refs``, tells what they used), and SDs stored below it may have lost their
  owner (``inode_ids``: a database or table directory moved away takes its tables and
  partitions out of the catalog);
* a DBS / TBLS / PARTITIONS / IDXS row deleted: its SD, and the SDs below that SD's
  directory, may be orphaned; a deleted IDXS row leaves its index table behind;
* an SDS row deleted: its CD and serde may be orphaned, and what the record says it used;
  an SDS row updated to another CD or serde: the old one may be orphaned;
* SDS, SKEWED_VALUES, SKEWED_COL_VALUE_LOC_MAP, TBLS, PARTITIONS and IDXS rows written or
  changed: what an SD uses, and which SDs hang off it without being stored below its
  directory, for the record (``ref_changes``, applied in binlog order).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from ..metastore.orphans import ORPHAN_CD, ORPHAN_SERDE

INODES = ("hops", "hdfs_inodes")
OWNERS = {("metastore", "DBS"), ("metastore", "TBLS"), ("metastore", "PARTITIONS"), ("metastore", "IDXS")}
SDS = ("metastore", "SDS")
IDXS = ("metastore", "IDXS")
# Skewed-value lists: table -> (SD column, list column).
SKEW = {("metastore", "SKEWED_VALUES"): ("SD_ID_OID", "STRING_LIST_ID_EID"),
        ("metastore", "SKEWED_COL_VALUE_LOC_MAP"): ("SD_ID", "STRING_LIST_ID_KID")}
# Tables and partitions: table -> (id column, RefChange kind).
CHILDREN = {("metastore", "TBLS"): ("TBL_ID", "table"), ("metastore", "PARTITIONS"): ("PART_ID", "partition")}
WATCHED_TABLES = ["hdfs_inodes", "DBS", "TBLS", "PARTITIONS", "IDXS", "SDS", "SKEWED_VALUES",
                  "SKEWED_COL_VALUE_LOC_MAP"]
WATCHED_SCHEMAS = ["hops", "metastore"]
KEY = ("partition_id", "parent_id", "name")
SD_KEY = ("PARTITION_ID", "PARENT_ID", "NAME")


class RefChange(NamedTuple):
    """What an SD uses now.  ``what`` is "sd" (a new SD: ``key``, ``cd``, ``serde``),
    "sd_update" (the same for an existing one), "list" (``sd`` lists ``ref`` as skewed
    values), "table" / "partition" (``sd`` is a TBL_ID / PART_ID, ``ref`` its SD) or "index"
    (``sd`` is the index's base TBL_ID, ``ref`` its SD, ``other`` its index table)."""

    what: str
    sd: int
    key: tuple | None = None
    cd: int | None = None
    serde: int | None = None
    ref: int | None = None
    other: int | None = None


@dataclass
class Touches:
    """What one or more binlog transactions make worth checking."""

    inode_ids: set[int] = field(default_factory=set)    # directories deleted or moved
    keys: set[tuple] = field(default_factory=set)       # their old inode keys
    owner_sds: set[int] = field(default_factory=set)    # SDs whose owner row was deleted
    gone_sds: set[int] = field(default_factory=set)     # SDs deleted directly
    parts: dict[str, set[int]] = field(default_factory=lambda: {ORPHAN_CD: set(), ORPHAN_SERDE: set()})
    index_tables: set[int] = field(default_factory=set)  # INDEX_TBL_ID of deleted indexes
    ref_changes: list[RefChange] = field(default_factory=list)
    events: int = 0

    @property
    def cleaning(self) -> bool:
        """Whether something may have been orphaned (not only recorded)."""
        return bool(self.inode_ids or self.keys or self.owner_sds or self.gone_sds or any(self.parts.values())
                    or self.index_tables)

    def __bool__(self) -> bool:
        return self.cleaning or bool(self.ref_changes)

    def merge(self, other: "Touches") -> None:
        self.inode_ids |= other.inode_ids
        self.keys |= other.keys
        self.owner_sds |= other.owner_sds
        self.gone_sds |= other.gone_sds
        for kind, ids in other.parts.items():
            self.parts.setdefault(kind, set()).update(ids)
        self.index_tables |= other.index_tables
        self.ref_changes += other.ref_changes
        self.events += other.events

    def add_rows(self, schema: str, table: str, action: str, rows: list[dict]) -> None:
        """Record one row event.  ``action`` is "delete", "update" or "write"; ``rows`` as
        pymysqlreplication gives them ({"values": …} or {"before_values", "after_values"})."""
        self.events += 1
        where = (schema, table)
        for row in rows:
            if where == INODES:
                self._inode(action, row)
            elif where == SDS:
                self._sd(action, row)
            elif where in SKEW and action == "write":
                sd_column, list_column = SKEW[where]
                values = row["values"]
                self.ref_changes.append(RefChange("list", int(values[sd_column]), ref=int(values[list_column])))
            elif where in CHILDREN and (action == "write" or action == "update" and _moved_owner(row)):
                values = row["values"] if action == "write" else row["after_values"]
                id_column, what = CHILDREN[where]
                if values.get("SD_ID") is not None:
                    self.ref_changes.append(RefChange(what, int(values[id_column]), ref=int(values["SD_ID"])))
            elif where == IDXS and action == "write":
                values = row["values"]
                self.ref_changes.append(RefChange("index", int(values["ORIG_TBL_ID"]), ref=_id(values["SD_ID"]),
                                                  other=_id(values["INDEX_TBL_ID"])))
            elif action == "delete" and where in OWNERS:
                values = row["values"]
                if values.get("SD_ID") is not None:
                    self.owner_sds.add(int(values["SD_ID"]))
                if where == IDXS and values.get("INDEX_TBL_ID") is not None:
                    self.index_tables.add(int(values["INDEX_TBL_ID"]))

    def _inode(self, action: str, row: dict) -> None:
        if action == "delete":
            values = row["values"]
            if values.get("is_dir"):
                self.inode_ids.add(int(values["id"]))
                self.keys.add(tuple(values[k] for k in KEY))
        elif action == "update":
            before, after = row["before_values"], row["after_values"]
            if after.get("is_dir") and any(before.get(k) != after.get(k) for k in KEY):
                self.inode_ids.add(int(after["id"]))
                self.keys.add(tuple(before[k] for k in KEY))

    def _sd(self, action: str, row: dict) -> None:
        if action == "delete":
            values = row["values"]
            self.gone_sds.add(int(values["SD_ID"]))
            self._freed(values)
        elif action == "write":
            values = row["values"]
            self.ref_changes.append(RefChange("sd", int(values["SD_ID"]), _sd_key(values), _id(values.get("CD_ID")),
                                              _id(values.get("SERDE_ID"))))
        else:
            before, after = row["before_values"], row["after_values"]
            if any(before.get(k) != after.get(k) for k in (*SD_KEY, "CD_ID", "SERDE_ID")):
                self.ref_changes.append(RefChange("sd_update", int(after["SD_ID"]), _sd_key(after),
                                                  _id(after.get("CD_ID")), _id(after.get("SERDE_ID"))))
                self._freed({k: before.get(k) for k in ("CD_ID", "SERDE_ID") if before.get(k) != after.get(k)})

    def _freed(self, values: dict) -> None:
        """The CD and serde an SD row no longer uses may be orphans now."""
        if values.get("CD_ID") is not None:
            self.parts[ORPHAN_CD].add(int(values["CD_ID"]))
        if values.get("SERDE_ID") is not None:
            self.parts[ORPHAN_SERDE].add(int(values["SERDE_ID"]))


def _moved_owner(row: dict) -> bool:
    """A table moved to another database, or an object given another SD."""
    before, after = row["before_values"], row["after_values"]
    return any(before.get(k) != after.get(k) for k in ("DB_ID", "SD_ID", "TBL_ID"))


def _id(value) -> int | None:
    return None if value is None else int(value)


def _sd_key(values: dict) -> tuple | None:
    key = tuple(values.get(k) for k in SD_KEY)
    return None if key[0] is None else key
