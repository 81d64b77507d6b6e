"""Who a metastore connection is (ARCHITECTURE.md, decision 8).

``security.mode: token`` (the default): a client proves itself with SASL DIGEST-MD5 and a
delegation token, by Hadoop's SaslRpcServer conventions (what Hive 2.3's and Spark's
metastore client send with ``hive.metastore.sasl.enabled`` and a HIVE_DELEGATION_TOKEN in
the UGI): the SASL user name is the standard base64 of the token identifier, the password
the base64 of the token's password, the realm ``default``.  The caller is the token's
owner.  A connection without SASL is refused at its first call.

``security.mode: simple``: an insecure opt-out, logged loudly at start.  Connections
without SASL are served as before (``set_ugi`` is believed); SASL connections are still
authenticated.

On an authenticated connection ``set_ugi`` may name the caller itself, or -- from the
trusted service accounts of ``metastore.proxy_users`` (server2's engines acting for their
session user) -- any user but a superuser or Hive admin.  Anything else is refused with
Hadoop's proxy-user wording (a Hive metastore would ignore the call and keep the caller;
we refuse it so a client never believes it acts as someone it is not).
"""

from __future__ import annotations

import base64
import binascii
import logging
from dataclasses import dataclass
from typing import Callable

from ..exceptions import AccessDenied, InvalidToken
from ..security.digest_md5 import NAME as DIGEST_MD5
from ..security.digest_md5 import DigestMD5Server
from ..security.sasl import Mechanism, SaslRejected
from ..security import SIMPLE, TOKEN
from ..security.secrets import SecretManager
from ..security.tokens import TokenIdentifier

log = logging.getLogger("hopshive.metastore")

REALM = "default"       # Hadoop's SaslRpcServer.SASL_DEFAULT_REALM
REFUSAL = ("this metastore accepts only SASL (DIGEST-MD5 with a delegation token): set "
           "hive.metastore.sasl.enabled=true and hive.metastore.token.signature to the service of the "
           "HIVE_DELEGATION_TOKEN in your credentials (HADOOP_TOKEN_FILE_LOCATION)")


@dataclass(frozen=True)
class SecuritySettings:
    mode: str
    proxy_users: frozenset[str]

    @classmethod
    def from_config(cls, config: dict) -> "SecuritySettings":
        mode = str(config["security"]["mode"])
        if mode not in (TOKEN, SIMPLE):
            raise ValueError(f"security.mode must be {TOKEN} or {SIMPLE}, not {mode!r}")
        return cls(mode, frozenset(config["metastore"]["proxy_users"]))


class Authenticator:
    """The SASL mechanisms a connection may use, and the proxy-user rules.  ``privileged``
    tells the users no proxy user may act for (superusers, Hive admins)."""

    def __init__(self, settings: SecuritySettings, secrets: SecretManager, privileged: Callable[[str], bool]):
        self.settings = settings
        self.secrets = secrets
        self.privileged = privileged

    @property
    def refusal(self) -> str | None:
        """What a connection without SASL is told; None when it is served (simple mode)."""
        return REFUSAL if self.settings.mode == TOKEN else None

    def announce(self) -> None:
        if self.settings.mode == SIMPLE:
            log.warning("INSECURE: security.mode is simple: any client that reaches this port may claim to be "
                        "any user (set_ugi), superusers included; use security.mode token")

    def mechanisms(self) -> dict[str, Callable[[], Mechanism]]:
        return {DIGEST_MD5: lambda: DigestMD5Server(self._credentials, REALM)}

    def _credentials(self, username: str) -> tuple[TokenIdentifier, str]:
        try:
            raw = base64.b64decode(username, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise SaslRejected("DIGEST-MD5: the user name is not a base64 token identifier") from exc
        try:
            identifier, password = self.secrets.password_for(raw)
        except InvalidToken as exc:
            log.info("refused a delegation token", extra={"reason": str(exc)})
            raise SaslRejected(str(exc)) from exc
        return identifier, base64.b64encode(password).decode("ascii")

    # ------------------------------------------------------------ proxy users
    def may_act_for(self, caller: str, user: str) -> bool:
        return user == caller or (caller in self.settings.proxy_users and not self.privileged(user))

    def check_act_for(self, caller: str, user: str) -> None:
        if not self.may_act_for(caller, user):
            raise AccessDenied(f"User: {caller} is not allowed to impersonate {user}")

    def check_issuer(self, caller: str | None) -> str:
        """Who may get a token: a service account of ``proxy_users`` that authenticated
        itself.  A token never buys another (Hive issues them only to Kerberos-authenticated
        callers), and a simple-mode name is no proof."""
        if caller is None:
            raise AccessDenied("delegation tokens are issued only to authenticated callers (SASL)")
        if caller not in self.settings.proxy_users:
            raise AccessDenied(f"{caller} authenticated with a delegation token, which cannot be used to get "
                               f"another; only the service accounts of metastore.proxy_users may")
        return caller
