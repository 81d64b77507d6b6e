"""Metastore store backends (see ``hopshive.metastore.registry``)."""
