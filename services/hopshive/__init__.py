"""HopsHive on Python: a consistent, Hive-compatible data platform."""

__version__ = "0.1.0"
