"""Where the client adapters find a user's token: the Hadoop token file `hopshive-platform
login` writes (namenodes read from the Spark client configuration), or a urlString given;
and which FileIO pyiceberg picks for the namespace's schemes."""

from __future__ import annotations

import pytest

from hopshive.clients.pyiceberg import hive_token
from hopshive.security.token_files import credentials_for, namenodes_of_client_conf, webhdfs_token_of
from hopshive.security.tokens import HIVE_KIND, WEBHDFS_KIND, Token, TokenIdentifier, credentials_file

TOKEN = Token(TokenIdentifier("p__ann", "p__ann", "", 1, 2, 3, 4).to_bytes(), b"\x01" * 20)

CORE_SITE = """<?xml version="1.0"?>
<configuration>
  <property><name>fs.defaultFS</name><value>{default}</value></property>
  {extra}
</configuration>
"""


def test_the_hive_token_of_the_token_file(tmp_path):
    path = tmp_path / "token"
    path.write_bytes(credentials_for(TOKEN, ["10.0.0.1:9870"]))
    found = hive_token(environ={"HADOOP_TOKEN_FILE_LOCATION": str(path)})
    assert (found.kind, found.identifier, found.password) == (HIVE_KIND, TOKEN.identifier, TOKEN.password)


def test_a_url_string_wins_over_the_file(tmp_path):
    assert hive_token(TOKEN.url_string(), environ={"HADOOP_TOKEN_FILE_LOCATION": "/nonexistent"}).identifier \
        == TOKEN.identifier


def test_no_token_is_a_clear_error():
    with pytest.raises(ValueError, match="HADOOP_TOKEN_FILE_LOCATION"):
        hive_token(environ={})


def test_a_client_configuration_of_one_namenode(tmp_path):
    (tmp_path / "core-site.xml").write_text(CORE_SITE.format(default="webhdfs://10.0.0.1:9870", extra=""))
    assert namenodes_of_client_conf(tmp_path) == (["10.0.0.1:9870"], [])


def test_a_client_configuration_of_a_nameservice(tmp_path):
    extra = "".join(f"<property><name>{n}</name><value>{v}</value></property>" for n, v in [
        ("dfs.nameservices", "hopshive"), ("dfs.ha.namenodes.hopshive", "nn1,nn2"),
        ("dfs.namenode.http-address.hopshive.nn1", "10.0.0.1:9870"),
        ("dfs.namenode.http-address.hopshive.nn2", "10.0.0.2:9870")])
    (tmp_path / "core-site.xml").write_text(CORE_SITE.format(default="webhdfs://hopshive", extra=extra))
    assert namenodes_of_client_conf(tmp_path) == (["10.0.0.1:9870", "10.0.0.2:9870"], ["hopshive"])


def test_no_client_configuration(tmp_path):
    assert namenodes_of_client_conf(tmp_path) == ([], [])


def test_the_webhdfs_token_of_a_namenode_in_the_token_file():
    other = Token(TokenIdentifier("p__bob", "p__bob", "", 1, 2, 3, 4).to_bytes(), b"\x02" * 20)
    raw = credentials_file({"a": other.labelled(WEBHDFS_KIND, "10.0.0.2:9870"),
                            "b": TOKEN.labelled(WEBHDFS_KIND, "10.0.0.1:9870")})
    assert webhdfs_token_of(raw, "10.0.0.1:9870").password == TOKEN.password
    assert webhdfs_token_of(raw, "10.0.0.9:9870").password == other.password    # any, for an unknown address
    assert webhdfs_token_of(credentials_file({"h": TOKEN.labelled(HIVE_KIND, "hopshive")}), "10.0.0.1:9870") is None


def test_pyiceberg_picks_the_webhdfs_fileio_by_scheme():
    from pyiceberg.io import load_file_io

    from hopshive.clients.webhdfs_io import WebHdfsFileIO
    for location in ("webhdfs://nn:9870/w/t", "swebhdfs://nn:9870/w/t"):
        assert isinstance(load_file_io({}, location), WebHdfsFileIO)
    with pytest.raises(ValueError, match="webhdfs:// and swebhdfs://"):
        WebHdfsFileIO().new_input("hdfs://nn:8020/w/t")
