-- Replicated blocks (issue 13).  A block's bytes may live on several holders (namenode
-- processes with a block directory, named by their advertised host:port); each replica is a
-- row here.  hdfs_block_infos.location stays the holder that first wrote the block.
--
-- contract: hdfs_invalidated_blocks' primary key widens to (block_id, location).  This
-- predates rolling upgrades (issue #31): code from before it deletes invalidations by
-- block_id alone, which would forget other holders' replicas (their files stay on disk),
-- so upgrading past 003 means stopping every namenode first.
CREATE TABLE IF NOT EXISTS {schema}.hdfs_replicas (
  block_id BIGINT NOT NULL,
  location VARCHAR(255) NOT NULL,
  -- 1 once a read found the replica's bytes differ from their checksums: not read again,
  -- replaced by the replication monitor.
  corrupt TINYINT NOT NULL DEFAULT 0,
  PRIMARY KEY (block_id, location),
  KEY location_idx (location)
) ENGINE={engine};

INSERT IGNORE INTO {schema}.hdfs_replicas (block_id, location)
  SELECT block_id, location FROM {schema}.hdfs_block_infos;

-- Block holders: every namenode process renews its address's last_seen with its heartbeat.
-- A holder silent for holder_timeout seconds is dead: its replicas are forgotten and its
-- blocks copied elsewhere.
CREATE TABLE IF NOT EXISTS {schema}.hdfs_block_holders (
  address VARCHAR(255) NOT NULL PRIMARY KEY,
  last_seen TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
) ENGINE={engine};

-- Leases of cluster-wide singleton duties (the replication monitor): a replicated row, so
-- it works on Galera, where GET_LOCK is node-local.
CREATE TABLE IF NOT EXISTS {schema}.hdfs_duty_leases (
  name VARCHAR(64) NOT NULL PRIMARY KEY,
  owner VARCHAR(255) NOT NULL,
  expires TIMESTAMP(3) NOT NULL
) ENGINE={engine};

-- Invalidated replicas: one row per (block, holder) now that a block has several.
ALTER TABLE {schema}.hdfs_invalidated_blocks DROP PRIMARY KEY, ADD PRIMARY KEY (block_id, location);
