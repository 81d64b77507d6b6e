"""WebHDFS contract under concurrency: racing writers of one path, and work inside a
subtree while it is being deleted.  Outcomes may vary with timing; the assertions hold for
every interleaving."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from tests.support.invariants import leftovers, orphans
from tests.support.webhdfs import in_parallel

WRITERS = 6
LOSER_CLASSES = {"org.apache.hadoop.fs.FileAlreadyExistsException",
                 "org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException"}
# Refusals of work inside a subtree being deleted: HopsFS's subtree lock, or the path is gone.
SUBTREE_REFUSALS = {(403, "io.hops.exception.SubtreeLockedException"), (404, "java.io.FileNotFoundException")}


def outcome(response) -> tuple[int, str | None]:
    if response.status_code in (200, 201):
        return response.status_code, None
    return response.status_code, response.json()["RemoteException"]["javaClassName"]


def test_racing_creators_without_overwrite_have_exactly_one_winner(webhdfs, root):
    for round_ in range(3):
        path = f"{root}/contended-{round_}"
        barrier = threading.Barrier(WRITERS)
        payloads = [f"writer {i} ".encode() * (5000 + i) for i in range(WRITERS)]

        def write(index: int):
            client = webhdfs.client("alice")
            location = client.redirected("PUT", path, "CREATE", overwrite="false")
            barrier.wait(timeout=30)
            return client.send("PUT", location, payloads[index])

        with ThreadPoolExecutor(WRITERS) as pool:
            responses = list(pool.map(write, range(WRITERS)))
        outcomes = [outcome(r) for r in responses]
        winners = [i for i, (status, _) in enumerate(outcomes) if status == 201]
        assert len(winners) == 1, outcomes
        losers = [o for o in outcomes if o[0] != 201]
        assert all(status == 403 and java in LOSER_CLASSES for status, java in losers), outcomes
        assert webhdfs.client("alice").read(path) == payloads[winners[0]]


def test_racing_mkdirs_of_one_path_all_succeed_once(webhdfs, alice, root):
    results = in_parallel(webhdfs, "alice", lambda client, _: client.json("PUT", f"{root}/a/b/c", "MKDIRS"),
                          range(12))
    assert results == [{"boolean": True}] * 12
    assert list(alice.listing(f"{root}/a/b")) == ["c"]


def test_work_inside_a_subtree_being_deleted_is_done_before_or_refused(webhdfs, alice, root):
    big = f"{root}/big"
    chain = "/".join(f"l{level}" for level in range(10))  # one MKDIRS makes ten directories
    leaves = [f"{big}/d{d:02d}/c{c}/{chain}" for d in range(60) for c in range(5)]  # 3,061 inodes
    in_parallel(webhdfs, "alice", lambda client, path: client.mkdirs(path), leaves)

    deleted = threading.Event()
    started = threading.Barrier(5)
    outcomes: list[tuple[str, tuple]] = []

    def intrude(worker: int) -> None:
        client = webhdfs.client("alice")
        started.wait(timeout=30)
        attempt = 0
        while not deleted.is_set():
            attempt += 1
            where = f"{big}/d{(worker * 7 + attempt) % 60:02d}"
            if attempt % 2:
                response = client.call("PUT", f"{where}/new-{worker}-{attempt}", "MKDIRS")
            else:
                response = client.create(f"{where}/file-{worker}-{attempt}", b"data")
            outcomes.append((where, outcome(response)))

    def delete() -> bool:
        started.wait(timeout=30)
        try:
            return webhdfs.client("alice").delete(big, recursive=True)
        finally:
            deleted.set()

    with ThreadPoolExecutor(5) as pool:
        intruders = [pool.submit(intrude, worker) for worker in range(4)]
        assert pool.submit(delete).result(timeout=300) is True
        for future in intruders:
            future.result(timeout=120)

    refusals = [o for _, o in outcomes if o[0] not in (200, 201)]
    assert all(o in SUBTREE_REFUSALS for o in refusals), sorted(set(refusals))
    # Whatever succeeded after the delete re-created its parents; nothing hangs in the air.
    if webhdfs.database is not None:
        assert orphans(webhdfs.database) == []
        assert leftovers(webhdfs.database)["subtree_locks"] == 0
    if alice.exists(big):
        assert alice.delete(big, recursive=True) is True
    assert not alice.exists(big)


def test_creates_renames_and_deletes_racing_in_one_directory_keep_listing_and_mtime_right(webhdfs, alice, root):
    """Creators share the directory's lock: none waits for another's transaction, and the
    directory still ends with exactly the surviving names and a modification time no older
    than the last change in it."""
    shared = f"{root}/one-directory"
    alice.mkdirs(shared)

    def churn(client, worker: int) -> set[str]:
        kept = set()
        for i in range(12):
            name = f"w{worker}-{i}"
            client.write(f"{shared}/{name}", f"{worker}:{i}".encode())
            if i % 3 == 0:
                assert client.json("PUT", f"{shared}/{name}", "RENAME", destination=f"{shared}/{name}-moved") == \
                    {"boolean": True}
                name += "-moved"
            if i % 4 == 1:
                assert client.delete(f"{shared}/{name}", recursive=False) is True
                continue
            kept.add(name)
            # The caller hears back after the parent's time is set: never older than its entry.
            assert client.status(shared)["modificationTime"] >= client.status(f"{shared}/{name}")["modificationTime"]
        return kept

    expected = set().union(*in_parallel(webhdfs, "alice", churn, range(8)))
    listing = alice.listing(shared)
    assert set(listing) == expected
    for name in expected:
        worker, i = name.removeprefix("w").removesuffix("-moved").split("-")
        assert alice.read(f"{shared}/{name}") == f"{worker}:{i}".encode()
    assert alice.status(shared)["modificationTime"] >= max(entry["modificationTime"] for entry in listing.values())
    assert alice.status(shared)["childrenNum"] == len(expected)


def test_racing_overwriters_of_one_name_each_replace_it(webhdfs, alice, root):
    """overwrite=true racers do not lose to each other (HDFS: each replaces the file); the
    last to commit is what remains, whole."""
    path = f"{root}/overwritten"
    payloads = {i: f"writer {i} ".encode() * 700 for i in range(8)}
    barrier = threading.Barrier(8)

    def write(client, index: int) -> int:
        barrier.wait(timeout=30)
        response = client.create(path, payloads[index], overwrite="true")
        return outcome(response)[0]

    assert in_parallel(webhdfs, "alice", write, range(8)) == [201] * 8
    assert alice.read(path) in payloads.values()
