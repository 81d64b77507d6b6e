"""server2 as a platform user reaches it: PyHive over SASL PLAIN with the user's e-mail and
password, in a project's database."""

from __future__ import annotations

from pyhive import hive


def connect(targets, email: str, password: str, database: str):
    host, port = targets.server2
    return hive.connect(host=host, port=port, username=email, password=password, auth="CUSTOM", database=database)


def query(conn, sql: str) -> list:
    """The statement's rows (none for a statement without a result set)."""
    cursor = conn.cursor()
    cursor.execute(sql)
    return cursor.fetchall() if cursor.description else []
