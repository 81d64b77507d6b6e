-- Small files (HopsFS's small-file feature): a file whose whole content fits the namenode's
-- small_file_limit lives here, next to its inode, written in the transaction that completes
-- the file.  It has no blocks, and any namenode can serve it.  Keyed by inode *id*, as
-- blocks are, so moves keep the content; removed with the inode.
CREATE TABLE IF NOT EXISTS {schema}.hdfs_small_files (
  inode_id BIGINT NOT NULL PRIMARY KEY,
  data MEDIUMBLOB NOT NULL
) ENGINE={engine};
