"""Errors of the platform library; the HTTP edge maps them to status codes in one table
(hopshive.platform.app.STATUS) and the CLI prints their messages."""

from ..exceptions import HopsHiveError


class PlatformError(HopsHiveError):
    """A request was refused; the message is safe to show the client."""


class InvalidInput(PlatformError):
    pass


class NotFound(PlatformError):
    pass


class AlreadyExists(PlatformError):
    pass


class BadCredentials(PlatformError):
    """Wrong password or unknown e-mail: one message for both (no user enumeration)."""

    def __init__(self) -> None:
        super().__init__("Authentication failed: wrong e-mail or password")


class AccountRefused(PlatformError):
    """The password was right but this account may not log in this way (two-factor,
    blocked, not yet activated)."""


class TooManyFailures(PlatformError):
    def __init__(self, retry_after: int) -> None:
        super().__init__(f"Too many failed logins; try again in {retry_after} s")
        self.retry_after = retry_after


class NotAuthenticated(PlatformError):
    pass


class Forbidden(PlatformError):
    pass


class ProvisioningFailed(PlatformError):
    """The namespace or the metastore refused a step of creating or deleting a project."""


class Unreachable(ProvisioningFailed):
    """One instance of the namespace or the metastore cannot be reached (the next one is
    tried: hopshive.platform.provision.Failover)."""
