"""The connection pool on a list of database nodes: a node that refuses connections is
skipped, a connection lost before COMMIT has its transaction re-run on another one, and a
connection lost during COMMIT is reported, never re-run (the change could apply twice)."""

from __future__ import annotations

import MySQLdb
import pytest

from hopshive.core.db import CommitOutcomeUnknown, Database
from tests.support.mariadb import _free_port


@pytest.fixture
def tcp_config(db, mariadb):
    """The private server over TCP as a user of its own, behind a node that is down."""
    with db.transaction() as tx:
        tx.execute("CREATE USER IF NOT EXISTS 'failover'@'127.0.0.1' IDENTIFIED BY 'pw'")
        tx.execute("GRANT ALL ON *.* TO 'failover'@'127.0.0.1'")
        tx.execute("CREATE TABLE IF NOT EXISTS hops.failover_probe (n INT)")
    return {"user": "failover", "password": "pw", "host": "127.0.0.1", "port": mariadb.port, "pool_size": 4,
            "connect_timeout": 2, "hosts": [f"127.0.0.1:{_free_port()}", f"127.0.0.1:{mariadb.port}"]}


def rows(database) -> int:
    return database.run(lambda tx: tx.query_one("SELECT COUNT(*) FROM hops.failover_probe")[0], readonly=True)


def test_a_node_that_is_down_is_skipped(tcp_config):
    database = Database(tcp_config)
    assert database.run(lambda tx: tx.query_one("SELECT 1")[0]) == 1
    assert database.endpoints[database._preferred]["port"] == tcp_config["port"]
    database.close()


def test_a_connection_lost_before_commit_reruns_the_transaction(tcp_config, db):
    database = Database(tcp_config)
    attempts = []

    def work(tx):
        attempts.append(1)
        tx.execute("INSERT INTO hops.failover_probe VALUES (1)")
        if len(attempts) == 1:      # the node drops this connection mid-transaction
            own = tx.query_one("SELECT CONNECTION_ID()")[0]
            db.run(lambda admin: admin.execute(f"KILL CONNECTION {int(own)}"))
            tx.query("SELECT 1")
    database.run(work)
    assert len(attempts) == 2
    assert rows(database) == 1, "the lost attempt was rolled back, the retry applied once"
    database.close()


def test_a_connection_lost_during_commit_is_reported_not_rerun(tcp_config, monkeypatch):
    database = Database(tcp_config)
    attempts = []

    def lost(self):
        raise MySQLdb.OperationalError(2013, "Lost connection to server during query")
    monkeypatch.setattr(MySQLdb.connections.Connection, "commit", lost)

    def work(tx):
        attempts.append(1)
        tx.execute("INSERT INTO hops.failover_probe VALUES (2)")
    with pytest.raises(CommitOutcomeUnknown, match="may or may not have been applied"):
        database.run(work)
    assert len(attempts) == 1
    monkeypatch.undo()
    database.close()
