"""Directory moves of the HBase store in flight, recorded in ``metastore.HBASE_MOVES``
(see ``schema/004_hbase_moves.sql`` for the protocol): the metastore records a move's new
location before it writes the rows naming it, and deletes the record in the move's own
transaction; the cleaner does not drop metadata at or below a recorded location."""

from __future__ import annotations

from typing import Iterable

from ....core.db import Tx

TABLE = "metastore.HBASE_MOVES"
# A record this old belongs to a metastore that died mid-move (a move rewrites one HBase row
# per partition: a million partitions take minutes, not an hour).
ABANDONED_AFTER_SECONDS = 3600


def begin(tx: Tx, location: str) -> int:
    """Record a move to ``location``; returns the record's id."""
    tx.execute(f"INSERT INTO {TABLE} (LOCATION) VALUES (%s)", (location,))
    return tx.lastrowid


def end(tx: Tx, ids: Iterable[int]) -> None:
    """Delete the records ``ids`` (in the move's transaction, or after it failed)."""
    for move_id in ids:
        tx.execute(f"DELETE FROM {TABLE} WHERE ID=%s", (move_id,))


def in_flight(tx: Tx) -> list[str]:
    """Locations of the moves in flight (abandoned ones left out)."""
    return [row[0] for row in tx.query(
        f"SELECT LOCATION FROM {TABLE} WHERE STARTED_AT > NOW(3) - INTERVAL %s SECOND", (ABANDONED_AFTER_SECONDS,))]


def forget_abandoned(tx: Tx) -> int:
    """Delete the records of moves abandoned by a metastore that died; returns how many."""
    return tx.execute(f"DELETE FROM {TABLE} WHERE STARTED_AT <= NOW(3) - INTERVAL %s SECOND",
                      (ABANDONED_AFTER_SECONDS,))
