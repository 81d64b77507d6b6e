"""The metastore's Prometheus counters, read at /metrics of a real hopshive-metastore process
with two forked workers (the counters of both are summed), after real Thrift calls: each
read call moves partitions_returned by exactly the partitions it returned, every call is
counted and timed, a rejected call counts as an error of the type the client received, and
counters survive a worker's restart."""

from __future__ import annotations

import os
import signal
import socket
from pathlib import Path

import pytest
from pymetastore.hive_metastore import ttypes as api

from hopshive.core.db import Database
from tests.support import metastore_metrics as metrics
from tests.support.hms import database, partition, table
from tests.support.mariadb import _free_port
from tests.support.metastore import MetastoreProcess, settings, thrift_client
from tests.support.metastore_fixtures import FAKE_NAMENODE, WAREHOUSE
from tests.support.polling import wait_until
from tests.support.schemas import reset_schemas

pytestmark = pytest.mark.metastore

DB, TABLE = "metrics_db", "events"
DAYS = ("2024-01-01", "2024-01-02", "2024-01-03")
HOURS = (1, 2, 3, 4)


@pytest.fixture(scope="module")
def service(mariadb, tmp_path_factory):
    """hopshive-metastore with 2 workers and a table of 12 partitions (ds x h)."""
    database_handle = Database(mariadb.config)
    reset_schemas(database_handle)
    config = settings(mariadb.config, FAKE_NAMENODE, workers=2, metrics_port=_free_port())
    process = MetastoreProcess(tmp_path_factory.mktemp("metrics") / "metastore", config).start()
    with thrift_client(process.port, user="hive") as client:
        client.create_database(database(DB, f"{WAREHOUSE}/{DB}.db"))
        events = table(DB, TABLE, parts=("ds string", "h int"))
        client.create_table(events)
        client.add_partitions([partition(events, (day, str(hour))) for day in DAYS for hour in HOURS])
    yield process
    code = process.stop()
    database_handle.close()
    assert code == 0, process.log_tail()


def scrape(service) -> list[metrics.Sample]:
    return metrics.scrape("127.0.0.1", service.config["metastore"]["metrics_port"])


def test_reads_move_partitions_returned_by_exactly_what_they_returned(service):
    before = scrape(service)
    returned = {}
    # Several connections, so both workers serve some of the calls.
    for _ in range(4):
        with thrift_client(service.port) as client:
            for method, args in [("get_partitions", (DB, TABLE, -1)),
                                 ("get_partitions_by_filter", (DB, TABLE, 'ds = "2024-01-02"', -1)),
                                 ("get_partitions_by_filter", (DB, TABLE, '(h) in (1, 3)', -1)),
                                 ("get_partitions_by_names", (DB, TABLE, ["ds=2024-01-01/h=2", "ds=2024-01-03/h=4"])),
                                 ("get_partitions_ps", (DB, TABLE, ["2024-01-03", ""], -1)),
                                 ("get_partitions", (DB, TABLE, 5)),
                                 ("get_partition", (DB, TABLE, ["2024-01-01", "1"]))]:
                result = getattr(client, method)(*args)
                returned[method] = returned.get(method, 0) + (len(result) if isinstance(result, list) else 1)
    after = scrape(service)

    assert returned == {"get_partitions": 4 * (12 + 5), "get_partitions_by_filter": 4 * (4 + 6),
                        "get_partitions_by_names": 4 * 2, "get_partitions_ps": 4 * 4, "get_partition": 4}
    moved = {method: metrics.partitions_returned(after, method=method, table=f"{DB}.{TABLE}")
             - metrics.partitions_returned(before, method=method, table=f"{DB}.{TABLE}") for method in returned}
    assert moved == returned
    assert metrics.partitions_returned(after) - metrics.partitions_returned(before) == sum(returned.values())


def test_every_call_is_counted_and_timed(service):
    before = scrape(service)
    with thrift_client(service.port) as client:      # set_ugi is a call too
        for _ in range(3):
            client.get_table(DB, TABLE)
        client.get_partition_names(DB, TABLE, -1)
    after = scrape(service)

    counted = {method: metrics.calls(after, method) - metrics.calls(before, method)
               for method in ("set_ugi", "get_table", "get_partition_names")}
    timed = {method: metrics.latency_count(after, method) - metrics.latency_count(before, method)
             for method in counted}
    assert counted == {"set_ugi": 1, "get_table": 3, "get_partition_names": 1}
    assert timed == counted
    # Names are not partitions: get_partition_names returns none.
    assert metrics.partitions_returned(after, method="get_partition_names") == 0


def test_rejected_calls_count_as_errors_of_the_type_the_client_received(service):
    before = scrape(service)
    with thrift_client(service.port) as client:
        with pytest.raises(api.MetaException) as bad_filter:
            client.get_partitions_by_filter(DB, TABLE, 'ds = = "x"', -1)
        with pytest.raises(api.NoSuchObjectException):
            client.get_table(DB, "no_such_table")
    after = scrape(service)

    assert "ds" in bad_filter.value.message or "filter" in bad_filter.value.message.lower()
    assert {
        "bad filter": metrics.errors(after, "get_partitions_by_filter", "MetaException")
        - metrics.errors(before, "get_partitions_by_filter", "MetaException"),
        "missing table": metrics.errors(after, "get_table", "NoSuchObjectException")
        - metrics.errors(before, "get_table", "NoSuchObjectException"),
        "partitions": metrics.partitions_returned(after, method="get_partitions_by_filter")
        - metrics.partitions_returned(before, method="get_partitions_by_filter"),
    } == {"bad filter": 1, "missing table": 1, "partitions": 0}


def _workers(pid: int) -> set[int]:
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return {int(child) for child in children}


def test_counters_survive_a_worker_restart(service):
    with thrift_client(service.port) as client:
        client.get_partitions(DB, TABLE, -1)
    before = scrape(service)
    workers = _workers(service.process.pid)
    assert len(workers) == 2, f"expected 2 workers, found {workers}"
    os.kill(min(workers), signal.SIGKILL)
    wait_until(lambda: len(_workers(service.process.pid) - workers) == 1, 30,
               lambda _: f"no new worker; workers now {_workers(service.process.pid)}")
    after = scrape(service)

    assert metrics.partitions_returned(after) == metrics.partitions_returned(before) > 0
    assert metrics.calls(after, "get_partitions") == metrics.calls(before, "get_partitions")


def test_metrics_can_be_switched_off(mariadb, tmp_path):
    port = _free_port()
    config = settings(mariadb.config, FAKE_NAMENODE, metrics=False, metrics_port=port)
    process = MetastoreProcess(tmp_path / "metastore", config).start()
    try:
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", port)) != 0, f"something listens on metrics port {port}"
    finally:
        assert process.stop() == 0, process.log_tail()


def test_a_taken_metrics_port_stops_the_start_with_a_clear_error(mariadb, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = settings(mariadb.config, FAKE_NAMENODE, metrics_port=port)
        process = MetastoreProcess(tmp_path / "metastore", config)
        with pytest.raises(AssertionError, match="exited with 1") as failure:
            process.start()
    assert "cannot start" in str(failure.value) and "Address already in use" in str(failure.value)
