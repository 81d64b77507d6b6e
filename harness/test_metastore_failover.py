"""Metastore instances die under load (destructive: kills deployed processes).

* kill -9 of one instance in the middle of a Spark workload, kept down for the rest of it:
  the session carries on through the other instance (hive.metastore.uris lists both), for
  each instance in turn, so the session's own connection is cut at least once;
* kill -9 while an instance is inside a long DDL transaction (adding or dropping hundreds
  of partitions, each with its directory): the object is all there or not at all, with
  exactly its directories.

Each killed instance is started again and must answer before the next scenario.  Runs only
where the harness controls the instances: on their machine or in our cluster containers, as
root (harness/support/services.py).
"""

from __future__ import annotations

import threading

import pytest
from pymetastore.hive_metastore import ttypes as h3

from harness.support import inodes, metastore as ms, services
from harness.support.targets import LOCAL_NAMES
from tests.support.hms import database, partition, table
from tests.support.polling import wait_until

pytestmark = [pytest.mark.destructive, pytest.mark.metastore]
TABLES_PER_ROUND = 5
PARTITIONS = 600
SUBTREE_LOCKED = "SELECT id, name FROM hops.hdfs_inodes WHERE subtree_locked = 1"


@pytest.fixture(scope="module")
def instances(metastores, targets):
    """{(host, port): Service} of every instance; each one left stopped is started again."""
    controls = {}
    for host, port in metastores:
        container = targets.containers.get(host)
        how = services.manager(container)
        if how is None or (container is None and host not in LOCAL_NAMES):
            services.cannot_control(targets, f"the harness cannot kill and restart the metastore {host}:{port} from here (it must "
                        "run on this machine or in our cluster containers, under hopshive-supervisorctl or "
                        "systemd, and the harness as root)")
        controls[(host, port)] = services.metastore(port, how, container)
    yield controls
    for instance, service in controls.items():
        service.start()
        ms.wait_healthy(instance)


@pytest.fixture
def restore(instances):
    """Start every instance again after the test, whatever happened, and wait until it answers
    (requested after `scratch`, so that it is torn down first: scratch's clean-up needs them)."""
    yield
    for instance, service in instances.items():
        service.start()
        ms.wait_healthy(instance)


@pytest.mark.spark
def test_spark_carries_on_when_an_instance_dies(hive_spark, instances, scratch, restore, db, metastores, targets,
                                                webhdfs):
    webhdfs.chown(scratch.path, targets.spark_user)    # the session's user makes its database there
    prefix, uri = scratch.prefix, scratch.uri
    name = f"{prefix}fo"
    assert hive_spark.run({"setup": [f"CREATE DATABASE {name} LOCATION '{uri}/fo.db'"]})["setup"] == {
        f"CREATE DATABASE {name} LOCATION '{uri}/fo.db'": []}
    cut = []   # instances that held the session's connection when they were killed
    for round_, (instance, service) in enumerate(instances.items()):
        statements = []
        for i in range(TABLES_PER_ROUND):
            t = f"{name}.t{round_}_{i}"
            statements += [f"CREATE TABLE IF NOT EXISTS {t} (a INT, ds STRING) USING parquet PARTITIONED BY (ds)",
                           f"INSERT INTO {t} VALUES ({i}, 'x'), ({i}, 'y')",
                           f"SELECT count(*), count(DISTINCT ds) FROM {t}"]
        hive_spark.submit({"round": statements})
        hive_spark.wait_progress(2)             # mid-workload: the first table exists
        if services.connections_to(instance, services.descendants(hive_spark.process.pid)):
            cut.append(instance)
        service.crash()
        service.stop()                          # and stays down for the rest of the round
        results = hive_spark.result()["round"]
        failed = {s: r for s, r in results.items() if isinstance(r, dict)}
        assert not failed, f"with {instance} down, Spark failed: {failed}"
        assert [results[s] for s in statements[2::3]] == [[["2", "2"]]] * TABLES_PER_ROUND
        service.start()
        ms.wait_healthy(instance)
    # the session picks one instance at random and keeps it until it fails: killing each in
    # turn must have cut its connection at least once
    assert cut, "the Spark session was connected to none of the killed instances"
    with ms.client(metastores[0], targets.user) as client:
        tables = client.get_all_tables(name)
        assert len(tables) == TABLES_PER_ROUND * len(instances), tables
        assert all(len(client.get_partition_names(name, t, -1)) == 2 for t in tables)
    assert ms.violations(db, uri) == {}


