-- Directory moves of the HBase store in flight (hopshive.metastore.stores.hbase.moves).
--
-- A rename by the HBase-store metastore writes the HBase rows that name the new directory
-- while the directory move's transaction is still open, and commits the move after them.
-- In between, those rows name a directory that does not exist yet, which is exactly what the
-- cleaner drops as "metadata whose directory is gone".  Before the first such row is written
-- the metastore records the new location here, committed on its own (visible on every
-- Galera node, with wsrep_sync_wait, before the rows can be seen in HBase); the move's own
-- transaction deletes the record, so it goes exactly when the move becomes visible.  The
-- cleaner leaves metadata at or below a recorded location alone.  A record older than the
-- cleaner's limit is a crashed metastore's: the cleaner deletes it and treats what it named
-- as any other metadata.
CREATE TABLE IF NOT EXISTS {schema}.HBASE_MOVES (
  ID BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  LOCATION VARCHAR(4000) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  STARTED_AT TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
) ENGINE={engine} DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
