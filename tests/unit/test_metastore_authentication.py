"""The metastore's security settings and proxy-user rules (hopshive.metastore.authentication)."""

from __future__ import annotations

import pytest

from hopshive.exceptions import AccessDenied
from hopshive.metastore.app import DEFAULTS
from hopshive.metastore.authentication import Authenticator, SecuritySettings
from hopshive.security.sasl import SaslRejected


def authenticator(mode: str = "token", proxy_users=("svc",)) -> Authenticator:
    settings = SecuritySettings.from_config({"security": {"mode": mode}, "metastore": {"proxy_users": proxy_users}})
    return Authenticator(settings, secrets=None, privileged=lambda user: user in ("hdfs", "hive"))


def test_the_default_mode_is_token_and_other_modes_are_refused():
    assert DEFAULTS["security"]["mode"] == "token" and authenticator().refusal is not None
    assert authenticator("simple").refusal is None
    with pytest.raises(ValueError, match="security.mode must be token or simple, not 'kerberos'"):
        authenticator("kerberos")


@pytest.mark.parametrize("caller, user, allowed", [
    ("alice", "alice", True), ("alice", "bob", False), ("svc", "bob", True), ("svc", "svc", True),
    ("svc", "hdfs", False), ("svc", "hive", False), ("hive", "bob", False),
])
def test_who_may_act_for_whom(caller, user, allowed):
    auth = authenticator()
    assert auth.may_act_for(caller, user) is allowed
    if not allowed:
        with pytest.raises(AccessDenied, match=f"User: {caller} is not allowed to impersonate {user}"):
            auth.check_act_for(caller, user)


def test_only_authenticated_service_accounts_get_tokens():
    auth = authenticator()
    assert auth.check_issuer("svc") == "svc"
    with pytest.raises(AccessDenied, match="only to authenticated callers"):
        auth.check_issuer(None)
    with pytest.raises(AccessDenied, match="cannot be used to get another"):
        auth.check_issuer("alice")


def test_a_user_name_that_is_not_base64_is_refused_before_any_lookup():
    mechanism = authenticator().mechanisms()["DIGEST-MD5"]()
    mechanism.evaluate(b"")
    nonce = mechanism.nonce
    response = (f'username="not base64!",realm="default",nonce="{nonce}",cnonce="c",nc=00000001,'
                f'digest-uri="hive/default",response={"0" * 32},qop=auth')
    with pytest.raises(SaslRejected, match="not a base64 token identifier"):
        mechanism.evaluate(response.encode())
