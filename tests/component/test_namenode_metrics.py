"""A namenode's /metrics, read from two real hopshive-namenode processes (the first with two
forked workers, summed) after real WebHDFS calls: every request is counted and timed under
its op and status class, live holders are the namenodes heartbeating, and when a holder is
killed its blocks show up as under-replicated, and those it alone held as missing."""

from __future__ import annotations

import pytest
import requests

from tests.support.namenode import SUPERUSER, NamenodeServer
from tests.support.polling import wait_until
from tests.support.prometheus import moved, scrape_url, total

PREFIX = "hopshive_namenode"
SETTINGS = dict(small_file_limit=0, replication=2, dead_after=2.0, holder_timeout=4.0, replication_interval=0.5,
                heartbeat_interval=0.3)


@pytest.fixture
def pair(db, tmp_path):
    servers = [NamenodeServer(tmp_path / "nn1", db.config, workers=2, **SETTINGS).start(),
               NamenodeServer(tmp_path / "nn2", db.config, workers=1, **SETTINGS).start()]
    yield servers
    for server in servers:
        if server.process.poll() is None:
            assert server.stop() == 0, server.log_tail()


def scrape(server: NamenodeServer):
    return scrape_url(f"{server.url}/metrics")


def health(server: NamenodeServer) -> tuple[float, float, float]:
    """(live holders, under-replicated blocks, missing blocks) as ``server`` reports them."""
    samples = scrape(server)
    return tuple(total(samples, f"{PREFIX}_{name}") for name in ("live_holders", "under_replicated_blocks",
                                                                   "missing_blocks"))


def call(server: NamenodeServer, method: str, path: str, op: str, data: bytes | None = None, **params) -> int:
    """One WebHDFS request (the data step of a two-step one when ``data`` is given); its status."""
    query = {"op": op, "user.name": SUPERUSER, **params}
    answer = requests.request(method, f"{server.url}/webhdfs/v1{path}", params=query, allow_redirects=False,
                              timeout=30)
    if data is not None:
        assert answer.status_code == 307, answer.text
        answer = requests.request(method, answer.headers["Location"], data=data, timeout=30)
    return answer.status_code


def write(server: NamenodeServer, path: str, data: bytes, **params) -> None:
    assert call(server, "PUT", path, "CREATE", data, overwrite="true", **params) == 201


def test_every_request_is_counted_and_timed_by_op_and_status(pair):
    nn1 = pair[0]
    before = scrape(nn1)
    assert call(nn1, "PUT", "/m", "MKDIRS") == 200
    for i in range(3):
        write(nn1, f"/m/f{i}", b"x" * 1000)
    # Several connections, so both workers answer some.
    statuses = [call(nn1, "GET", "/m/f0", "GETFILESTATUS") for _ in range(6)]
    assert call(nn1, "GET", "/m/absent", "GETFILESTATUS") == 404
    assert call(nn1, "GET", "/m", "NOSUCHOP") == 400
    after = scrape(nn1)

    assert statuses == [200] * 6
    counts = {(op, status): moved(before, after, f"{PREFIX}_operations_total", op=op, status=status)
              for op, status in [("MKDIRS", "2xx"), ("CREATE", "3xx"), ("CREATE", "2xx"), ("GETFILESTATUS", "2xx"),
                                 ("GETFILESTATUS", "4xx"), ("other", "4xx")]}
    assert counts == {("MKDIRS", "2xx"): 1, ("CREATE", "3xx"): 3, ("CREATE", "2xx"): 3, ("GETFILESTATUS", "2xx"): 6,
                      ("GETFILESTATUS", "4xx"): 1, ("other", "4xx"): 1}
    timed = {op: moved(before, after, f"{PREFIX}_operation_seconds_count", op=op)
             for op in ("MKDIRS", "CREATE", "GETFILESTATUS", "other")}
    assert timed == {"MKDIRS": 1, "CREATE": 6, "GETFILESTATUS": 7, "other": 1}
    assert moved(before, after, f"{PREFIX}_operation_seconds_sum", op="CREATE") > 0


def test_block_health_follows_the_holders(pair):
    nn1, nn2 = pair
    for i in range(2):
        write(nn1, f"/h/both{i}", b"y" * 5000)          # replication 2: a replica on each namenode
    write(nn2, "/h/alone", b"z" * 5000, replication="1")  # one replica, on nn2's disk
    assert health(nn1) == (2, 0, 0)
    samples = scrape(nn1)
    size, free = total(samples, f"{PREFIX}_block_dir_size_bytes"), total(samples, f"{PREFIX}_block_dir_free_bytes")
    assert 0 < free <= size

    nn2.kill()
    # Past holder_timeout nn2's replicas are forgotten: the replicated files keep one of two
    # (under-replicated; one live holder cannot hold a second), the lone one has none.
    wait_until(lambda: health(nn1) == (1, 2, 1), 30,
               lambda _: f"(live holders, under-replicated, missing) stayed {health(nn1)}, not (1, 2, 1)")