@pytest.mark.parametrize("ddl", ["add_partitions", "drop_table"])
def test_kill_during_ddl_leaves_no_half_made_object(instances, scratch, restore, db, webhdfs, targets, ddl):
    """The killed transaction is caught half way by a row lock the test holds, not by timing.
    add_partitions makes directory and metadata partition by partition: the test made the
    directory of a partition in the middle itself and locks it, so the transaction waits
    there with half of its partitions made.  drop_table deletes the metadata first and then
    the directories: the test locks the table's directory, so the transaction is caught with
    the metadata deleted and the directories not yet."""
    (victim, service), (survivor, _) = list(instances.items())[0], list(instances.items())[-1]
    prefix, path, uri = scratch.prefix, scratch.path, scratch.uri
    name = f"{prefix}kill"
    t = table(name, "t", parts=("p int",), owner=targets.user)
    parts = [partition(t, [str(p)]) for p in range(PARTITIONS)]
    with ms.client(survivor, targets.user) as client:
        client.create_database(database(name, f"{uri}/kill.db"))
        client.create_table(t)
        if ddl == "drop_table":
            client.add_partitions(parts)
    middle = f"p={PARTITIONS // 2}"     # made by the test: the killed transaction does not own it
    locked = f"{path}/kill.db/t" if ddl == "drop_table" else f"{path}/kill.db/t/{middle}"
    if ddl == "add_partitions":
        assert webhdfs.mkdirs(locked)
    before = ms.counts(db, uri)
    holder = inodes.connect(targets.db)
    holder.autocommit(False)
    with holder.cursor() as cursor:
        cursor.execute(f"SELECT id FROM {inodes.INODES} WHERE id=%s FOR UPDATE", (inodes.resolve(db, locked),))
    outcome: dict = {}

    def run_ddl():
        try:
            with ms.client(victim, targets.user) as client:
                if ddl == "add_partitions":
                    client.add_partitions(parts)
                else:
                    client.drop_table(name, "t", True)
            outcome["done"] = True
        except Exception as exc:  # noqa: BLE001 -- the connection dies with the instance
            outcome["error"] = exc

    def halfway() -> bool:
        return any(rows > 0 and state == "LOCK WAIT" for _, rows, state in ms.active_ddl(db))

    worker = threading.Thread(target=run_ddl)
    worker.start()
    try:
        wait_until(lambda: outcome or halfway(), 60,
                   lambda _: f"the {ddl} transaction never got half way ({outcome}, {ms.active_ddl(db)})")
        assert not outcome, f"{ddl} of {PARTITIONS} partitions ended before it could be killed: {outcome}"
        service.crash()
    finally:
        holder.rollback()
        holder.close()
    worker.join(60)
    assert "error" in outcome, f"{ddl} succeeded although its instance was killed: {outcome}"
    ms.wait_no_ddl(db)                          # the server rolled the killed transaction back
    wait_until(lambda: not ms.query(db)(SUBTREE_LOCKED), 60,
               lambda _: f"inodes still subtree-locked after the kill: {ms.query(db)(SUBTREE_LOCKED)}")

    with ms.client(survivor, targets.user) as client:
        if ddl == "add_partitions":
            assert client.get_partition_names(name, "t", -1) == []
        else:
            assert len(client.get_partition_names(name, "t", -1)) == PARTITIONS
    listed = {e["pathSuffix"] for e in webhdfs.list(f"{path}/kill.db/t")}
    assert listed == ({middle} if ddl == "add_partitions" else {f"p={p}" for p in range(PARTITIONS)})
    assert ms.counts(db, uri) == before
    assert ms.violations(db, uri) == {}
    ms.wait_healthy(victim)                     # the supervisor restarted it
    with ms.client(victim, targets.user) as client:
        if ddl == "add_partitions":             # and it takes the same DDL again
            client.add_partitions(parts)
            assert len(client.get_partition_names(name, "t", -1)) == PARTITIONS
        else:
            client.drop_table(name, "t", True)
            with pytest.raises(h3.NoSuchObjectException):
                client.get_table(name, "t")
    assert ms.violations(db, uri) == {}
