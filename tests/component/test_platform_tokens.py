"""Delegation tokens from the platform API (#24): what a project member gets, and what a
namenode believes.  A module of its own: its logins must not share the login-failure
budget of test_platform.py's rate-limit tests."""

from __future__ import annotations

import time
from dataclasses import replace

import requests

from hopshive.security.secrets import SecretManager
from hopshive.security.tokens import HIVE_KIND, SWEBHDFS_KIND, WEBHDFS_KIND, Token, read_credentials_file
from tests.component.test_platform import PASSWORD, add_user, platform  # noqa: F401 (fixture)
from tests.support.platform_fixtures import platform_stack  # noqa: F401 (fixture)
from tests.support.server2 import API


def test_project_token_for_members_only(platform, platform_stack):
    """POST /project/{name}/token: a member's delegation token as <project>__<username>,
    which a namenode believes (and which speaks for no one else)."""
    add_user(platform, "ivy@example.org")
    add_user(platform, "jon@example.org")
    assert platform.cli("project", "create", "tok", "--owner", "ivy@example.org").returncode == 0
    ivy, jon = requests.Session(), requests.Session()
    for http, email in ((ivy, "ivy@example.org"), (jon, "jon@example.org")):
        assert http.post(platform.url + API + "/auth/login", data={"email": email, "password": PASSWORD},
                         timeout=30).status_code == 200
    answer = ivy.post(platform.url + API + "/project/tok/token", timeout=30)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["user"] == "tok__ivy" and body["expiresAt"] > time.time() * 1000
    identifier = SecretManager(platform_stack["db"]).verify_url_string(body["urlString"])
    assert (identifier.owner, identifier.renewer) == ("tok__ivy", "tok__ivy")
    namenode = platform_stack["namenode"]
    listed = requests.get(f"{namenode.url}/webhdfs/v1/Projects/tok",
                          params={"op": "LISTSTATUS", "delegation": body["urlString"], "user.name": "hdfs"},
                          timeout=30)
    assert listed.status_code == 200, listed.text
    token = Token.from_url_string(body["urlString"])
    forged = replace(token, password=bytes([token.password[0] ^ 1]) + token.password[1:]).url_string()
    assert requests.get(f"{namenode.url}/webhdfs/v1/user/tok__ivy",
                        params={"op": "GETFILESTATUS", "delegation": forged}, timeout=30).status_code == 403
    assert jon.post(platform.url + API + "/project/tok/token", timeout=30).status_code == 403
    assert requests.post(platform.url + API + "/project/tok/token", timeout=30).status_code == 401
    assert ivy.post(platform.url + API + "/project/nope/token", timeout=30).status_code == 404

    # The same through `hopshive-platform login`, which writes the token file clients use.
    path = platform_stack["base"] / "ivy" / "token"
    done = platform.cli("login", "--url", platform.url, "--email", "ivy@example.org", "--password-stdin",
                        "--project", "tok", "--namenode", namenode.address, "--file", str(path),
                        stdin=PASSWORD + "\n")
    assert done.returncode == 0, done.stderr
    filed = read_credentials_file(path.read_bytes())
    assert path.stat().st_mode & 0o777 == 0o600
    assert {(t.kind, t.service) for t in filed.values()} == {
        (WEBHDFS_KIND, namenode.address), (SWEBHDFS_KIND, namenode.address), (HIVE_KIND, "hopshive")}
    assert {t.url_string() for t in filed.values()} != {done.stdout.strip()}     # labelled, same secret:
    assert {Token.from_url_string(done.stdout.strip()).password} == {t.password for t in filed.values()}
    refused = platform.cli("login", "--url", platform.url, "--email", "jon@example.org", "--password-stdin",
                           "--project", "tok", "--file", str(path) + ".jon", stdin=PASSWORD + "\n")
    assert refused.returncode == 1 and "not a member" in refused.stderr
    assert platform.cli("project", "delete", "tok").returncode == 0
