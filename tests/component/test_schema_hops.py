from hopshive.core.migrations import upgrade, validate
from hopshive.core.schematool import COMPONENTS


def test_hops_schema_is_valid_and_upgrade_is_idempotent(db):
    assert validate(db, COMPONENTS["hops"]) == []
    assert upgrade(db, COMPONENTS["hops"]) == []
    with db.transaction() as tx:
        assert tx.query_one("SELECT id, is_dir FROM hops.hdfs_inodes WHERE parent_id=0 AND name=''") == (1, 1)


def test_a_release_runs_on_a_newer_schema_until_a_migration_contracts_it(db):
    """The window of a rolling upgrade: the next release has migrated the schema and this
    release's code still runs on it, unless a newer migration was a declared contraction."""
    hops = COMPONENTS["hops"]
    newer = hops.latest + 1
    with db.transaction() as tx:
        assert tx.query("SELECT version FROM hops.SCHEMA_MIGRATIONS WHERE kind = 'contract'") == [(3,)]
        tx.execute("INSERT INTO hops.SCHEMA_MIGRATIONS (version, name) VALUES (%s, 'next_expands')", (newer,))
    assert validate(db, hops) == []
    with db.transaction() as tx:
        tx.execute("INSERT INTO hops.SCHEMA_MIGRATIONS (version, name, kind) VALUES (%s, 'then_contracts', "
                   "'contract')", (newer + 1,))
    assert validate(db, hops) == [
        f"schema hops was contracted by migration {newer + 1} (then_contracts), newer than this release's "
        f"{hops.latest}: upgrade this host's HopsHive"]
