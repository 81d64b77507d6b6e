"""Adapters that let clients nobody here wrote prove their user with a delegation token."""
