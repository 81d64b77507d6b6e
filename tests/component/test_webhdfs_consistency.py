"""What clients see is what `hops.hdfs_inodes` holds (our namenode only: reads its database)."""

from __future__ import annotations

import pytest

from tests.support.invariants import leftovers, orphans, tree


@pytest.fixture
def database(webhdfs):
    if webhdfs.database is None:
        pytest.skip("the WebHDFS under test is not ours: its database cannot be read")
    return webhdfs.database


def client_tree(client, path: str, prefix: str = "") -> dict[str, tuple]:
    """The same shape as invariants.tree, built from LISTSTATUS only."""
    found = {}
    for name, status in client.listing(path).items():
        rel = f"{prefix}{name}"
        is_dir = status["type"] == "DIRECTORY"
        found[rel] = (is_dir, status["length"], int(status["permission"], 8), status["owner"], status["group"])
        if is_dir:
            found.update(client_tree(client, f"{path}/{name}", rel + "/"))
    return found


def test_inode_rows_match_what_clients_see(webhdfs, alice, root, database):
    alice.mkdirs(f"{root}/a/b/c", permission="750")
    alice.write(f"{root}/a/f1", b"x" * 1234)
    alice.write(f"{root}/a/b/f2", b"y" * 10, permission="600")
    alice.append(f"{root}/a/b/f2", b"z" * 5)
    alice.write(f"{root}/a/b/f2", b"short", overwrite="true")
    alice.json("PUT", f"{root}/a/f1", "RENAME", destination=f"{root}/a/b/c")
    alice.mkdirs(f"{root}/gone/deep")
    alice.delete(f"{root}/gone", recursive=True)
    alice.write(f"{root}/trashed", b"t")
    alice.delete(f"{root}/trashed", skiptrash="false")
    alice.chmod(f"{root}/a/b", "711")
    webhdfs.admin.chown(f"{root}/a/b/c", "bob", "staff")
    alice.write(f"{root}/ünï cødé", b"u")

    seen = client_tree(webhdfs.admin, root)
    assert set(seen) == {"a", "a/b", "a/b/c", "a/b/c/f1", "a/b/f2", "ünï cødé"}
    assert seen["a/b/c/f1"][:2] == (False, 1234) and seen["a/b/f2"][:3] == (False, 5, 0o644)  # overwritten: a new file, default mode
    assert tree(database, root) == seen
    assert orphans(database) == []
    assert leftovers(database) == {"leases": 0, "under_construction": 0, "subtree_locks": 0,
                                   "blocks_without_inode": 0}
