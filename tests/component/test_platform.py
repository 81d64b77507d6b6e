"""The platform API (hopshive-platform serve) and its CLI against a real namenode and
metastore: logins as HopsWorks answers them, and projects provisioned in the namespace and
the metastore."""

from __future__ import annotations

import http.client
from typing import Callable
from urllib.parse import urlencode

import pytest
import requests

from tests.support.platform_fixtures import platform_stack  # noqa: F401 (fixture)
from tests.support.prometheus import moved, scrape_url
from tests.support.server2 import ADMIN, API

pytestmark = pytest.mark.platform
PASSWORD = "correct horse battery"


@pytest.fixture(scope="module")
def platform(platform_stack):
    return platform_stack["platform"]


def add_user(platform, email: str, *flags: str, password: str = PASSWORD) -> None:
    added = platform.cli("user", "add", "--email", email, "--password-stdin", *flags, stdin=password + "\n")
    assert added.returncode == 0, added.stderr


def login(platform, email: str, password: str) -> requests.Response:
    return requests.post(platform.url + API + "/auth/login", data={"email": email, "password": password}, timeout=30)


def status(namenode, path: str, user: str = "hdfs") -> requests.Response:
    return requests.get(f"{namenode.url}/webhdfs/v1{path}", params={"op": "GETFILESTATUS", "user.name": user},
                        timeout=30)


def test_login_profile_logout(platform):
    add_user(platform, "Ann.Lee@Example.org", "--first", "Ann", "--last", "Lee")
    http = requests.Session()
    response = http.post(platform.url + API + "/auth/login",
                         data={"email": "ann.lee@example.org", "password": PASSWORD}, timeout=30)
    assert response.status_code == 200, response.text
    assert "SESSION" in http.cookies
    profile = http.get(platform.url + API + "/users/profile", timeout=30)
    assert profile.status_code == 200
    assert {k: profile.json()[k] for k in ("username", "email", "firstname", "lastname")} == {
        "username": "annlee", "email": "ann.lee@example.org", "firstname": "Ann", "lastname": "Lee"}
    assert http.post(platform.url + API + "/auth/logout", timeout=30).status_code == 200
    assert http.get(platform.url + API + "/users/profile", timeout=30).status_code == 401


def test_wrong_password_and_unknown_email_look_the_same(platform):
    add_user(platform, "bo@example.org")
    wrong, unknown = login(platform, "bo@example.org", "not the password"), login(platform, "nobody@example.org", "x" * 9)
    assert (wrong.status_code, unknown.status_code) == (401, 401)
    assert wrong.json()["errorMsg"] == unknown.json()["errorMsg"] == "Authentication failed: wrong e-mail or password"


@pytest.mark.parametrize("flags, words", [(("--two-factor",), "two-factor"), (("--inactive",), "not activated")])
def test_refused_accounts(platform, flags, words):
    email = f"refused-{flags[0][2:]}@example.org"
    add_user(platform, email, *flags)
    response = login(platform, email, PASSWORD)
    assert response.status_code == 403 and words in response.json()["errorMsg"], response.text


def test_blocked_account_is_refused_and_loses_its_sessions(platform):
    add_user(platform, "cy@example.org")
    http = platform.session("cy@example.org", PASSWORD)
    assert platform.cli("user", "block", "cy@example.org").returncode == 0
    assert http.get(platform.url + API + "/users/profile", timeout=30).status_code == 401
    response = login(platform, "cy@example.org", PASSWORD)
    assert response.status_code == 403 and "blocked" in response.json()["errorMsg"]
    assert platform.cli("user", "unblock", "cy@example.org").returncode == 0
    assert login(platform, "cy@example.org", PASSWORD).status_code == 200


