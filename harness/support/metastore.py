"""The deployed metastore as the scenarios see it: Thrift clients per instance, its tables
read with raw SQL (PyMySQL, like harness/support/inodes.py), and clean-up of what a scenario
made.  Builders and invariants are shared with the component tests (tests/support/hms.py)."""

from __future__ import annotations

import contextlib

from pymetastore.hive_metastore import ttypes as api

from tests.support import hms
from tests.support.polling import wait_until

# Rows of the `metastore` schema below a location prefix, by kind.
_BELOW = "LEFT(s.LOCATION, CHAR_LENGTH(%s)) = %s"
_COUNTS = {
    "databases": f"SELECT COUNT(*) FROM metastore.DBS o JOIN metastore.SDS s ON s.SD_ID=o.SD_ID WHERE {_BELOW}",
    "tables": f"SELECT COUNT(*) FROM metastore.TBLS o JOIN metastore.SDS s ON s.SD_ID=o.SD_ID WHERE {_BELOW}",
    "partitions": f"SELECT COUNT(*) FROM metastore.PARTITIONS o JOIN metastore.SDS s ON s.SD_ID=o.SD_ID"
                  f" WHERE {_BELOW}",
    "descriptors": f"SELECT COUNT(*) FROM metastore.SDS s WHERE {_BELOW}",
}


@contextlib.contextmanager
def client(instance: tuple, user: str, timeout: float = 120.0):
    """A Hive 3.1 Thrift client of one instance ``(host, port)``, acting as ``user``."""
    host, port = instance
    with hms.thrift_client(port, host=host, user=user, timeout=timeout) as connection:
        yield connection


def probe(instance: tuple, timeout: float = 5.0) -> str | None:
    """None when the instance answers get_database('default'), else why not."""
    try:
        with client(instance, user=None, timeout=timeout) as connection:
            connection.get_database("default")
        return None
    except Exception as exc:  # noqa: BLE001 -- any failure is "not healthy"
        return f"{type(exc).__name__}: {str(exc)[:200]}"


def wait_healthy(instance: tuple, deadline: float = 60.0) -> None:
    last = {}

    def healthy() -> bool:
        last["why"] = probe(instance, timeout=2.0)
        return last["why"] is None
    wait_until(healthy, deadline, lambda _: f"metastore {instance[0]}:{instance[1]} never answered: {last['why']}")


# ---------------------------------------------------------------------- database
def query(connection):
    """``query(sql, params)`` on a PyMySQL connection: the form tests.support.hms expects."""
    def run(sql: str, params=()) -> list[tuple]:
        with connection.cursor() as cursor:
            cursor.execute(sql, params or None)
            return list(cursor.fetchall())
    return run


def counts(connection, prefix: str) -> dict[str, int]:
    """Databases, tables, partitions and descriptors whose location is below ``prefix``."""
    run = query(connection)
    return {kind: run(sql, (prefix, prefix))[0][0] for kind, sql in _COUNTS.items()}


def violations(connection, prefix: str, owned: bool = True) -> dict:
    """The consistency invariants (tests.support.hms), the ownership check limited to
    descriptors below ``prefix`` (this run's)."""
    return hms.violations(query(connection), owned, prefix)


def unowned(connection, prefix: str) -> list[str]:
    """Locations of descriptors below ``prefix`` that nothing owns (left to fsck)."""
    return sorted(loc for _, loc in query(connection)(hms.UNOWNED_SDS + hms.BELOW, (prefix, prefix)))


def active_ddl(connection, user: str = "hops_metastore") -> list[tuple]:
    """(connection id, rows modified, state) of the open transactions of the metastore's
    account; state is RUNNING or LOCK WAIT."""
    return query(connection)(
        "SELECT t.trx_mysql_thread_id, t.trx_rows_modified, t.trx_state FROM information_schema.INNODB_TRX t"
        " JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id WHERE p.USER = %s", (user,))


def sweep_orphans(db_settings: dict, prefix: str) -> dict[str, int]:
    """Delete the unowned descriptors below ``prefix`` (left behind when a scenario removed
    a directory behind the metastore's back) and the column descriptors and serdes only
    they used, with the metastore's own fsck repair (which re-checks each row)."""
    from hopshive.core.config import DATABASE_DEFAULTS
    from hopshive.core.db import Database
    from hopshive.metastore import fsck

    database = Database(dict(DATABASE_DEFAULTS, pool_size=1, **db_settings))
    try:
        def work(tx):
            sds = tx.query("SELECT s.SD_ID, s.CD_ID, s.SERDE_ID FROM metastore.SDS s WHERE "
                           + hms.OWNED_BY_NOTHING + hms.BELOW, (prefix, prefix))
            done = {fsck.ORPHAN_SD: fsck.repair_chunk(tx, fsck.ORPHAN_SD, [r[0] for r in sds], 0)}
            done[fsck.ORPHAN_CD] = fsck.repair_chunk(tx, fsck.ORPHAN_CD, sorted({r[1] for r in sds if r[1]}), 0)
            done[fsck.ORPHAN_SERDE] = fsck.repair_chunk(tx, fsck.ORPHAN_SERDE, sorted({r[2] for r in sds if r[2]}), 0)
            return done
        return database.run(work)
    finally:
        database.close()


def drop_databases(instance: tuple, user: str, prefix: str) -> list[str]:
    """Drop (cascade, with their data) every database whose name starts with ``prefix``."""
    with client(instance, user) as hive:
        names = [n for n in hive.get_all_databases() if n.startswith(prefix)]
        for name in names:
            with contextlib.suppress(api.NoSuchObjectException):
                hive.drop_database(name, True, True)
    return names


def wait_no_ddl(connection, deadline: float = 60.0) -> None:
    """Until the metastore's account has no transaction with changes open (a killed
    instance's connections are rolled back by the server once it notices them closed)."""
    last: list = []

    def idle() -> bool:
        last[:] = [row for row in active_ddl(connection) if row[1]]
        return not last
    wait_until(idle, deadline, lambda _: f"metastore transactions still open: {last}")

