"""Delegation tokens end to end (#24), as a project member gets and uses one: logged in to
the deployed platform API, a member asks for its project's token; HdfsCLI's TokenClient,
fsspec's ``token=`` and Spark (a credentials file in HADOOP_TOKEN_FILE_LOCATION) then act
as ``<project>__<username>`` on every namenode, never as anyone else; a forged or a
cancelled token is refused.

The deployed namenodes may still run in simple mode (roles/configure
configure_security_mode): a token, when sent, is checked all the same, so these hold in
either mode."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import textwrap
from dataclasses import replace

import pytest
import requests
from fsspec.implementations.webhdfs import WebHDFS
from hdfs import HdfsError, TokenClient

from harness.support.platform import owned_projects, project_token
from hopshive.security.token_files import credentials_for
from hopshive.security.tokens import Token

pytestmark = [pytest.mark.platform]
PASSWORD = f"harness-{secrets.token_hex(8)}"


@pytest.fixture(scope="module")
def members(platform, targets, run_id) -> dict:
    """Two users owning a project each, with the token each got from the platform:
    {key: (project, project user, token urlString)}."""
    for made in owned_projects(platform, f"tk-{run_id}", PASSWORD):
        tokens = {}
        for key, (email, username, project) in made.items():
            answer = project_token(targets.platform_url, email, PASSWORD, project)
            assert answer["user"] == f"{project}__{username}", answer
            tokens[key] = (project, answer["user"], answer["urlString"])
        yield tokens


def namenode_urls(targets) -> list[str]:
    return [f"http://{address}" for address in targets.namenodes] or [targets.webhdfs_url]


def status(url: str, path: str, token: str) -> requests.Response:
    return requests.get(f"{url}/webhdfs/v1{path}", params={"op": "GETFILESTATUS", "delegation": token}, timeout=30)


def test_a_members_token_acts_as_its_project_user_on_every_namenode(targets, members):
    project, user, token = members["a"]
    client = TokenClient(targets.webhdfs_url, token)
    client.write(f"/Projects/{project}/by-token.txt", b"written with a platform token\n", overwrite=True)
    for url in namenode_urls(targets):       # a token issued once is believed by each namenode
        answer = status(url, f"/Projects/{project}/by-token.txt", token)
        assert answer.status_code == 200, f"{url}: {answer.text}"
        assert answer.json()["FileStatus"]["owner"] == user
    fs = WebHDFS(*targets.authority.rsplit(":", 1), token=token)
    assert fs.cat(f"/Projects/{project}/by-token.txt") == b"written with a platform token\n"


def test_a_token_reaches_no_other_project(targets, members):
    project_a = members["a"][0]
    _, _, token_b = members["b"]
    with pytest.raises(HdfsError, match="ermission denied"):
        TokenClient(targets.webhdfs_url, token_b).list(f"/Projects/{project_a}")
    with pytest.raises(PermissionError):
        WebHDFS(*targets.authority.rsplit(":", 1), token=token_b).ls(f"/Projects/{project_a}")
    # A name beside the token changes nothing: the token speaks, not user.name.
    answer = requests.get(f"{targets.webhdfs_url}/webhdfs/v1/Projects/{project_a}",
                          params={"op": "LISTSTATUS", "delegation": token_b, "user.name": "hdfs"}, timeout=30)
    assert answer.status_code == 403, answer.text


def test_forged_and_cancelled_tokens_are_refused(targets, platform, members, run_id):
    project, _, token = members["a"]
    parsed = Token.from_url_string(token)
    forged = replace(parsed, identifier=replace(parsed.decoded(), owner="hdfs").to_bytes()).url_string()
    answer = status(targets.webhdfs_url, "/", forged)
    assert answer.status_code == 403 and "InvalidToken" in answer.text, answer.text
    email = f"tk-{run_id}-a@harness.example.org"
    spare = project_token(targets.platform_url, email, PASSWORD, project)["urlString"]
    cancel = requests.put(f"{targets.webhdfs_url}/webhdfs/v1/", params={
        "op": "CANCELDELEGATIONTOKEN", "token": spare, "delegation": spare}, timeout=30)
    assert cancel.status_code == 200, cancel.text
    for url in namenode_urls(targets):
        refused = status(url, "/", spare)
        assert refused.status_code == 403 and "cancelled" in refused.text, f"{url}: {refused.text}"


SPARK_JOB = textwrap.dedent("""
    import sys
    from pyspark.sql import SparkSession
    spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
    spark.range(50).selectExpr("id", "id % 5 AS k").write.mode("overwrite").parquet(sys.argv[1])
    print("COUNT", spark.read.parquet(sys.argv[1]).count())
""")


@pytest.mark.spark
def test_spark_acts_as_the_member_with_the_token_file(targets, members, tmp_path):
    """pyspark with the deployment's client configuration and nothing but the token file
    (as `hopshive-platform login` writes it): the files belong to the project user."""
    project, user, token = members["a"]
    path = tmp_path / "token"
    path.write_bytes(credentials_for(Token.from_url_string(token), list(targets.namenodes) or [targets.authority],
                                     [targets.nameservice] if targets.nameservice else []))
    env = dict(os.environ, HADOOP_TOKEN_FILE_LOCATION=str(path))
    env.pop("HADOOP_USER_NAME", None)
    if targets.spark_conf_dir:
        env["SPARK_CONF_DIR"] = targets.spark_conf_dir
    done = subprocess.run([sys.executable, "-c", SPARK_JOB, targets.uri(f"/Projects/{project}/spark-out")],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "COUNT 50" in done.stdout, done.stderr[-3000:]
    listing = TokenClient(targets.webhdfs_url, token).list(f"/Projects/{project}/spark-out", status=True)
    assert listing and {entry["owner"] for _, entry in listing} == {user}