def test_bad_cli_input_is_refused_clearly(platform):
    short = platform.cli("user", "add", "--email", "dee@example.org", "--password-stdin", stdin="short\n")
    assert short.returncode == 1 and "at least 8 characters" in short.stderr
    bad = platform.cli("project", "create", "Bad__Name", "--owner", ADMIN[0])
    assert bad.returncode == 1 and "invalid project name" in bad.stderr
    missing = platform.cli("project", "create", "orphan", "--owner", "ghost@example.org")
    assert missing.returncode == 1 and "no user with e-mail" in missing.stderr


def test_admin_api_is_for_admins_only(platform):
    add_user(platform, "eve@example.org")
    eve = platform.session("eve@example.org", PASSWORD)
    refused = eve.post(platform.url + API + "/admin/users", json={"email": "x@example.org", "password": PASSWORD},
                       timeout=30)
    assert refused.status_code == 403
    admin = platform.session(*ADMIN)
    made = admin.post(platform.url + API + "/admin/users", json={"email": "fay@example.org", "password": PASSWORD},
                      timeout=30)
    assert made.status_code == 201 and made.json()["username"] == "fay"
    assert login(platform, "fay@example.org", PASSWORD).status_code == 200


Status = Callable[..., requests.Response]     # (path, user="hdfs") -> GETFILESTATUS as that user


def test_project_lifecycle(platform, platform_stack):
    nn = platform_stack["namenode"]
    check_project_lifecycle(platform, platform_stack["db"], lambda path, user="hdfs": status(nn, path, user))


def check_project_lifecycle(platform, db, status: Status, name: str = "sales") -> None:
    """Create, add a member, remove them, delete, through the CLI; ``status`` looks at the
    namespace as a user (shared with test_platform_secure.py, where it proves who with a token)."""
    owner, member = "gil@example.org", "hal@example.org"
    owner_user, member_user = f"{name}__gil", f"{name}__hal"
    add_user(platform, owner)
    add_user(platform, member)
    created = platform.cli("project", "create", name, "--owner", owner)
    assert created.returncode == 0, created.stderr + platform.log_tail()
    project_dir = status(f"/Projects/{name}").json()["FileStatus"]
    database_dir = status(f"/user/hive/warehouse/{name}.db").json()["FileStatus"]
    for found in (project_dir, database_dir):
        assert (found["owner"], found["group"], found["permission"]) == (owner_user, name, "770")
    # the Hive admin made the database but cannot read it after the hand-over
    assert status(f"/user/hive/warehouse/{name}.db/x", user="hive").status_code == 403
    assert status("/Projects").json()["FileStatus"]["permission"] == "755"    # members must get through
    home = status(f"/user/{owner_user}").json()["FileStatus"]
    assert (home["owner"], home["group"], home["permission"]) == (owner_user, name, "700")

    def members() -> set:
        with db.transaction() as tx:
            return {r[0] for r in tx.query(
                "SELECT u.name FROM hops.hdfs_users_groups ug JOIN hops.hdfs_users u ON u.id=ug.user_id"
                " JOIN hops.hdfs_groups g ON g.id=ug.group_id WHERE g.name=%s", (name,))}
    assert members() == {owner_user}
    added = platform.cli("project", "add-member", name, member, "--role", "Data scientist")
    assert added.returncode == 0, added.stderr
    assert members() == {owner_user, member_user}
    assert status(f"/user/{member_user}").status_code == 200
    hal = platform.session(member, PASSWORD)
    assert [p["name"] for p in hal.get(platform.url + API + "/project", timeout=30).json()] == [name]
    removed = platform.cli("project", "remove-member", name, member)
    assert removed.returncode == 0, removed.stderr
    assert members() == {owner_user}
    assert status(f"/user/{member_user}").status_code == 404
    owner_out = platform.cli("project", "remove-member", name, owner)
    assert owner_out.returncode == 1 and "owner cannot be removed" in owner_out.stderr
    deleted = platform.cli("project", "delete", name)
    assert deleted.returncode == 0, deleted.stderr
    assert status(f"/Projects/{name}").status_code == 404
    assert status(f"/user/hive/warehouse/{name}.db").status_code == 404
    assert status(f"/user/{owner_user}").status_code == 404
    with db.transaction() as tx:
        assert tx.query("SELECT NAME FROM metastore.DBS WHERE NAME=%s", (name,)) == []


