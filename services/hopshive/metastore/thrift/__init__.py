"""The Thrift edge of the metastore: method table, error mapping, processor, socket server."""
