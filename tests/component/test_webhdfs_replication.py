"""Replicated blocks across three namenode processes on this host (one shared database, a
block directory each): a write is acknowledged with its replicas durable on two holders;
reads survive a lost replica, a holder killed mid-read and a corrupt replica (which is then
replaced); a holder silent past the timeout has its blocks copied elsewhere, and fsck
tells HEALTHY from CORRUPT as `hdfs fsck` does."""

from __future__ import annotations

import hashlib
import json

import pytest
import requests
from hdfs import InsecureClient

from hopshive.cli import dfs
from hopshive.namespace.replication import INTERNAL
from hopshive.security.block_tokens import HEADER, READ, WRITE, BlockTokens
from hopshive.security.secrets import SecretManager
from tests.support.namenode import NamenodeServer
from tests.support.polling import wait_until

BLOCK = 1 << 20
HOLDER_TIMEOUT = 4.0
SETTINGS = dict(workers=1, small_file_limit=0, replication=2, dead_after=2.0, holder_timeout=HOLDER_TIMEOUT,
                replication_interval=0.5, heartbeat_interval=0.3)


@pytest.fixture
def trio(db, tmp_path, request):
    settings = dict(SETTINGS, **getattr(request, "param", {}))
    servers = [NamenodeServer(tmp_path / f"nn{i}", db.config, **settings).start() for i in (1, 2, 3)]
    yield servers
    for server in servers:
        if server.process.poll() is None or server.process.returncode != -9:   # not killed by the test
            assert server.stop() == 0, server.log_tail()


def payload(size: int, seed: bytes = b"x") -> bytes:
    out, counter = bytearray(), 0
    while len(out) < size:
        out += hashlib.sha256(seed + counter.to_bytes(8, "big")).digest() * 64
        counter += 1
    return bytes(out[:size])


def holders(server: NamenodeServer, path: str) -> list[set[str]]:
    """Each block's holders as GETFILEBLOCKLOCATIONS lists them."""
    reply = requests.get(f"{server.url}/webhdfs/v1{path}", params={"op": "GETFILEBLOCKLOCATIONS", "user.name": "hdfs"},
                         timeout=10)
    reply.raise_for_status()
    return [set(b["names"]) for b in reply.json()["BlockLocations"]["BlockLocation"]]


def block_ids(db, name: str) -> list[int]:
    with db.transaction(readonly=True) as tx:
        return [row[0] for row in tx.query(
            "SELECT b.block_id FROM hops.hdfs_block_infos b JOIN hops.hdfs_inodes i ON i.id=b.inode_id"
            " WHERE i.name=%s ORDER BY b.block_index", (name,))]


def block_file(server: NamenodeServer, block_id: int):
    return server.data_dir / "current" / f"subdir{(block_id >> 8) & 0xFF:02x}" / f"blk_{block_id}"


def by_address(servers, address: str) -> NamenodeServer:
    return next(s for s in servers if s.address == address)


def fsck(server: NamenodeServer, capsys, path: str = "/") -> tuple[int, str]:
    capsys.readouterr()
    code = dfs.main(["--namenode", server.url, "--user", "hdfs", "fsck", path])
    return code, capsys.readouterr().out


def read(server: NamenodeServer, path: str) -> bytes:
    with InsecureClient(server.url, user="hdfs").read(path) as handle:
        return handle.read()


def test_a_write_is_acknowledged_with_two_durable_replicas_and_survives_losing_one(trio, db, capsys):
    first = trio[0]
    data = payload(3 * BLOCK + 1000)
    InsecureClient(first.url, user="hdfs").write("/r/f", data, blocksize=BLOCK)
    located = holders(first, "/r/f")
    assert len(located) == 4 and all(len(h) == 2 and first.address in h for h in located), located
    for block_id, names in zip(block_ids(db, "f"), located):
        for address in names:   # the bytes are on both disks when the write is answered
            assert block_file(by_address(trio, address), block_id).is_file()
    code, report = fsck(trio[1], capsys)
    assert code == 0 and "Status: HEALTHY" in report and "Average block replication:\t2.0" in report, report

    for block_id in block_ids(db, "f"):   # the writer's copies vanish from its disk
        block_file(first, block_id).unlink()
    assert read(first, "/r/f") == data
    for server in trio[1:]:
        assert read(server, "/r/f") == data

    ids = block_ids(db, "f")   # deleted through another namenode: every holder removes its copies
    assert InsecureClient(trio[2].url, user="hdfs").delete("/r/f")
    wait_until(lambda: not any(block_file(s, b).exists() for s in trio for b in ids), 30,
               lambda _: "block files outlived their file")


