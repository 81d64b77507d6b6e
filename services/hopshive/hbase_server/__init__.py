"""hopshive-hbase: a server speaking HBase's Thrift1 API (the ``Hbase.thrift`` IDL happybase
ships) over an embedded LMDB store.  It is a compatible server for sites and tests without
HBase, **not HBase**: one process, one region per table, no replication or splitting.

Modules: ``storage`` (tables, rows, cells, versions on LMDB), ``filters`` (HBase's filter
language, parsed with lark, evaluated per row), ``handler`` (the Thrift1 calls on top of
them), ``wire`` (loading the IDL, the socket loop, mapping errors to the IDL's exceptions),
``server`` (entry point: configuration, logs, signals), ``probe`` (health check)."""
