"""The delegation-token secret manager on a real MariaDB: issue, verify, renew, cancel,
key rolling, and every way a token must fail."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from hopshive.core.db import Database
from hopshive.exceptions import AccessDenied, InvalidToken
from hopshive.security import secrets
from hopshive.security.block_tokens import HEADER, READ, WRITE, BlockTokens
from hopshive.security.secrets import SecretManager, TokenPolicy
from hopshive.security.tokens import Token


@pytest.fixture
def manager(db):
    return SecretManager(db, TokenPolicy(cache_seconds=0))


def test_issued_token_verifies_on_another_node(manager, mariadb):
    token = manager.issue("p1__alice", renewer="p1__alice")
    other = SecretManager(Database(mariadb.config))      # another process: no cached key
    ident = other.verify(Token.from_url_string(token.url_string()))
    assert (ident.owner, ident.renewer, ident.real_user) == ("p1__alice", "p1__alice", "")
    assert ident.max_date - ident.issue_date == 7 * 86_400_000


@pytest.mark.parametrize("field", ["identifier", "password"])
def test_a_changed_byte_is_refused(manager, field):
    token = manager.issue("p1__alice")
    raw = bytearray(getattr(token, field))
    raw[-1] ^= 1
    with pytest.raises(InvalidToken):
        manager.verify(replace(token, **{field: bytes(raw)}))


def test_a_forged_identifier_for_another_user_is_refused(manager):
    token = manager.issue("p1__alice")
    forged = replace(token.decoded(), owner="hdfs")
    with pytest.raises(InvalidToken, match="password does not match"):
        manager.verify(replace(token, identifier=forged.to_bytes()))


def test_cancelled_token_is_refused_and_only_owner_or_renewer_cancel(manager):
    token = manager.issue("p1__alice", renewer="server2")
    with pytest.raises(AccessDenied):
        manager.cancel(token, "p2__bob")
    manager.cancel(token, "server2")
    with pytest.raises(InvalidToken, match="cancelled"):
        manager.verify(token)
    with pytest.raises(InvalidToken):
        manager.cancel(token, "p1__alice")


def test_expired_token_is_refused_until_renewed_by_its_renewer(db):
    manager = SecretManager(db, TokenPolicy(renew_interval=0.5, cache_seconds=0))
    token = manager.issue("p1__alice", renewer="p1__alice")
    manager.verify(token)
    time.sleep(0.7)
    with pytest.raises(InvalidToken, match="expired"):
        manager.verify(token)
    with pytest.raises(InvalidToken):          # an expired token cannot be renewed either
        manager.renew(token, "p1__alice")
    fresh = manager.issue("p1__alice", renewer="p1__alice")
    with pytest.raises(AccessDenied):
        manager.renew(fresh, "p2__bob")
    assert manager.renew(fresh, "p1__alice") > int(time.time() * 1000)


def test_max_lifetime_bounds_renewal(db):
    manager = SecretManager(db, TokenPolicy(renew_interval=60, max_lifetime=0.5, cache_seconds=0))
    token = manager.issue("p1__alice", renewer="p1__alice")
    assert manager.renew(token, "p1__alice") == token.decoded().max_date
    time.sleep(0.7)
    with pytest.raises(InvalidToken, match="max lifetime"):
        manager.verify(token)


def test_keys_roll_and_old_keys_keep_verifying(db):
    manager = SecretManager(db, TokenPolicy(key_update_interval=0.3, cache_seconds=0))
    first = manager.issue("p1__alice")
    time.sleep(0.4)
    second = manager.issue("p1__alice")
    assert second.decoded().master_key_id != first.decoded().master_key_id
    manager.verify(first)
    manager.verify(second)


def test_purge_removes_expired_tokens_and_dead_keys(db):
    manager = SecretManager(db, TokenPolicy(renew_interval=0.2, key_update_interval=0.1, max_lifetime=0.2))
    manager.issue("p1__alice")
    time.sleep(0.5)
    assert manager.purge() == (1, 1)


def test_password_for_sasl_is_the_token_password(manager):
    token = manager.issue("p1__alice")
    ident, password = manager.password_for(token.identifier)
    assert ident.owner == "p1__alice" and password == token.password


# ------------------------------------- the verified url strings (WebHDFS's delegation=)
@pytest.fixture
def decodes(monkeypatch):
    """How many times a url string was decoded (a verification that missed the cache)."""
    calls = []
    original = Token.from_url_string.__func__

    def counting(cls, text):
        calls.append(text)
        return original(cls, text)
    monkeypatch.setattr(Token, "from_url_string", classmethod(counting))
    return calls


def test_a_verified_url_string_is_believed_again_without_decoding(db, decodes):
    manager = SecretManager(db, TokenPolicy(cache_seconds=60))
    token = manager.issue("p1__alice")
    text = token.url_string()
    assert [manager.verify_url_string(text).owner for _ in range(3)] == ["p1__alice"] * 3
    assert len(decodes) == 1
    password = bytearray(token.password)
    password[0] ^= 1
    with pytest.raises(InvalidToken, match="password"):   # another string: checked in full
        manager.verify_url_string(replace(token, password=bytes(password)).url_string())


def test_a_cancelled_url_string_is_refused_at_once_despite_the_cache(db, decodes):
    manager = SecretManager(db, TokenPolicy(cache_seconds=60))
    token = manager.issue("p1__alice", renewer="server2")
    text = token.url_string()
    manager.verify_url_string(text)
    manager.verify_url_string(text)
    manager.cancel(token, "server2")
    with pytest.raises(InvalidToken, match="cancelled"):
        manager.verify_url_string(text)


def test_a_url_string_cancelled_on_another_node_is_refused_once_the_cache_window_passed(db, mariadb):
    manager = SecretManager(db, TokenPolicy(cache_seconds=0.5))
    token = manager.issue("p1__alice")
    text = token.url_string()
    manager.verify_url_string(text)
    SecretManager(Database(mariadb.config)).cancel(token, "p1__alice")     # another process
    time.sleep(0.6)
    with pytest.raises(InvalidToken, match="cancelled"):
        manager.verify_url_string(text)


def test_a_cached_url_string_is_refused_once_it_expires(db):
    manager = SecretManager(db, TokenPolicy(renew_interval=0.5, cache_seconds=60))
    text = manager.issue("p1__alice", renewer="p1__alice").url_string()
    manager.verify_url_string(text)
    time.sleep(0.7)                            # well inside the cache window, past the expiry
    with pytest.raises(InvalidToken, match="expired"):
        manager.verify_url_string(text)


def test_a_renewed_url_string_is_checked_again(db, decodes):
    manager = SecretManager(db, TokenPolicy(renew_interval=60, cache_seconds=60))
    token = manager.issue("p1__alice", renewer="p1__alice")
    manager.verify_url_string(token.url_string())
    manager.renew(token, "p1__alice")
    manager.verify_url_string(token.url_string())
    assert len(decodes) == 2


def test_a_token_renewed_on_another_node_is_honoured_here_past_its_old_expiry(db, mariadb, decodes):
    manager = SecretManager(db, TokenPolicy(renew_interval=0.5, cache_seconds=60))
    token = manager.issue("p1__alice", renewer="p1__alice")
    text = token.url_string()
    manager.verify_url_string(text)                        # its row (old expiry) cached for 60 s
    SecretManager(Database(mariadb.config), TokenPolicy(renew_interval=60)).renew(token, "p1__alice")
    time.sleep(0.7)                                        # past the old expiry, inside the cache window
    assert manager.verify_url_string(text).owner == "p1__alice"
    assert manager.verify(token).owner == "p1__alice"
    assert len(decodes) == 1                               # its signature was not checked again


def test_after_the_cache_window_only_the_row_is_read_again(db, decodes):
    manager = SecretManager(db, TokenPolicy(cache_seconds=0.2))
    text = manager.issue("p1__alice").url_string()
    manager.verify_url_string(text)
    time.sleep(0.3)
    assert manager.verify_url_string(text).owner == "p1__alice"
    assert len(decodes) == 1


def test_the_verified_strings_are_a_bounded_lru(db, decodes, monkeypatch):
    monkeypatch.setattr(secrets, "VERIFIED_LIMIT", 2)
    manager = SecretManager(db, TokenPolicy(cache_seconds=60))
    first, second, third = (manager.issue(f"p1__user{i}").url_string() for i in range(3))
    manager.verify_url_string(first)
    manager.verify_url_string(second)
    manager.verify_url_string(first)                       # used last: kept
    manager.verify_url_string(third)                       # drops second
    assert len(decodes) == 3
    manager.verify_url_string(first)
    manager.verify_url_string(third)
    assert len(decodes) == 3
    assert manager.verify_url_string(second).owner == "p1__user1"   # verified in full again
    assert len(decodes) == 4


def test_block_access_tokens_grant_one_block_one_access_until_they_expire(manager, mariadb):
    grants = BlockTokens(manager)
    header = grants.headers(7, READ)[HEADER]
    BlockTokens(SecretManager(Database(mariadb.config))).check(header, 7, READ)   # any namenode checks it
    for text, block_id, access in [(header, 8, READ), (header, 7, WRITE), (None, 7, READ), ("1.2", 7, READ),
                                   ("x.y.z", 7, READ), ("999999." + header.split(".", 1)[1], 7, READ)]:
        with pytest.raises(InvalidToken):
            grants.check(text, block_id, access)
    with pytest.raises(InvalidToken, match="expired"):
        grants.check(BlockTokens(manager, lifetime=-1).headers(7, READ)[HEADER], 7, READ)
