"""Hive's delegation-token calls, backed by the shared secret manager: token strings are
``Token.url_string()`` (Hive's encodeToUrlString) of a HIVE_DELEGATION_TOKEN with an empty
service (the client labels it with its token signature)."""

from __future__ import annotations

from ...exceptions import AccessDenied, InvalidToken
from ...security.tokens import HIVE_KIND, MalformedToken, Token
from ..authentication import Authenticator
from .base import Session


def _token(text: str) -> Token:
    try:
        return Token.from_url_string(text or "")
    except MalformedToken as exc:
        raise InvalidToken(str(exc)) from exc


class TokenCalls:
    authenticator: Authenticator

    def get_delegation_token(self, session: Session, token_owner: str, renewer_kerberos_principal_name: str) -> str:
        """A token for ``token_owner``: asked by a proxy-user service account (for itself or
        for a user it may act for)."""
        caller = self.authenticator.check_issuer(session.authenticated)
        if not token_owner:
            raise InvalidToken("a token needs an owner")
        self.authenticator.check_act_for(caller, token_owner)
        real_user = caller if token_owner != caller else ""
        token = self.authenticator.secrets.issue(token_owner, renewer_kerberos_principal_name or "", real_user)
        return token.labelled(HIVE_KIND).url_string()

    def renew_delegation_token(self, session: Session, token_str_form: str) -> int:
        """The token's new expiry (ms); only its renewer may."""
        return self.authenticator.secrets.renew(_token(token_str_form), self._proven(session))

    def cancel_delegation_token(self, session: Session, token_str_form: str) -> None:
        """Its owner or renewer may."""
        self.authenticator.secrets.cancel(_token(token_str_form), self._proven(session))

    @staticmethod
    def _proven(session: Session) -> str:
        if session.authenticated is None:
            raise AccessDenied("delegation tokens are renewed and cancelled only by authenticated callers (SASL)")
        return session.authenticated
