"""WebHDFS contract: who the caller is (user.name, doas) and what they may do (POSIX modes,
the sticky bit, recursive delete).  Every refusal must leave the namespace unchanged."""

from __future__ import annotations

import pytest

from tests.support.invariants import inode_id
from tests.support.namenode import PROXY_USER
from tests.support.webhdfs import remote_exception

ACCESS_CONTROL = "org.apache.hadoop.security.AccessControlException"
# Hadoop refuses an impersonation with AuthorizationException (a subclass); we answer its parent.
REFUSED_PROXY = {ACCESS_CONTROL, "org.apache.hadoop.security.authorize.AuthorizationException",
                 "java.lang.SecurityException"}


def test_user_name_is_the_owner_of_what_it_creates(alice, webhdfs, root):
    alice.write(f"{root}/by-alice", b"1")
    webhdfs.admin.chmod(root, "777")
    webhdfs.client("carol").mkdirs(f"{root}/by-carol")
    assert alice.status(f"{root}/by-alice")["owner"] == "alice"
    assert alice.status(f"{root}/by-carol")["owner"] == "carol"


def test_an_allowed_proxy_user_acts_as_doas(webhdfs, root):
    webhdfs.admin.chmod(root, "777")
    as_bob = webhdfs.client(PROXY_USER, doas="bob")
    as_bob.write(f"{root}/f", b"1")
    assert as_bob.json("GET", "/", "GETHOMEDIRECTORY") == {"Path": "/user/bob"}
    assert webhdfs.admin.status(f"{root}/f")["owner"] == "bob"


def test_a_wildcard_proxy_rule_never_covers_a_superuser(webhdfs, root, ours_only):
    """Hadoop's hadoop.proxyuser.<svc>.users=* covers hdfs too; ours never does."""
    webhdfs.admin.chmod(root, "777")
    as_hdfs = webhdfs.client(PROXY_USER, doas="hdfs")
    remote_exception(as_hdfs.call("PUT", f"{root}/as-superuser", "MKDIRS"), 403, REFUSED_PROXY)
    assert not webhdfs.admin.exists(f"{root}/as-superuser")


def test_impersonation_by_a_non_proxy_user_is_refused(webhdfs, alice, root):
    mallory = webhdfs.client("alice", doas="hdfs")
    remote_exception(mallory.call("PUT", f"{root}/evil", "MKDIRS"), 403, REFUSED_PROXY)
    remote_exception(mallory.call("GET", "/", "GETHOMEDIRECTORY"), 403, REFUSED_PROXY)
    assert not alice.exists(f"{root}/evil")


@pytest.mark.parametrize("attempt", ["create", "mkdirs", "delete", "rename", "append", "chmod"])
def test_a_non_owner_cannot_write_in_a_755_directory(alice, bob, root, attempt):
    alice.write(f"{root}/f", b"alice's")
    response = {
        "create": lambda: bob.create(f"{root}/g", b"bob's"),
        "mkdirs": lambda: bob.call("PUT", f"{root}/d", "MKDIRS"),
        "delete": lambda: bob.call("DELETE", f"{root}/f", "DELETE"),
        "rename": lambda: bob.call("PUT", f"{root}/f", "RENAME", destination=f"{root}/h"),
        "append": lambda: bob.append(f"{root}/f", b"more"),
        "chmod": lambda: bob.call("PUT", f"{root}/f", "SETPERMISSION", permission="777"),
    }[attempt]()
    remote_exception(response, 403, ACCESS_CONTROL)
    assert list(alice.listing(root)) == ["f"]
    assert alice.read(f"{root}/f") == b"alice's"
    assert alice.status(f"{root}/f")["permission"] == "644"


def test_a_private_file_cannot_be_read_by_others(alice, bob, root):
    alice.write(f"{root}/secret", b"s3cr3t", permission="600")
    remote_exception(bob.open(f"{root}/secret"), 403, ACCESS_CONTROL)
    alice.mkdirs(f"{root}/closed", permission="700")
    remote_exception(bob.call("GET", f"{root}/closed", "LISTSTATUS"), 403, ACCESS_CONTROL)
    remote_exception(bob.call("GET", f"{root}/closed/x", "GETFILESTATUS"), 403, ACCESS_CONTROL)


