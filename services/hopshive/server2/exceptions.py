"""server2's errors; hopshive.server2.handler turns them into TStatus in one place."""

from ..exceptions import HopsHiveError


class Server2Error(HopsHiveError):
    """Refused; the message is safe to show the client.  ``sqlstate`` as Spark/Hive give it."""

    sqlstate = "HY000"

    def __init__(self, message: str, sqlstate: str | None = None):
        super().__init__(message)
        if sqlstate:
            self.sqlstate = sqlstate


class AuthenticationFailed(Server2Error):
    sqlstate = "28000"


class NoSuchHandle(Server2Error):
    sqlstate = "HY010"


class EngineUnavailable(Server2Error):
    """The user's Spark engine could not be started, or too many are running."""
    sqlstate = "08004"


class StatementFailed(Server2Error):
    """Spark refused or failed the statement (its SQLSTATE and message)."""


class Cancelled(Server2Error):
    sqlstate = "HY008"
