"""Two metastore instances on one HBase store (as the cluster runs them: nn1 and nn2, both
on hb1's server) racing each other: HBase has no transactions across rows, so the store
leans on checkAndPut and atomicIncrement (``stores/hbase/records.py``).  Each instance has
its own connections and its own in-process locks, as two processes would."""

from __future__ import annotations

import threading

import pytest
from pymetastore.hive_metastore import ttypes as api

from hopshive.metastore.stores.hbase import fsck
from tests.support.hms import index
from tests.support.metastore import InThreadMetastore
from tests.support.metastore_fixtures import hbase_server, metastore, partition, table, thrift_client  # noqa: F401

pytestmark = pytest.mark.metastore
ROUNDS = 12


@pytest.fixture
def store_backend():
    return "hbase"


@pytest.fixture
def twins(metastore):
    """The test's metastore and a second instance on the same HBase tables."""
    second = InThreadMetastore(metastore.config).start()
    yield metastore, second
    second.stop()


def race(*calls):
    """Run the calls at the same moment, each on its own thread; returns their outcomes
    (the result, or the exception raised)."""
    barrier, outcomes = threading.Barrier(len(calls)), [None] * len(calls)

    def run(index, call):
        barrier.wait()
        try:
            outcomes[index] = call()
        except Exception as exc:  # noqa: BLE001 -- the outcome under test
            outcomes[index] = exc
    threads = [threading.Thread(target=run, args=pair) for pair in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return outcomes


def _clean(instance) -> None:
    report = fsck.find(instance.store)
    assert not report.findings, [(f.kind, f.what) for f in report.findings]


def test_one_create_wins(twins):
    first, second = twins
    with thrift_client(first.port) as a, thrift_client(second.port) as b:
        for i in range(ROUNDS):
            outcomes = race(lambda: a.create_table(table("default", f"t{i}", parts=("p int",))),
                            lambda: b.create_table(table("default", f"t{i}", parts=("p int",))))
            assert sorted(type(o).__name__ for o in outcomes) == ["AlreadyExistsException", "NoneType"], outcomes
        made = a.get_table("default", "t0")
        for i in range(ROUNDS):
            outcomes = race(lambda: a.add_partitions([partition(made, [str(i)])]),
                            lambda: b.add_partitions([partition(made, [str(i)])]))
            assert sorted(type(o).__name__ for o in outcomes) == ["AlreadyExistsException", "int"], outcomes
        assert len(b.get_partitions("default", "t0", -1)) == ROUNDS
    _clean(first)


def test_an_update_racing_a_drop_does_not_resurrect(twins):
    first, second = twins
    with thrift_client(first.port) as a, thrift_client(second.port) as b:
        for i in range(ROUNDS):
            a.create_table(table("default", f"u{i}", parts=("p int",)))
            made = a.get_table("default", f"u{i}")
            a.add_partitions([partition(made, ["1"])])
            changed = a.get_partition("default", f"u{i}", ["1"])
            changed.parameters = {"touched": "yes"}
            race(lambda: a.drop_table("default", f"u{i}", True),
                 lambda: b.alter_partition("default", f"u{i}", changed))
            with pytest.raises(api.NoSuchObjectException):
                b.get_table("default", f"u{i}")
            # a partition row written after the drop would reappear under a new table of the name
            a.create_table(table("default", f"u{i}", parts=("p int",)))
            assert a.get_partitions("default", f"u{i}", -1) == []
    _clean(first)


def test_descriptors_survive_a_release_racing_an_acquire(twins):
    """All tables below share one storage descriptor (same columns and formats): one instance
    drops the last table holding it while the other creates one that needs it."""
    first, second = twins
    with thrift_client(first.port) as a, thrift_client(second.port) as b:
        for i in range(ROUNDS):
            a.create_table(table("default", f"old{i}"))
            race(lambda: a.drop_table("default", f"old{i}", True),
                 lambda: b.create_table(table("default", f"new{i}")))
            made = b.get_table("default", f"new{i}")
            assert made.sd is not None and [c.name for c in made.sd.cols] == ["a", "b"]
            b.drop_table("default", f"new{i}", True)
    _clean(first)


def test_one_index_create_wins(twins):
    """Both instances add the same index (and its index table) at once: one index, one
    index table, AlreadyExists for the other, nothing left over; then both drop it."""
    from hmsclient.genthrift.hive_metastore import ttypes as h2
    first, second = twins
    with thrift_client(first.port) as a, thrift_client(first.port, hive2=True) as a2, \
            thrift_client(second.port, hive2=True) as b2:
        a.create_table(table("default", "t", parts=("ds string",)))
        base = a.get_table("default", "t")
        for _ in range(ROUNDS):
            outcomes = race(lambda: a2.add_index(*index(base, "x", ["a"])),
                            lambda: b2.add_index(*index(base, "x", ["a"])))
            assert sorted(type(o).__name__ for o in outcomes) == ["AlreadyExistsException", "Index"], outcomes
            assert a2.get_index_names("default", "t", -1) == ["x"]
            assert a.get_all_tables("default") == ["default__t_x__", "t"]
            outcomes = race(lambda: a2.drop_index_by_name("default", "t", "x", True),
                            lambda: b2.drop_index_by_name("default", "t", "x", True))
            assert True in outcomes and all(o is True or isinstance(o, h2.NoSuchObjectException) for o in outcomes), \
                outcomes
            assert a.get_all_tables("default") == ["t"] and b2.get_indexes("default", "t", -1) == []
    _clean(first)
