"""Crashes of our namenode (kill -9 of the whole process group) in the middle of writes:
after a restart nothing half-written is visible and recovery leaves no lease, no file under
construction and no subtree lock behind.  Needs our own server (skipped against another)."""

from __future__ import annotations

import socket
import threading
from urllib.parse import urlsplit

import pytest
import requests

from tests.support.invariants import inode_id, leftovers, orphans, wait_clean
from tests.support.polling import wait_until

CHUNK = b"c" * 65536


class StalledBody:
    """A chunked request body that sends ``chunks`` chunks, then stalls until released."""

    def __init__(self, chunks: int):
        self.chunks = chunks
        self.release = threading.Event()

    def __iter__(self):
        for _ in range(self.chunks):
            yield CHUNK
        self.release.wait(60)
        yield CHUNK


@pytest.fixture
def scratch(private_webhdfs, request):
    with private_webhdfs.scratch(request.node.name, "alice") as path:
        yield path


def stalled_upload(client, method: str, location: str, body: StalledBody) -> dict:
    """Start sending ``body`` on a thread; returns a dict that gets the outcome."""
    result: dict = {}

    def send():
        try:
            result["response"] = client.send(method, location, iter(body))
        except requests.RequestException as exc:
            result["error"] = exc
    result["thread"] = threading.Thread(target=send, daemon=True)
    result["thread"].start()
    return result


def wait_for_lease(db, path: str) -> int:
    def probe():
        ident = inode_id(db, path)
        return ident and db.run(lambda tx: tx.query_one(
            "SELECT inode_id FROM hops.hdfs_leases WHERE inode_id=%s", (ident,))) and ident
    return wait_until(probe, 30, lambda _: f"no lease on {path} yet: {leftovers(db)}")


def crash_and_restart(target, body: StalledBody, upload: dict) -> None:
    target.server.kill()
    body.release.set()
    upload["thread"].join(60)
    assert not upload["thread"].is_alive()
    assert "response" not in upload or upload["response"].status_code >= 500, upload
    target.server.start()


def test_kill_during_create_leaves_no_trace(private_webhdfs, scratch):
    alice, db, path = private_webhdfs.client("alice"), private_webhdfs.database, f"{scratch}/upload"
    body = StalledBody(chunks=20)
    upload = stalled_upload(alice, "PUT", alice.redirected("PUT", path, "CREATE"), body)
    wait_for_lease(db, path)
    assert alice.open(path).status_code in (403, 404)  # never readable half-written

    crash_and_restart(private_webhdfs, body, upload)
    wait_clean(db)
    assert not alice.exists(path)
    assert orphans(db) == []
    alice.write(path, b"second attempt")  # the name is free again
    assert alice.read(path) == b"second attempt"


def test_kill_during_append_rolls_back_to_the_committed_content(private_webhdfs, scratch):
    alice, db, path = private_webhdfs.client("alice"), private_webhdfs.database, f"{scratch}/log"
    committed = b"committed line\n" * 1000
    alice.write(path, committed)
    body = StalledBody(chunks=5)
    upload = stalled_upload(alice, "POST", alice.redirected("POST", path, "APPEND"), body)
    wait_for_lease(db, path)

    crash_and_restart(private_webhdfs, body, upload)
    wait_clean(db)
    assert alice.status(path)["length"] == len(committed)
    assert alice.read(path) == committed
    assert alice.append(path, b"after").status_code == 200
    assert alice.read(path) == committed + b"after"


def test_data_written_before_a_crash_survives_it(private_webhdfs, scratch):
    alice = private_webhdfs.client("alice")
    files = {f"{scratch}/d{i}/f": bytes([i]) * (1000 * i + 1) for i in range(5)}
    for path, data in files.items():
        alice.write(path, data)
    private_webhdfs.server.restart(crash=True)
    for path, data in files.items():
        assert alice.read(path) == data
    assert orphans(private_webhdfs.database) == []


def test_sigterm_with_an_upload_in_flight_stops_within_the_grace(private_webhdfs, scratch):
    alice, db, path = private_webhdfs.client("alice"), private_webhdfs.database, f"{scratch}/upload"
    body = StalledBody(chunks=3)
    upload = stalled_upload(alice, "PUT", alice.redirected("PUT", path, "CREATE"), body)
    wait_for_lease(db, path)
    try:
        assert private_webhdfs.server.stop() == 0
    finally:
        body.release.set()
        upload["thread"].join(60)
    private_webhdfs.server.start()
    wait_clean(db)
    assert not alice.exists(path)


def small_files(db) -> int:
    return db.run(lambda tx: tx.query_one("SELECT COUNT(*) FROM hops.hdfs_small_files")[0])


def test_kill_during_a_small_file_create_with_its_length_leaves_no_trace(private_webhdfs, scratch):
    """A small file announced with its length is created in one transaction once its body
    is in: a crash while the body is still arriving leaves nothing."""
    alice, db, path = private_webhdfs.client("alice"), private_webhdfs.database, f"{scratch}/small"
    before = small_files(db)
    location = urlsplit(alice.redirected("PUT", path, "CREATE"))
    with socket.create_connection((location.hostname, location.port), timeout=30) as sock:
        sock.sendall(f"PUT {location.path}?{location.query} HTTP/1.1\r\nHost: {location.netloc}\r\n"
                     f"Content-Length: 4096\r\nContent-Type: application/octet-stream\r\n\r\n".encode() + b"h" * 1000)
        private_webhdfs.server.kill()
        try:
            answer = sock.recv(1024)
        except ConnectionResetError:
            answer = b""
        assert answer == b"", "a half-sent small file was answered"
    private_webhdfs.server.start()
    wait_clean(db)
    assert not alice.exists(path)
    assert small_files(db) == before
    alice.write(path, b"second attempt")
    assert alice.read(path) == b"second attempt"


def test_kill_during_a_streamed_small_file_create_leaves_no_trace(private_webhdfs, scratch):
    """Without a length the file is leased and its bytes kept in memory until they outgrow
    the small-file limit: a crash before the end leaves no file and no content row."""
    alice, db, path = private_webhdfs.client("alice"), private_webhdfs.database, f"{scratch}/small"
    before = small_files(db)
    body = StalledBody(chunks=1)   # 64 KiB, within the limit
    upload = stalled_upload(alice, "PUT", alice.redirected("PUT", path, "CREATE"), body)
    wait_for_lease(db, path)

    crash_and_restart(private_webhdfs, body, upload)
    wait_clean(db)
    assert not alice.exists(path)
    assert small_files(db) == before
    assert orphans(db) == []


def test_reads_go_on_when_the_database_drops_the_connections(private_webhdfs, scratch):
    """GETFILESTATUS runs on each worker's own connection (hopshive.webhdfs.loop_reads): when
    the database drops it (here every connection is killed), the read is served through the
    pool instead and the connection is opened again."""
    alice, db, path = private_webhdfs.client("alice"), private_webhdfs.database, f"{scratch}/f"
    alice.write(path, b"x")
    for _ in range(20):
        assert alice.status(path)["length"] == 1
    with db.transaction() as tx:
        ids = [row[0] for row in tx.query("SELECT id FROM information_schema.PROCESSLIST WHERE id <> CONNECTION_ID()"
                                          " AND user = 'root' AND command <> 'Daemon'")]
        for ident in ids:
            tx.execute(f"KILL {int(ident)}")
    assert ids
    for _ in range(20):
        assert alice.status(path)["length"] == 1
