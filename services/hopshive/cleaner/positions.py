"""MariaDB GTID positions (pure logic) and where the cleaner keeps its own.

A MariaDB GTID is ``domain-server-sequence``; a position is one GTID per replication
domain (a Galera cluster with ``wsrep_gtid_mode`` writes one domain whichever node commits).
The cleaner stores the position up to which it has handled the binlog in
``metastore.CLEANER_POSITION``; the write is fenced by the lease (see ``lease.Lease.fence``).
"""

from __future__ import annotations

from ..core.db import Tx

MS = "metastore"


class GtidPosition:
    """A MariaDB GTID position: the last GTID seen in each domain."""

    def __init__(self, text: str = ""):
        self._last: dict[int, tuple[int, int]] = {}
        for part in (p.strip() for p in text.split(",")):
            if part:
                self.advance(part)

    def advance(self, gtid: str) -> None:
        """Record ``gtid`` (``domain-server-seq``) as handled."""
        try:
            domain, server, seq = (int(x) for x in gtid.split("-"))
        except ValueError:
            raise ValueError(f"not a MariaDB GTID: {gtid!r} (expected domain-server-sequence)") from None
        self._last[domain] = (server, seq)

    def sequence(self, domain: int) -> int | None:
        entry = self._last.get(domain)
        return entry[1] if entry else None

    def behind(self, other: "GtidPosition") -> int:
        """How many transactions ``other`` is ahead of this position, over all domains."""
        return sum(max(0, seq - (self.sequence(domain) or 0)) for domain, (_, seq) in other._last.items())

    def __str__(self) -> str:
        return ",".join(f"{d}-{s}-{n}" for d, (s, n) in sorted(self._last.items()))

    def __bool__(self) -> bool:
        return bool(self._last)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GtidPosition) and self._last == other._last


def server_position(tx: Tx) -> GtidPosition:
    """The position of the server's binlog now (everything written so far)."""
    return GtidPosition(tx.query_one("SELECT @@GLOBAL.gtid_binlog_pos")[0] or "")


def load(tx: Tx, name: str) -> tuple[GtidPosition | None, object]:
    """(stored position or None, time of the last sweep or None)."""
    row = tx.query_one(f"SELECT GTID, LAST_SWEEP_AT FROM {MS}.CLEANER_POSITION WHERE NAME=%s", (name,))
    return (GtidPosition(row[0]), row[1]) if row else (None, None)


def save(tx: Tx, name: str, position: GtidPosition, epoch: int, refs_rebuilt: bool = False) -> None:
    """Store the position; ``refs_rebuilt`` says the record of what SDs use
    (cleaner/refs.py) was just rebuilt, so that the binlog from here keeps it exact."""
    tx.execute(f"INSERT INTO {MS}.CLEANER_POSITION (NAME, GTID, EPOCH, UPDATED_AT, REFS_SEEDED_AT)"
               " VALUES (%s, %s, %s, NOW(3), IF(%s, NOW(3), NULL))"
               " ON DUPLICATE KEY UPDATE GTID=VALUES(GTID), EPOCH=VALUES(EPOCH), UPDATED_AT=VALUES(UPDATED_AT),"
               " REFS_SEEDED_AT=IF(%s, NOW(3), REFS_SEEDED_AT)", (name, str(position), epoch, refs_rebuilt, refs_rebuilt))


def refs_seeded(tx: Tx, name: str) -> bool:
    row = tx.query_one(f"SELECT REFS_SEEDED_AT IS NOT NULL FROM {MS}.CLEANER_POSITION WHERE NAME=%s", (name,))
    return bool(row and row[0])


def refs_done(tx: Tx, name: str, epoch: int) -> None:
    tx.execute(f"UPDATE {MS}.CLEANER_POSITION SET REFS_SEEDED_AT=NOW(3), EPOCH=%s WHERE NAME=%s", (epoch, name))


def sweep_done(tx: Tx, name: str, epoch: int) -> None:
    tx.execute(f"UPDATE {MS}.CLEANER_POSITION SET LAST_SWEEP_AT=NOW(3), EPOCH=%s WHERE NAME=%s", (epoch, name))
