"""Delegation tokens: Hadoop's wire format, master keys and tokens kept in MariaDB.

Every service has one ``security.mode``: ``token`` (the default: a caller proves itself with a
delegation token) or ``simple`` (the name a caller sends is believed: Hadoop's unsecured
mode, an explicit opt-out each service logs as INSECURE at start)."""

TOKEN, SIMPLE = "token", "simple"
MODES = (TOKEN, SIMPLE)
