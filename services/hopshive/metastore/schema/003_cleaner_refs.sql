-- The cleaner's record of what each storage descriptor uses (hopshive.cleaner.refs).
--
-- When a directory inode is deleted or moved, ON DELETE CASCADE removes the SDs over it, and
-- MariaDB writes no binlog row for them (facts.md): the column descriptors, serdes,
-- skewed-value lists and index SDs/tables they used are orphaned without a trace.  The
-- cleaner keeps, from the SDS / SKEWED_VALUES / SKEWED_COL_VALUE_LOC_MAP / IDXS rows it reads
-- in the binlog (and a copy of SDS when it starts without a trusted position), one row per
-- (SD, what it uses), with the SD's inode key.  The inode key the binlog does show for the
-- deleted directory then finds the vanished SDs and their parts by index, so an event costs
-- what it touched, not the size of the catalog.  No foreign keys: a row must outlive its SD.
-- Rows of vanished SDs are deleted once handled (by the event path, or by a sweep that saw
-- them vanished in an earlier sweep: GONE_SEEN_AT).
--
-- KIND: 'cd', 'serde', 'list' (skewed values), 'index_sd' and 'index_table' (the SD and the
-- index table of an index on the table owning SD_ID: they go with it unseen).
CREATE TABLE IF NOT EXISTS {schema}.CLEANER_SD_REFS (
  SD_ID BIGINT NOT NULL,
  KIND VARCHAR(16) CHARACTER SET latin1 COLLATE latin1_bin NOT NULL,
  REF_ID BIGINT NOT NULL,
  PARTITION_ID BIGINT NULL,
  PARENT_ID BIGINT NULL,
  NAME VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NULL,
  GONE_SEEN_AT TIMESTAMP(3) NULL DEFAULT NULL,
  PRIMARY KEY (SD_ID, KIND, REF_ID),
  KEY CLEANER_SD_REFS_INODE (PARTITION_ID, PARENT_ID, NAME)
) ENGINE={engine} DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

-- When the record was last rebuilt from SDS (NULL: never; the next leader rebuilds it before
-- it tails the binlog).
ALTER TABLE {schema}.CLEANER_POSITION
  ADD COLUMN IF NOT EXISTS REFS_SEEDED_AT TIMESTAMP(3) NULL DEFAULT NULL;