def test_a_holder_killed_mid_read_the_reads_go_on_from_the_other_replica(trio, capsys):
    first = trio[0]
    data = payload(24 * BLOCK, b"k")
    InsecureClient(first.url, user="hdfs").write("/r/big", data, blocksize=64 * BLOCK)   # one block
    (names,) = holders(first, "/r/big")
    other = by_address(trio, next(a for a in names if a != first.address))
    bystander = next(s for s in trio if s.address not in names)

    # A client reading from the holder it was sent to retries elsewhere at the byte it reached.
    stream = requests.get(f"{first.url}/webhdfs/v1/r/big", params={"op": "OPEN", "user.name": "hdfs"},
                          stream=True, timeout=30)
    assert stream.url.startswith(first.url), "the writer holds the block: it serves the read itself"
    received = stream.raw.read(BLOCK)
    # The bystander's data request streams the block from a holder (the first in address order).
    relayed = requests.get(f"{bystander.url}/webhdfs/v1/r/big",
                           params={"op": "OPEN", "user.name": "hdfs", "data": "true"}, stream=True, timeout=30)
    relayed_start = relayed.raw.read(BLOCK)
    source = by_address(trio, sorted(names)[0])
    source.kill()
    if source is first:
        with pytest.raises(Exception):
            received += stream.raw.read()
            if len(received) != len(data):
                raise IOError("short read")
        retry = requests.get(f"{other.url}/webhdfs/v1/r/big",
                             params={"op": "OPEN", "user.name": "hdfs", "offset": len(received)}, timeout=60)
        assert retry.status_code == 200 and received + retry.content == data
    else:
        assert received + stream.raw.read() == data
    assert relayed_start + relayed.raw.read() == data, "the bystander went on from the surviving replica"


def test_a_holder_silent_past_the_timeout_has_its_blocks_copied_elsewhere(trio, db, capsys):
    first = trio[0]
    data = payload(2 * BLOCK + 10, b"t")
    InsecureClient(first.url, user="hdfs").write("/r/t", data, blocksize=BLOCK)
    gone = by_address(trio, next(a for a in holders(first, "/r/t")[0] if a != first.address))
    assert gone.stop() == 0
    live = {s.address for s in trio if s is not gone}

    def healed():
        located = holders(first, "/r/t")
        return all(h == live for h in located) and located
    wait_until(healed, 60, lambda _: f"blocks still on {holders(first, '/r/t')}; log:\n{first.log_tail()}")
    code, report = fsck(first, capsys, "/r")
    assert code == 0 and "Under-replicated blocks:\t0" in report, report
    assert read(trio[0], "/r/t") == data


@pytest.mark.parametrize("trio", [dict(orphan_grace=1.0, block_report_interval=1.0)], indirect=True)
def test_a_holder_back_after_the_timeout_reports_its_replicas_and_the_excess_goes(trio, db, capsys):
    first = trio[0]
    data = payload(BLOCK + 10, b"b")
    InsecureClient(first.url, user="hdfs").write("/r/back", data, blocksize=BLOCK)
    away = by_address(trio, next(a for a in holders(first, "/r/back")[0] if a != first.address))
    assert away.stop() == 0
    everyone = {s.address for s in trio}
    wait_until(lambda: holders(first, "/r/back")[0] == everyone - {away.address}, 60,
               lambda _: f"not re-replicated: {holders(first, '/r/back')}")
    away.start()   # its block files are back: the block report records them, then one replica too many goes

    def files():
        return {s.address for s in trio for block_id in block_ids(db, "back") if block_file(s, block_id).is_file()}

    def settled():
        code, report = fsck(first, capsys, "/r/back")
        located = holders(first, "/r/back")
        return (code == 0 and "Over-replicated blocks:\t0" in report and all(len(h) == 2 for h in located)
                and files() == set().union(*located))
    wait_until(settled, 60, lambda _: f"replicas {holders(first, '/r/back')}, files on {files()}")
    reports = [json.loads(line) for line in away.log_path.read_text().splitlines() if '"block report"' in line]
    assert sum(r["recorded"] for r in reports) == 2, "the returning holder recorded both its copies again"
    assert read(away, "/r/back") == data


