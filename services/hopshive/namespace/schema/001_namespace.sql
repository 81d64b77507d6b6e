-- The HopsFS namespace (thesis Listing 3.1), on InnoDB: unpartitioned, because MariaDB
-- cannot point a foreign key at a partitioned table and metastore.SDS references this one.
-- Names are utf8mb4 with a binary NO PAD collation: HDFS names are case-sensitive byte
-- strings, and "a" and "a " are two names (utf8mb4_bin pads trailing spaces).
--
-- partition_id rule: children of the root are spread by a hash of their name; every
-- other inode has partition_id = parent_id, so a directory's children share a shard
-- (see hopshive.namespace.inodes.partition_id).
CREATE TABLE IF NOT EXISTS {schema}.hdfs_inodes (
  partition_id BIGINT NOT NULL,
  parent_id BIGINT NOT NULL DEFAULT 0,
  name VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL DEFAULT '',
  id BIGINT NOT NULL,
  user_id INT DEFAULT NULL,
  group_id INT DEFAULT NULL,
  modification_time BIGINT DEFAULT NULL,
  access_time BIGINT DEFAULT NULL,
  permission SMALLINT DEFAULT NULL,
  client_name VARCHAR(100) DEFAULT NULL,
  client_machine VARCHAR(100) DEFAULT NULL,
  client_node VARCHAR(100) DEFAULT NULL,
  generation_stamp INT DEFAULT NULL,
  header BIGINT DEFAULT NULL,
  symlink VARCHAR(255) DEFAULT NULL,
  subtree_lock_owner BIGINT DEFAULT NULL,
  size BIGINT NOT NULL DEFAULT 0,
  quota_enabled TINYINT NOT NULL DEFAULT 0,
  meta_enabled TINYINT DEFAULT 0,
  is_dir TINYINT NOT NULL,
  under_construction TINYINT NOT NULL DEFAULT 0,
  subtree_locked TINYINT DEFAULT NULL,
  PRIMARY KEY (partition_id, parent_id, name),
  -- Not UNIQUE, as in HopsFS: the namenode guarantees uniqueness, and a metastore rename
  -- briefly holds the old and the new row of one inode in one transaction.
  KEY inode_idx (id),
  KEY children_idx (parent_id, name),
  KEY subtree_locked_idx (subtree_locked),
  KEY under_construction_idx (under_construction)
) ENGINE={engine} DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

CREATE TABLE IF NOT EXISTS {schema}.hdfs_users (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(100) NOT NULL,
  UNIQUE KEY name_idx (name)
) ENGINE={engine} DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

CREATE TABLE IF NOT EXISTS {schema}.hdfs_groups (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(100) NOT NULL,
  UNIQUE KEY name_idx (name)
) ENGINE={engine} DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

CREATE TABLE IF NOT EXISTS {schema}.hdfs_users_groups (
  user_id INT NOT NULL,
  group_id INT NOT NULL,
  PRIMARY KEY (user_id, group_id),
  KEY group_idx (group_id),
  CONSTRAINT users_groups_user_fk FOREIGN KEY (user_id) REFERENCES {schema}.hdfs_users (id) ON DELETE CASCADE,
  CONSTRAINT users_groups_group_fk FOREIGN KEY (group_id) REFERENCES {schema}.hdfs_groups (id) ON DELETE CASCADE
) ENGINE={engine};

-- Blocks belong to an inode *id* (not to its primary key), so a move, which replaces the
-- inode row, keeps the file's data.  `location` is the namenode (host:port) whose disk holds it.
CREATE TABLE IF NOT EXISTS {schema}.hdfs_block_infos (
  inode_id BIGINT NOT NULL,
  block_index INT NOT NULL,
  block_id BIGINT NOT NULL,
  num_bytes BIGINT NOT NULL,
  generation_stamp BIGINT NOT NULL DEFAULT 0,
  location VARCHAR(255) NOT NULL,
  PRIMARY KEY (inode_id, block_index),
  UNIQUE KEY block_idx (block_id)
) ENGINE={engine};

-- Blocks of deleted files, removed from disk after the deleting transaction commits.
CREATE TABLE IF NOT EXISTS {schema}.hdfs_invalidated_blocks (
  block_id BIGINT NOT NULL PRIMARY KEY,
  location VARCHAR(255) NOT NULL,
  KEY location_idx (location)
) ENGINE={engine};

-- Id generators: namenodes reserve ranges of inode and block ids (HopsFS does the same).
CREATE TABLE IF NOT EXISTS {schema}.hdfs_variables (
  name VARCHAR(64) NOT NULL PRIMARY KEY,
  value BIGINT NOT NULL
) ENGINE={engine};

-- Live namenodes.  Subtree locks and files under construction name their owner here;
-- those of a namenode whose heartbeat has expired are recovered by the survivors.
CREATE TABLE IF NOT EXISTS {schema}.hdfs_namenodes (
  id BIGINT NOT NULL PRIMARY KEY,
  address VARCHAR(255) NOT NULL,
  started_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  heartbeat TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  KEY address_idx (address)
) ENGINE={engine};

-- Files being written (created or appended).  A lease names the namenode serving the
-- writer; if that namenode dies, recovery removes a half-created file or rolls an
-- append back, so no half-written data ever becomes visible.
CREATE TABLE IF NOT EXISTS {schema}.hdfs_leases (
  inode_id BIGINT NOT NULL PRIMARY KEY,
  holder VARCHAR(255) NOT NULL,
  namenode_id BIGINT NOT NULL,
  kind ENUM('create', 'append') NOT NULL,
  started_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  KEY namenode_idx (namenode_id)
) ENGINE={engine};

INSERT IGNORE INTO {schema}.hdfs_variables (name, value) VALUES ('inode_id', 1), ('block_id', 1000), ('namenode_id', 0);

-- The root: id 1, owned by the superuser named at format time (user id filled by the namenode).
INSERT IGNORE INTO {schema}.hdfs_inodes
  (partition_id, parent_id, name, id, modification_time, access_time, permission, size, is_dir, under_construction)
  VALUES (0, 0, '', 1, UNIX_TIMESTAMP() * 1000, UNIX_TIMESTAMP() * 1000, 493, 0, 1, 0);
