"""The Thrift API structs used as the metastore's object model (Hive 3.1 IDL, from the
``pymetastore`` package; a superset on the wire of what Hive 2.3 clients send and read)."""

from pymetastore.hive_metastore import ttypes as api  # noqa: F401  (re-exported)

CATALOG = "hive"   # Hive 3's default catalog; Hive 2 clients never see the field

__all__ = ["api", "CATALOG"]
