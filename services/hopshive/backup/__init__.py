"""Backups of a HopsHive deployment: the database (mariabackup) and the block files the
database names, with a manifest of checksums (README.md).

Standard library only, on purpose: playbooks/backup.yml and restore.yml copy this package
to database and backup hosts that have no HopsHive virtualenv and run it with the
system's python3 (``python3 -m hopshive_backup``); where the virtualenv is installed it is
also ``hopshive-backup``.  Modules import each other relatively for that reason."""
