"""Delegation tokens: Hadoop's wire format, master keys and tokens kept in MariaDB."""
