-- Delegation tokens (issue 24): every namenode and metastore verifies any token another one
-- issued, so master keys and live tokens are rows here (replicated by Galera), as Hive's
-- DBTokenStore keeps MASTER_KEYS and DELEGATION_TOKENS.  Times are epoch milliseconds.
CREATE TABLE IF NOT EXISTS {schema}.hdfs_master_keys (
  key_id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  secret VARBINARY(64) NOT NULL,
  created BIGINT NOT NULL,
  -- the last moment a token this key signed can still be valid: then the key is purged
  expires BIGINT NOT NULL,
  KEY created_idx (created)
) ENGINE={engine};

-- One row per live token: renewing moves `expires`, cancelling deletes the row.
CREATE TABLE IF NOT EXISTS {schema}.hdfs_delegation_tokens (
  sequence_number BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  owner VARCHAR(255) NOT NULL,
  renewer VARCHAR(255) NOT NULL,
  real_user VARCHAR(255) NOT NULL,
  issue_date BIGINT NOT NULL,
  max_date BIGINT NOT NULL,
  expires BIGINT NOT NULL,
  master_key_id INT NOT NULL,
  KEY expires_idx (expires)
) ENGINE={engine};