def test_the_sticky_bit_protects_other_users_entries(webhdfs, alice, bob, root):
    shared = f"{root}/tmp"
    alice.mkdirs(shared)
    alice.chmod(shared, "1777")
    carol = webhdfs.client("carol")
    alice.write(f"{shared}/alices", b"a")
    bob.write(f"{shared}/bobs", b"b")
    carol.write(f"{shared}/carols", b"c")

    remote_exception(bob.call("DELETE", f"{shared}/carols", "DELETE"), 403, ACCESS_CONTROL)
    remote_exception(bob.call("PUT", f"{shared}/carols", "RENAME", destination=f"{shared}/stolen"),
                     403, ACCESS_CONTROL)
    assert sorted(alice.listing(shared)) == ["alices", "bobs", "carols"]
    assert bob.delete(f"{shared}/bobs") is True          # own entry
    assert alice.delete(f"{shared}/carols") is True      # the directory's owner
    assert sorted(alice.listing(shared)) == ["alices"]


def test_recursive_delete_needs_write_on_every_directory_inside(alice, root):
    alice.mkdirs(f"{root}/tree/locked/inner")
    alice.write(f"{root}/tree/locked/inner/f", b"1")
    alice.write(f"{root}/tree/g", b"2")
    alice.chmod(f"{root}/tree/locked", "555")
    response = alice.call("DELETE", f"{root}/tree", "DELETE", recursive="true")
    remote_exception(response, 403, ACCESS_CONTROL)
    assert alice.read(f"{root}/tree/locked/inner/f") == b"1"
    assert alice.read(f"{root}/tree/g") == b"2"


def test_the_superuser_may_do_anything(webhdfs, alice, root):
    alice.mkdirs(f"{root}/closed", permission="000")
    admin = webhdfs.admin
    admin.write(f"{root}/closed/f", b"x")
    assert admin.read(f"{root}/closed/f") == b"x"
    assert admin.delete(f"{root}/closed") is True


def test_content_summary_needs_read_access_to_every_directory_it_counts(alice, bob, root):
    alice.call("PUT", f"{root}/tree/private", "MKDIRS")
    alice.write(f"{root}/tree/private/f", b"secret")
    alice.chmod(f"{root}/tree/private", "700")
    remote_exception(bob.call("GET", f"{root}/tree", "GETCONTENTSUMMARY"), 403, {ACCESS_CONTROL})
    assert alice.json("GET", f"{root}/tree", "GETCONTENTSUMMARY")["ContentSummary"]["length"] == 6


def test_create_without_access_tells_nothing_about_existing_names(alice, bob, root):
    """No file-name oracle: the same AccessControlException whether the name exists or not."""
    alice.call("PUT", f"{root}/closed", "MKDIRS")
    alice.write(f"{root}/closed/exists", b"1")
    alice.chmod(f"{root}/closed", "700")
    for name in ("exists", "missing"):
        remote_exception(bob.create(f"{root}/closed/{name}", b"x", overwrite="false"), 403, {ACCESS_CONTROL})
    alice.chmod(f"{root}/closed", "755")
    remote_exception(bob.create(f"{root}/closed/exists", b"x", overwrite="false"), 403, {ACCESS_CONTROL})


def test_a_refused_setowner_registers_no_user_or_group(alice, bob, root, webhdfs, ours_only):
    alice.write(f"{root}/f", b"1")
    remote_exception(bob.call("PUT", f"{root}/f", "SETOWNER", owner="mallory_new_user", group="mallory_new_group"),
                     403, {ACCESS_CONTROL})
    with webhdfs.database.transaction() as tx:
        assert tx.query("SELECT name FROM hops.hdfs_users WHERE name='mallory_new_user'") == []
        assert tx.query("SELECT name FROM hops.hdfs_groups WHERE name='mallory_new_group'") == []


def test_a_refused_setpermission_writes_nothing(alice, root, webhdfs, ours_only):
    """Refused for not owning the file, and for not reaching it: the inode row is exactly
    as before and the caller's name is not registered."""
    alice.write(f"{root}/f", b"1")
    alice.call("PUT", f"{root}/closed", "MKDIRS", permission="700")
    alice.write(f"{root}/closed/g", b"2")

    def rows() -> list[tuple]:
        with webhdfs.database.transaction() as tx:
            return [tx.query_one("SELECT * FROM hops.hdfs_inodes WHERE id=%s", (inode_id(webhdfs.database, path),))
                    for path in (f"{root}/f", f"{root}/closed/g")]
    before = rows()
    mallory = webhdfs.client("mallory_chmod")
    for path in (f"{root}/f", f"{root}/closed/g"):
        remote_exception(mallory.call("PUT", path, "SETPERMISSION", permission="777"), 403, {ACCESS_CONTROL})
    assert rows() == before
    with webhdfs.database.transaction() as tx:
        assert tx.query("SELECT name FROM hops.hdfs_users WHERE name='mallory_chmod'") == []
