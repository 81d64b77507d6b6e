-- The cleaner service (hopshive.cleaner): leader lease and binlog position.
--
-- CLEANER_LEASE (migration 001): one row per cleaner group.  Leader election is a replicated lease row, not
-- GET_LOCK (node-local on Galera): an instance is leader iff its conditional UPDATE
--   SET OWNER=me, EXPIRES=NOW(3)+lease WHERE NAME=? AND (OWNER=me OR EXPIRES<NOW(3))
-- affected the row.  EPOCH grows with every change of owner (a fencing token: every cleanup
-- transaction re-reads the row and acts only while it still names this owner and epoch);
-- this migration adds EPOCH and ACQUIRED_AT.
ALTER TABLE {schema}.CLEANER_LEASE
  ADD COLUMN IF NOT EXISTS EPOCH BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS ACQUIRED_AT TIMESTAMP(3) NULL DEFAULT NULL;

-- CLEANER_POSITION: the MariaDB GTID position (`domain-server-seq`, comma-separated, one per
-- domain) up to which the binlog has been handled; a new leader resumes there.  Written
-- only by the leader, fenced by CLEANER_LEASE.
CREATE TABLE IF NOT EXISTS {schema}.CLEANER_POSITION (
  NAME VARCHAR(64) CHARACTER SET latin1 COLLATE latin1_bin NOT NULL PRIMARY KEY,
  GTID VARCHAR(2048) CHARACTER SET latin1 COLLATE latin1_bin NOT NULL,
  EPOCH BIGINT NOT NULL,
  UPDATED_AT TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  LAST_SWEEP_AT TIMESTAMP(3) NULL DEFAULT NULL
) ENGINE={engine} DEFAULT CHARSET=latin1 COLLATE=latin1_bin;
