"""The one error of the backup tool: its message is what the operator reads."""


class BackupError(Exception):
    """A backup or restore step cannot go on; the message says what is wrong and what to do."""