def login_from(platform, source: str, email: str, password: str, forwarded: str | None = None) -> int:
    """A login whose connection comes from ``source`` (any 127.x address is this host)."""
    port = int(platform.url.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(source, 0))
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    if forwarded:
        headers["X-Forwarded-For"] = forwarded
    try:
        conn.request("POST", API + "/auth/login", urlencode({"email": email, "password": password}), headers)
        return conn.getresponse().status
    finally:
        conn.close()


def test_a_trusted_proxy_has_its_clients_limited_one_by_one(platform):
    """server2 logs every JDBC client in from its own address: the platform counts failures
    per forwarded client, so one client guessing passwords locks out only itself; a peer that
    is not a trusted proxy cannot choose the address it is counted under."""
    add_user(platform, "kim@example.org")
    for attempt in range(8):
        assert login_from(platform, "127.0.0.1", f"guess-k{attempt}@example.org", "x", "198.51.100.7") == 401
    assert login_from(platform, "127.0.0.1", "kim@example.org", PASSWORD, "198.51.100.7") == 429
    assert login_from(platform, "127.0.0.1", "kim@example.org", PASSWORD, "10.9.9.9, 198.51.100.8") == 200
    for attempt in range(8):
        assert login_from(platform, "127.0.0.3", f"guess-u{attempt}@example.org", "x",
                          f"198.51.100.{20 + attempt}") == 401
    assert login_from(platform, "127.0.0.3", "kim@example.org", PASSWORD, "198.51.100.99") == 429


def test_metrics_count_logins_refusals_and_lockouts(platform):
    """/metrics of the running platform, scraped before and after real logins from an address
    of their own (127.0.0.5: its failures limit nobody else)."""
    add_user(platform, "lu@example.org")
    add_user(platform, "max@example.org")
    assert platform.cli("user", "block", "max@example.org").returncode == 0
    before = scrape_url(platform.url + "/metrics")
    statuses = [login_from(platform, "127.0.0.5", "lu@example.org", PASSWORD),
                login_from(platform, "127.0.0.5", "max@example.org", PASSWORD),
                *(login_from(platform, "127.0.0.5", "lu@example.org", "wrong") for _ in range(3)),
                login_from(platform, "127.0.0.5", "lu@example.org", PASSWORD)]
    after = scrape_url(platform.url + "/metrics")
    assert statuses == [200, 403, 401, 401, 401, 429]
    outcomes = ("ok", "refused", "bad_credentials", "locked_out", "invalid")
    assert {outcome: moved(before, after, "hopshive_platform_logins_total", outcome=outcome)
            for outcome in outcomes} == {"ok": 1, "refused": 1, "bad_credentials": 3, "locked_out": 1, "invalid": 0}


def test_failures_are_limited_per_account_then_per_address(platform):
    """Last in the module: it exhausts this address's allowance (8 failures a minute; the
    module's earlier tests failed twice)."""
    add_user(platform, "ida@example.org")
    for _ in range(3):
        assert login(platform, "ida@example.org", "wrong password").status_code == 401
    limited = login(platform, "ida@example.org", PASSWORD)
    assert limited.status_code == 429 and "Too many failed logins" in limited.json()["errorMsg"]
    assert int(limited.headers["Retry-After"]) > 0
    add_user(platform, "jo@example.org")
    assert login(platform, "jo@example.org", PASSWORD).status_code == 200    # another account: fine
    for attempt in range(3):
        assert login(platform, f"guess{attempt}@example.org", "guessing").status_code == 401
    response = login(platform, "jo@example.org", PASSWORD)   # the address has failed 8 times
    assert response.status_code == 429, response.text

