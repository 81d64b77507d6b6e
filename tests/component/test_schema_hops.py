from hopshive.core.migrations import upgrade, validate
from hopshive.core.schematool import COMPONENTS


def test_hops_schema_is_valid_and_upgrade_is_idempotent(db):
    assert validate(db, COMPONENTS["hops"]) == []
    assert upgrade(db, COMPONENTS["hops"]) == []
    with db.transaction() as tx:
        assert tx.query_one("SELECT id, is_dir FROM hops.hdfs_inodes WHERE parent_id=0 AND name=''") == (1, 1)
