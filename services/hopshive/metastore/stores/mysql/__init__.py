"""Pieces of the MySQL/MariaDB store, one concern per module; ``stores.mysql_store``
assembles them into ``MySQLStore``."""
