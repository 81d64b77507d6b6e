"""Who calls: the one place a WebHDFS request's caller is established.

``token`` mode (the secure one) believes only a delegation token (``delegation=``, what
Hadoop's WebHdfsFileSystem, HdfsCLI's TokenClient and fsspec send): a request with none, or
with only a ``user.name``, is refused with 401, a bad token with 403.  ``simple`` mode is
Hadoop's unsecured default, kept as an explicit opt-out: ``user.name`` is believed; a token,
when sent, is still checked.  Either way a caller may act for another (``doas``) only under
the proxy-user rules, which never let "*" cover a superuser.
"""

from __future__ import annotations

import logging
from typing import Mapping

from ..exceptions import AccessDenied, AuthenticationError
from ..namespace.namespace import Namespace
from ..namespace.users import Caller
from ..security import MODES, TOKEN
from ..security.secrets import SecretManager
from .params import Params

log = logging.getLogger(__name__)


class Identity:
    def __init__(self, namespace: Namespace, secrets: SecretManager, mode: str,
                 proxy_users: Mapping[str, dict] | None):
        if mode not in MODES:
            raise ValueError(f"security.mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.ns, self.secrets, self.mode = namespace, secrets, mode
        self.proxy_users = proxy_users or {}

    def authenticate(self, params: Params) -> tuple[str, bool]:
        """(user, proven): the token's owner, or in simple mode the asserted name."""
        token = params.text("delegation")
        if token is not None:
            return self.secrets.verify_url_string(token).owner, True
        if self.mode == TOKEN:
            raise AuthenticationError("Authentication required: send a delegation token (delegation=); "
                                      "user.name alone is not believed")
        return params.name("user.name") or "dr.who", False

    def caller(self, params: Params, peer: str | None) -> tuple[Caller, bool]:
        """The caller a request runs as, and whether it proved its identity with a token."""
        user, proven = self.authenticate(params)
        doas = params.name("doas")
        if doas and doas != user:
            self._check_proxy(user, doas, peer)
            user = doas
        return self.ns.caller(user), proven

    def _check_proxy(self, user: str, doas: str, peer: str | None) -> None:
        rule = self.proxy_users.get(user)
        allowed = bool(rule) and _matches(rule.get("users", ""), doas) and _matches(rule.get("hosts", "*"), peer or "")
        if allowed and self.ns.caller(doas).superuser and not self.ns.caller(user).superuser:
            # "*" never covers a superuser: a proxy must be one, or name them one by one.
            allowed = doas in _names(rule.get("users", ""))
        if allowed and rule.get("groups", "*") != "*":
            groups = self.ns.users.groups_of(doas)
            allowed = bool(groups & set(str(rule["groups"]).split(",")))
        if not allowed:
            raise AccessDenied(f"User: {user} is not allowed to impersonate {doas}")


def _names(rule: str | list) -> list[str]:
    return rule if isinstance(rule, list) else str(rule).split(",")


def _matches(rule: str | list, value: str) -> bool:
    values = _names(rule)
    return "*" in values or value in values
