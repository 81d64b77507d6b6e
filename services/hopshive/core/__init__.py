"""Shared plumbing of every service: configuration, logging, database access, lifecycle."""
