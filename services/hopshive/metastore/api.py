"""The Thrift API structs used as the metastore's object model (Hive 3.1 IDL, from the
``pymetastore`` package; a superset on the wire of what Hive 2.3 clients send and read)."""

from pymetastore.hive_metastore import ttypes as api

CATALOG = "hive"   # Hive 3's default catalog; Hive 2 clients never see the field


def _hashable_skew_locations() -> None:
    """SkewedInfo.skewedColValueLocationMaps is a map keyed by lists of values; the generated
    spec decodes those keys as lists, which a dict cannot hold, so any message carrying a
    skewed location failed to decode.  Decode them as tuples (what the store builds)."""
    spec = list(api.SkewedInfo.thrift_spec)
    field_id, ttype, name, (key_type, key_spec, value_type, value_spec, frozen), default = spec[3]
    assert name == "skewedColValueLocationMaps", "unexpected SkewedInfo layout"
    spec[3] = (field_id, ttype, name, (key_type, (*key_spec[:2], True), value_type, value_spec, frozen), default)
    api.SkewedInfo.thrift_spec = tuple(spec)
    # The accelerated decoder follows the spec its container holds: [SkewedInfo, spec].
    for field in api.StorageDescriptor.thrift_spec:
        if field is not None and isinstance(field[3], list) and field[3][0] is api.SkewedInfo:
            field[3][1] = api.SkewedInfo.thrift_spec


_hashable_skew_locations()

__all__ = ["api", "CATALOG"]
