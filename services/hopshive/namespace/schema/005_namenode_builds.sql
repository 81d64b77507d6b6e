-- Which build each live namenode runs (issue 31): the source digest of its installed code
-- (hopshive.core.build), so that a rolling upgrade's progress and a straggler can be read
-- from the database.  NULL for a namenode of an earlier release, which does not write it.
ALTER TABLE {schema}.hdfs_namenodes ADD COLUMN IF NOT EXISTS build VARCHAR(80) NULL;
