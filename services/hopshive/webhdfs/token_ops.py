"""WebHDFS's delegation-token operations: GETDELEGATIONTOKEN, RENEWDELEGATIONTOKEN and
CANCELDELEGATIONTOKEN, as Hadoop's namenode answers them.

Tokens are issued by the platform to logged-in project members and by ``hopshive-dfs
token`` to operators on a service host, never over WebHDFS to a caller whose only proof is a
token (as HDFS issues them only to Kerberos-authenticated callers).  In simple mode, which
has no proof at all, GETDELEGATIONTOKEN answers ``{"Token": null}`` as an unsecured Hadoop
namenode does.  Renewing and cancelling need a caller proven by a token of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..exceptions import AccessDenied, InvalidArgument, InvalidToken
from ..security.tokens import MalformedToken, Token
from .errors import Reply, json_response
from .identity import Identity

if TYPE_CHECKING:
    from .app import Request


class DelegationTokens:
    def __init__(self, identity: Identity, advertised: str):
        self.identity, self.advertised = identity, advertised

    async def get(self, req: "Request") -> Reply:
        if not req.proven:
            return json_response({"Token": None})
        raise AccessDenied("Delegation tokens are issued by the platform API (POST /hopsworks-api/api/project/"
                           "<name>/token) or by `hopshive-dfs token` on a service host, not to a caller "
                           "authenticated by a token")

    async def renew(self, req: "Request") -> Reply:
        token = self._token(req)
        expires = await req.run(self.identity.secrets.renew, token, req.caller.name)
        return json_response({"long": expires})

    async def cancel(self, req: "Request") -> Reply:
        token = self._token(req)
        await req.run(self.identity.secrets.cancel, token, req.caller.name)
        return Reply(200)

    @staticmethod
    def _token(req: "Request") -> Token:
        if not req.proven:
            raise AccessDenied("Renewing or cancelling a delegation token needs a caller authenticated by a "
                               "delegation token (delegation=)")
        text = req.params.text("token")
        if text is None:
            raise InvalidArgument("Required parameter \"token\" is missing")
        try:
            return Token.from_url_string(text)
        except MalformedToken as exc:
            raise InvalidToken(str(exc)) from exc
