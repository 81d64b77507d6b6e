"""The deployed metastore as the scenarios see it: Thrift clients per instance, its tables
read with raw SQL (PyMySQL, like harness/support/inodes.py), and clean-up of what a scenario
made.  Builders and invariants are shared with the component tests (tests/support/hms.py)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from pymetastore.hive_metastore import ttypes as api

from hopshive.metastore.authentication import REFUSAL
from tests.support import hms
from tests.support.polling import wait_until

from . import identity, trust

# Rows of the `metastore` schema below a location prefix, by kind.
_BELOW = "LEFT(s.LOCATION, CHAR_LENGTH(%s)) = %s"
_COUNTS = {
    "databases": f"SELECT COUNT(*) FROM metastore.DBS o JOIN metastore.SDS s ON s.SD_ID=o.SD_ID WHERE {_BELOW}",
    "tables": f"SELECT COUNT(*) FROM metastore.TBLS o JOIN metastore.SDS s ON s.SD_ID=o.SD_ID WHERE {_BELOW}",
    "partitions": f"SELECT COUNT(*) FROM metastore.PARTITIONS o JOIN metastore.SDS s ON s.SD_ID=o.SD_ID"
                  f" WHERE {_BELOW}",
    "descriptors": f"SELECT COUNT(*) FROM metastore.SDS s WHERE {_BELOW}",
}


@dataclass(frozen=True)
class Scratch:
    """A scenario's own names and directory (the `scratch` fixture)."""
    prefix: str       # of its database names
    path: str         # its directory, below the run root
    uri: str          # the same as webhdfs://host:port/path
    started: object   # the database server's clock when it began (see sweep_orphans)


def client(instance: tuple, user: str, timeout: float = 120.0) -> hms.thrift_client:
    """A Hive 3.1 Thrift client of one instance ``(host, port)``, acting as ``user`` (use it
    with ``with``): authenticated by ``user``'s token over SASL where the deployment wants one,
    else by set_ugi.  ``user=None``: neither."""
    host, port = instance
    token = identity.metastore_token(user)
    if token is not None:
        return hms.thrift_client(port, host=host, user=None, timeout=timeout, token=token, ca_file=trust.ca_file())
    return hms.thrift_client(port, host=host, user=user, timeout=timeout, ca_file=trust.ca_file())


def probe(instance: tuple, timeout: float = 5.0) -> str | None:
    """None when the instance answers get_database('default') (or, in token mode, refuses a
    client without a token as it should), else why not."""
    try:
        with client(instance, user=None, timeout=timeout) as connection:
            connection.get_database("default")
        return None
    except Exception as exc:  # noqa: BLE001 -- any failure is "not healthy"
        if REFUSAL in str(exc):
            return None
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


def now(connection):
    """The database server's clock (CREATED_AT of the metastore's rows uses it)."""
    return query(connection)("SELECT NOW(3)")[0][0]


# Orphan kinds fsck repairs, in its order (descriptors free the rest), with their tables.
_SWEPT = (("orphan_sd", "SDS", "SD_ID"), ("orphan_cd", "CDS", "CD_ID"), ("orphan_serde", "SERDES", "SERDE_ID"),
          ("orphan_skewed_list", "SKEWED_STRING_LIST", "STRING_LIST_ID"))


def sweep_orphans(db_settings: dict, since) -> dict[str, int]:
    """Delete what a scenario orphaned: descriptors nothing owns, and column descriptors,
    serdes and skewed-value lists no descriptor uses, among the rows created since
    ``since`` (a server timestamp).  Directories removed behind the metastore's back leave
    these (thesis Table 3.1: fsck's, i.e. the cleaner's, to clean); the harness removes its
    own with the metastore's fsck repair, which re-checks every row under lock."""
    from hopshive.core.config import DATABASE_DEFAULTS
    from hopshive.core.db import Database
    from hopshive.metastore import fsck

    database = Database(dict(DATABASE_DEFAULTS, pool_size=1, wsrep_sync_wait=True, **db_settings))
    try:
        def work(tx):
            done = {}
            for kind, table_name, column in _SWEPT:
                ids = [row[0] for row in tx.query(
                    f"SELECT {column} FROM metastore.{table_name} WHERE CREATED_AT >= %s", (since,))]
                done[kind] = fsck.repair_chunk(tx, kind, ids, 0) if ids else 0
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