def test_a_peer_dead_before_anyone_noticed_leaves_a_write_under_replicated_not_failed(trio, capsys):
    first, dying, third = trio
    dying.kill()   # still live to the others for dead_after seconds: the write tries it first
    data = payload(3 * BLOCK, b"p")
    InsecureClient(first.url, user="hdfs").write("/r/p", data, blocksize=BLOCK, replication=3)
    assert holders(first, "/r/p") == [{first.address, third.address}] * 3
    code, report = fsck(first, capsys, "/r/p")
    assert code == 0 and "Under-replicated blocks:\t3" in report, report
    dying.start()   # back: the monitor gives it its replicas
    wait_until(lambda: holders(first, "/r/p") == [{s.address for s in trio}] * 3, 60,
               lambda _: f"replicas: {holders(first, '/r/p')}")
    assert read(dying, "/r/p") == data


def test_appends_through_holders_and_bystanders_keep_every_block_replicated(trio):
    first = trio[0]
    data = payload(BLOCK + BLOCK // 2, b"a")
    InsecureClient(first.url, user="hdfs").write("/r/a", data, blocksize=BLOCK)
    tail_holders = holders(first, "/r/a")[-1]
    bystander = next(s for s in trio if s.address not in tail_holders)
    holder = by_address(trio, sorted(tail_holders - {first.address})[0])
    for server, extra in ((bystander, b"1" * 70_000), (holder, b"2" * 3_000)):
        InsecureClient(server.url, user="hdfs").write("/r/a", extra, append=True)
        data += extra
    located = holders(first, "/r/a")
    assert all(len(h) == 2 for h in located), located
    for server in trio:
        assert read(server, "/r/a") == data
    checksums = {requests.get(f"{s.url}/webhdfs/v1/r/a", params={"op": "GETFILECHECKSUM", "user.name": "hdfs"},
                              timeout=30).json()["FileChecksum"]["bytes"] for s in trio}
    assert len(checksums) == 1


def test_a_lost_single_replica_makes_fsck_report_corrupt(trio, db, capsys):
    first, second = trio[0], trio[1]
    InsecureClient(second.url, user="hdfs").write("/r/one", b"lonely" * 1000, replication=1)
    assert holders(first, "/r/one") == [{second.address}]
    assert second.stop() == 0

    def reported():
        code, report = fsck(first, capsys, "/r")
        return (code, report) if "Status: CORRUPT" in report else None
    code, report = wait_until(reported, 60, lambda _: "fsck never reported the lost block")
    assert code == 1 and "Missing blocks:\t1" in report and "is CORRUPT" in report, report
    reply = requests.get(f"{first.url}/webhdfs/v1/r/one", params={"op": "OPEN", "user.name": "hdfs"}, timeout=30)
    assert reply.status_code == 403 and reply.json()["RemoteException"]["exception"] == "BlockMissingException"


def test_a_corrupt_replica_is_skipped_on_read_and_replaced(trio, db, capsys):
    first = trio[0]
    data = payload(BLOCK + 5000, b"c")
    InsecureClient(first.url, user="hdfs").write("/r/c", data, blocksize=BLOCK)
    block_id = block_ids(db, "c")[0]
    bad = block_file(first, block_id)
    original = bad.read_bytes()
    with open(bad, "r+b") as handle:   # bit rot in the middle of the writer's replica
        handle.seek(300_000)
        byte = handle.read(1)
        handle.seek(300_000)
        handle.write(bytes([byte[0] ^ 0xFF]))
    assert read(first, "/r/c") == data

    def replaced():
        located = holders(first, "/r/c")[0]
        if len(located) != 2:
            return None
        files = [block_file(by_address(trio, a), block_id) for a in located]
        return all(f.is_file() and f.read_bytes() == original for f in files) and located
    wait_until(replaced, 60, lambda _: f"replicas: {holders(first, '/r/c')}; log:\n{first.log_tail()}")
    code, report = fsck(first, capsys, "/r/c")
    assert code == 0 and "Corrupt replicas:\t0" in report, report
    checksums = {requests.get(f"{s.url}/webhdfs/v1/r/c", params={"op": "GETFILECHECKSUM", "user.name": "hdfs"},
                              timeout=30).json()["FileChecksum"]["bytes"] for s in trio}
    assert len(checksums) == 1


def test_replication_factors_as_hdfs_takes_them(trio, capsys):
    first = trio[0]
    client = InsecureClient(first.url, user="hdfs")
    for bad in ("0", "-1", "513", "two"):
        reply = requests.put(f"{first.url}/webhdfs/v1/r/bad", params={"op": "CREATE", "user.name": "hdfs",
                                                                     "replication": bad, "data": "true"},
                             data=b"x", timeout=10)
        assert reply.status_code == 400, (bad, reply.text)
        assert reply.json()["RemoteException"]["exception"] == "IllegalArgumentException"
    assert client.status("/r/bad", strict=False) is None, "a refused create leaves nothing"

    # More replicas than live holders: accepted, one on each, and reported under-replicated.
    client.write("/r/many", b"m" * 5000, replication=5)
    assert holders(first, "/r/many") == [{s.address for s in trio}]
    code, report = fsck(first, capsys, "/r/many")
    assert code == 0 and "Under-replicated blocks:\t1" in report and "Status: HEALTHY" in report, report

    # Lowering the factor drops the excess replicas.
    client.set_replication("/r/many", 1)
    assert client.status("/r/many")["replication"] == 1
    wait_until(lambda: len(holders(first, "/r/many")[0]) == 1, 60,
               lambda _: f"still {holders(first, '/r/many')}")
    assert read(trio[2], "/r/many") == b"m" * 5000
    reply = requests.put(f"{first.url}/webhdfs/v1/r/many", params={"op": "SETREPLICATION", "user.name": "hdfs",
                                                                  "replication": "0"}, timeout=10)
    assert reply.status_code == 400
    reply = requests.put(f"{first.url}/webhdfs/v1/r", params={"op": "SETREPLICATION", "user.name": "hdfs",
                                                             "replication": "2"}, timeout=10)
    assert reply.json() == {"boolean": False}, "a directory has no replication factor"
    reply = requests.put(f"{first.url}/webhdfs/v1/r/many", params={"op": "SETREPLICATION", "user.name": "bob",
                                                                  "replication": "2"}, timeout=10)
    assert reply.status_code == 403


def test_the_internal_block_endpoint_serves_only_namenodes(trio, db):
    """A replica read or written past the namespace needs a block access token, which only
    the namenodes (holding the database's master keys) can sign: nothing else that reaches
    the port reads a block by its id or overwrites a replica."""
    data = payload(BLOCK // 2, b"secret")
    InsecureClient(trio[0].url, user="hdfs").write("/r/guarded", data)
    block_id = block_ids(db, "guarded")[0]
    holder = by_address(trio, sorted(holders(trio[0], "/r/guarded")[0])[0])
    url = f"{holder.url}{INTERNAL}/{block_id}"
    grants = BlockTokens(SecretManager(db))
    reads = {"offset": 0, "length": len(data)}

    assert requests.get(url, params=reads, timeout=10).status_code == 403
    forged = {HEADER: grants.headers(block_id, READ)[HEADER][:-4] + "0000"}
    assert requests.get(url, params=reads, headers=forged, timeout=10).status_code == 403
    assert requests.get(url, params=reads, headers=grants.headers(block_id + 1, READ), timeout=10).status_code == 403
    write_grant = grants.headers(block_id, WRITE)
    assert requests.get(url, params=reads, headers=write_grant, timeout=10).status_code == 403
    for headers in ({}, grants.headers(block_id, READ)):
        refused = requests.put(url, data=b"overwritten", headers=headers, timeout=10)
        assert refused.status_code == 403 and "block access token" in refused.text, refused.text
    assert block_file(holder, block_id).read_bytes() == data

    granted = requests.get(url, params=reads, headers=grants.headers(block_id, READ), timeout=10)
    assert granted.status_code == 200 and granted.content == data
    assert read(trio[1], "/r/guarded") == data
