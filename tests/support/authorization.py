"""One call of each write family of the metastore's authorization rules (README of
hopshive.metastore), as another user would make it on a victim's database ``db`` holding a
partitioned table ``table`` with partition ``["1"]`` and function ``f``.  Shared by the
component tests and the e2e harness.  ``call(client, admin)``: ``admin`` (the Hive admin)
reads what the call needs."""

from __future__ import annotations

from pymetastore.hive_metastore import ttypes as api

from tests.support.hms import partition, table


def _stats(db: str, name: str):
    desc = api.ColumnStatisticsDesc(isTblLevel=True, dbName=db, tableName=name)
    data = api.ColumnStatisticsData(longStats=api.LongColumnStatsData(numNulls=0, numDVs=1, lowValue=1, highValue=1))
    return api.ColumnStatistics(statsDesc=desc, statsObj=[api.ColumnStatisticsObj("a", "int", data)])


def _function(db: str, name: str, owner: str):
    return api.Function(functionName=name, dbName=db, className="x.F", ownerName=owner, ownerType=1, createTime=0,
                        functionType=1, resourceUris=[])


def _altered(admin, db: str, name: str, change):
    t = admin.get_table(db, name)
    change(t)
    return t


def write_calls(db: str, name: str, elsewhere: str, user: str) -> list[tuple]:
    """[(family, call)]; ``elsewhere``: a location URI the table could move to; ``user``: who
    calls (the owner some calls try to take)."""
    return [
        ("drop_database", lambda c, a: c.drop_database(db, False, True)),
        ("alter_database owner", lambda c, a: c.alter_database(
            db, api.Database(name=db, ownerName=user, parameters={}))),
        ("create_table", lambda c, a: c.create_table(table(db, "intruder", owner=user))),
        ("drop_table", lambda c, a: c.drop_table(db, name, False)),
        ("alter_table owner", lambda c, a: c.alter_table(db, name, _altered(a, db, name,
                                                                            lambda t: setattr(t, "owner", user)))),
        ("alter_table location", lambda c, a: c.alter_table(
            db, name, _altered(a, db, name, lambda t: setattr(t.sd, "location", elsewhere)))),
        ("rename table", lambda c, a: c.alter_table(db, name, _altered(a, db, name,
                                                                       lambda t: setattr(t, "tableName", "renamed")))),
        ("add_partition", lambda c, a: c.add_partition(partition(a.get_table(db, name), ["2"]))),
        ("drop_partition", lambda c, a: c.drop_partition(db, name, ["1"], False)),
        ("alter_partition", lambda c, a: c.alter_partition(db, name, a.get_partition(db, name, ["1"]))),
        ("rename_partition", lambda c, a: c.rename_partition(db, name, ["1"], partition(a.get_table(db, name), ["9"]))),
        ("update statistics", lambda c, a: c.update_table_column_statistics(_stats(db, name))),
        ("create_function", lambda c, a: c.create_function(_function(db, "g", user))),
        ("drop_function", lambda c, a: c.drop_function(db, "f")),
    ]


def victim_objects(client, db: str, name: str, owner: str, location: str | None = None):
    """The victim's database ``db`` with table ``name`` (partition ``["1"]``) and function ``f``."""
    client.create_database(api.Database(name=db, locationUri=location, parameters={}))
    t = table(db, name, parts=("ds string",), owner=owner)
    client.create_table(t)
    client.add_partition(partition(t, ["1"]))
    client.create_function(_function(db, "f", owner))
    return t
