"""hopshive.core.tls: what a service accepts as TLS settings, and which CA a client verifies
with; token files name both WebHDFS schemes (#24 item 4)."""

from __future__ import annotations

import ssl

import pytest
import requests

from hopshive.core.config import ConfigError
from hopshive.core.tls import VerifyingSession, http_scheme, reload_server_context, server_context
from hopshive.security.token_files import credentials_for, namenodes_of_client_conf
from hopshive.security.tokens import SWEBHDFS_KIND, WEBHDFS_KIND, Token, read_credentials_file
from tests.support.tls import make_ca

pytestmark = pytest.mark.unit


def test_no_files_no_tls_and_half_a_pair_is_refused(tmp_path):
    assert server_context({"tls_cert_file": "", "tls_key_file": ""}, "namenode") is None
    assert http_scheme({"tls_cert_file": ""}) == "http"
    with pytest.raises(ConfigError, match="namenode.tls_cert_file and namenode.tls_key_file"):
        server_context({"tls_cert_file": "/x.pem", "tls_key_file": ""}, "namenode")
    with pytest.raises(ConfigError, match="metastore.tls_cert_file/tls_key_file cannot be used"):
        server_context({"tls_cert_file": str(tmp_path / "none.pem"), "tls_key_file": str(tmp_path / "none.key")},
                       "metastore")


def test_a_server_context_takes_tls_1_2_and_later(tmp_path):
    ca = make_ca(tmp_path)
    context = server_context(ca.server_settings(), "platform")
    assert context.minimum_version == ssl.TLSVersion.TLSv1_2
    assert http_scheme(ca.server_settings()) == "https"


def test_a_reload_cannot_turn_tls_on_or_off_and_a_half_pair_changes_nothing(tmp_path):
    ca = make_ca(tmp_path)
    with pytest.raises(ConfigError, match="turning TLS on or off needs a restart"):
        reload_server_context(None, ca.server_settings(), "server2")
    context = server_context(ca.server_settings(), "server2")
    with pytest.raises(ConfigError, match="turning TLS on or off needs a restart"):
        reload_server_context(context, {"tls_cert_file": "", "tls_key_file": ""}, "server2")
    with pytest.raises(ConfigError, match="server2.tls_cert_file and server2.tls_key_file"):
        reload_server_context(context, {"tls_cert_file": str(ca.cert_file), "tls_key_file": ""}, "server2")
    reload_server_context(None, {"tls_cert_file": "", "tls_key_file": ""}, "server2")     # plain stays plain
    reload_server_context(context, ca.server_settings(), "server2")


def test_the_session_ca_wins_over_the_environment(monkeypatch):
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", "/from/the/environment.pem")
    prepared = requests.Request("GET", "https://example.invalid/").prepare()
    ours = VerifyingSession("/the/deployment/ca.pem")
    assert ours.merge_environment_settings(prepared.url, {}, None, None, None)["verify"] == "/the/deployment/ca.pem"
    plain = VerifyingSession("")       # no CA of its own: the environment's, as any requests client
    assert plain.merge_environment_settings(prepared.url, {}, None, None, None)["verify"] == "/from/the/environment.pem"


def test_token_files_carry_swebhdfs_tokens_too(tmp_path):
    token = Token(b"id", b"pw")
    filed = read_credentials_file(credentials_for(token, ["nn1:9870"], ["hopshive"]))
    labels = {(t.kind, t.service) for t in filed.values()}
    assert {(WEBHDFS_KIND, "nn1:9870"), (SWEBHDFS_KIND, "nn1:9870"), (WEBHDFS_KIND, "ha-webhdfs:hopshive"),
            (SWEBHDFS_KIND, "ha-swebhdfs:hopshive")} <= labels
    (tmp_path / "core-site.xml").write_text(
        "<configuration><property><name>fs.defaultFS</name><value>swebhdfs://hopshive</value></property>"
        "<property><name>dfs.nameservices</name><value>hopshive</value></property>"
        "<property><name>dfs.namenode.https-address.hopshive.nn1</name><value>10.0.0.1:9870</value></property>"
        "</configuration>")
    assert namenodes_of_client_conf(tmp_path) == (["10.0.0.1:9870"], ["hopshive"])
