"""Hive indexes (issue 25) on the deployment, in TOKEN mode like every client here.

Through spark-sql: Spark sessions with Hive support on the deployed metastores and namenode,
acting as the harness's Spark user with its token, on the deployed Spark client configuration
with this checkout's SQL extension jar put first (built from services/spark, the jar roles/spark
deploys): the lifecycle, a deferred rebuild, a partition rebuild after new data made that
partition stale, a rebuild refused while another runs and a rebuild killed -9 mid-way (the old
index still answers), the cascades (a base partition, DROP TABLE of the index table refused, the
base table's directory deleted behind the metastore's back), and rows equal with and without
the indexes (property test).  Through server2 (PyHive as a project user, SHOW INDEXES through
beeline): the deployed engines' extension, so that scenario passes only once roles/spark was
deployed from a release with index support; until then it fails saying so."""

from __future__ import annotations

import os
import secrets
import signal
from urllib.parse import unquote, urlsplit

import pytest
from hypothesis import HealthCheck, given, settings as hsettings

from harness.support import metastore as ms
from harness.support import server2
from harness.support.platform import owned_projects
from harness.support.spark import hive_session
from tests.support import index_workload as ix
from tests.support.polling import wait_until
from tests.support.server2 import beeline
from tests.support.spark_extension import EXTENSIONS, build_jar

pytestmark = [pytest.mark.metastore, pytest.mark.spark]
TIMEOUT = 900
POINT = "SELECT k, s, n, ds FROM ix.t WHERE k = 77"       # a row of partition a


@pytest.fixture(scope="module")
def sessions(targets, root, metastores, spark_home, tmp_path_factory):
    """(session, second session) with this checkout's extension; the second one is for the
    killed rebuild and starts meanwhile."""
    work = tmp_path_factory.mktemp("indexes")
    jar = build_jar(work / "spark-extension")
    extra = ("--conf", f"spark.driver.extraClassPath={jar}", "--conf", f"spark.executor.extraClassPath={jar}",
             "--conf", f"spark.sql.extensions={EXTENSIONS}")
    warehouse = targets.uri(f"{root}/hive-warehouse")
    made = [hive_session(targets, targets.metastore_uris, warehouse, work / name, extra) for name in ("main", "victim")]
    yield made
    for session in made:
        session.close()


@pytest.fixture(scope="module")
def prefix(sessions, run_id, targets, metastores, db):
    """ix's tables made by the Spark user in a database of this module's own; its prefix."""
    name, started = f"hh_{run_id}_idx_", ms.now(db)
    ms.drop_databases(metastores[0], targets.user, name)
    ix.ok(sessions[0], ix.SETUP, name, TIMEOUT)
    yield name
    ms.drop_databases(metastores[0], targets.user, name)
    ms.sweep_orphans(targets.db, started)


def _hms(targets, metastores):
    return ms.client(metastores[0], targets.user)


def index_partitions(targets, metastores, db: str, table: str) -> dict:
    with _hms(targets, metastores) as client:
        return {tuple(p.values): p.parameters.get("hopshive.index.version") for p in client.get_partitions(db, table, -1)}


def test_lifecycle_and_partition_rebuild_through_spark_sql(sessions, prefix, targets, metastores):
    spark, db = sessions[0], f"{prefix}ix"
    ix.ok(spark, ["CREATE INDEX c ON TABLE ix.t (k) AS 'org.apache.hadoop.hive.ql.index.compact.CompactIndexHandler'"],
          prefix, TIMEOUT)
    try:
        assert ix.ask(spark, "SHOW INDEXES ON ix.t", prefix) == [["c", "t", "k", f"{db}__t_c__", "compact", "None"]]
        explained = ix.explain(spark, POINT, prefix)
        assert explained.fresh == (2, 2) and explained.read == (1, 12), explained.text
        on, off = ix.on_off(spark, POINT, prefix)
        assert on == off and len(on) == 1
        before = index_partitions(targets, metastores, db, f"{db}__t_c__")
        ix.ok(spark, ["INSERT INTO ix.t PARTITION (ds='b') VALUES (77, 'late', 1)"], prefix)
        explained = ix.explain(spark, POINT, prefix)
        assert explained.fresh == (1, 2) and explained.read == (8, 13), explained.text     # b is stale: read whole
        on, off = ix.on_off(spark, POINT, prefix)
        assert on == off and len(on) == 2
        ix.ok(spark, ["ALTER INDEX c ON ix.t PARTITION (ds='b') REBUILD"], prefix)
        after = index_partitions(targets, metastores, db, f"{db}__t_c__")
        assert after[("a",)] == before[("a",)] and after[("b",)] != before[("b",)]
        assert ix.explain(spark, POINT, prefix).read == (2, 13)
    finally:
        ix.ok(spark, ["DROP INDEX c ON ix.t"], prefix)


def test_deferred_rebuild(sessions, prefix):
    spark = sessions[0]
    ix.ok(spark, ["CREATE INDEX d ON TABLE ix.u (k, s) AS 'DATASKIPPING' WITH DEFERRED REBUILD"], prefix)
    try:
        query = "SELECT * FROM ix.u WHERE k = 77"
        assert ix.explain(spark, query, prefix).fresh == (0, 1)
        ix.ok(spark, ["ALTER INDEX d ON ix.u REBUILD"], prefix)
        explained = ix.explain(spark, query, prefix)
        assert explained.fresh == (1, 1) and explained.read == (1, 4), explained.text
    finally:
        ix.ok(spark, ["DROP INDEX d ON ix.u"], prefix)


def test_rebuild_refused_while_another_runs_and_killed_rebuild_keeps_the_old_index(
        sessions, prefix, targets, metastores, webhdfs):
    spark, victim = sessions
    db = f"{prefix}ix"
    ix.ok(spark, ["CREATE INDEX kc ON TABLE ix.u (k) AS 'COMPACT'"], prefix)
    try:
        with _hms(targets, metastores) as client:
            table = client.get_table(db, f"{db}__u_kc__")
        version, path = table.parameters["hopshive.index.version"], unquote(urlsplit(table.sd.location).path)
        rebuild = ix.localize_ix("ALTER INDEX kc ON ix.u REBUILD", prefix)
        try:
            jvm = ix.freeze_mid_rebuild(victim, rebuild, lambda: ix.staging_names(webhdfs.list(path)), TIMEOUT)
            refused = ix.ask(spark, "ALTER INDEX kc ON ix.u REBUILD", prefix)
            assert "is being rebuilt by another session" in refused["message"], refused
            os.kill(jvm, signal.SIGKILL)
        finally:
            victim.close()
        with _hms(targets, metastores) as client:
            assert client.get_table(db, f"{db}__u_kc__").parameters["hopshive.index.version"] == version
        query = "SELECT k, s FROM ix.u WHERE k = 77"
        assert ix.explain(spark, query, prefix).read == (1, 4)
        on, off = ix.on_off(spark, query, prefix)
        assert on == off and len(on) == 1
    finally:
        ix.ok(spark, ["DROP INDEX kc ON ix.u"], prefix)


def test_cascades(sessions, prefix, targets, metastores, webhdfs):
    """A dropped base partition takes its index partition; DROP TABLE of the index table is
    refused; the base table's directory deleted behind the metastore's back takes the index
    (foreign keys), and the cleaner removes the index table it left."""
    spark, db = sessions[0], f"{prefix}ix"
    ix.ok(spark, ["CREATE TABLE ix.c (k BIGINT, ds STRING) USING parquet PARTITIONED BY (ds)",
                  "INSERT INTO ix.c VALUES (1, 'a'), (2, 'b')",
                  "CREATE INDEX cc ON TABLE ix.c (k) AS 'COMPACT'",
                  "ALTER TABLE ix.c DROP PARTITION (ds='a')"], prefix)
    assert set(index_partitions(targets, metastores, db, f"{db}__c_cc__")) == {("b",)}
    assert isinstance(ix.ask(spark, f"DROP TABLE {db}.{db}__c_cc__"), dict)
    with _hms(targets, metastores) as client:
        path = unquote(urlsplit(client.get_table(db, "c").sd.location).path)
    assert webhdfs.delete(path, recursive=True, skiptrash=True)

    def left() -> list[str]:
        with _hms(targets, metastores) as client:
            return [t for t in client.get_all_tables(db) if t in ("c", f"{db}__c_cc__")]
    wait_until(lambda: not left(), 120, lambda _: f"still in the metastore: {left()}")


@pytest.fixture(scope="module")
def indexed(sessions, prefix):
    ix.ok(sessions[0], ix.PROPERTY_INDEXES, prefix)
    yield sessions[0]
    ix.ok(sessions[0], ix.DROP_PROPERTY_INDEXES, prefix)


@hsettings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(predicate=ix.PREDICATES)
def test_rows_with_and_without_indexes_are_equal(indexed, prefix, predicate):
    on, off = ix.on_off(indexed, f"SELECT k, s, n, ds FROM ix.t WHERE {predicate}", prefix)
    assert on == off, predicate


# ------------------------------------------------------------------ through server2
PASSWORD = f"harness-{secrets.token_hex(8)}"


@pytest.fixture(scope="module")
def project(platform, run_id):
    yield from owned_projects(platform, f"hh-{run_id}-idx", PASSWORD, keys=("a",))


@pytest.mark.server2
@pytest.mark.platform
def test_lifecycle_through_server2(targets, project):
    email, _, name = project["a"]
    with server2.connect(targets, email, PASSWORD, name) as conn:
        server2.query(conn, "CREATE TABLE t (k BIGINT, v STRING) STORED AS PARQUET")
        server2.query(conn, "INSERT INTO t SELECT /*+ REPARTITION(4) */ id * 7 % 400, CAST(id AS STRING) FROM range(400)")
        try:
            server2.query(conn, "CREATE INDEX c ON TABLE t (k) AS 'COMPACT'")
        except Exception as exc:     # noqa: BLE001 -- the deployed engines' parser decides
            if ("PARSE_SYNTAX_ERROR" in str(exc) or "INVALID_STATEMENT_OR_CLAUSE" in str(exc)) and "INDEX" in str(exc):
                pytest.fail("server2's engines run a Spark extension without index support: redeploy roles/spark "
                            "(./scripts/deploy --tags spark) from a release that has it", pytrace=False)
            raise
        host, port = targets.server2
        shown = beeline(host, port, name, email, PASSWORD, "SHOW INDEXES ON t;", server2.jdbc_tail())
        assert shown.returncode == 0 and f"c,t,k,{name}__t_c__,compact" in shown.stdout, shown.stdout + shown.stderr
        answers = {}
        for enabled in ("false", "true"):          # on last: EXPLAIN below runs with indexes on
            server2.query(conn, f"SET {ix.ENABLED}={enabled}")
            answers[enabled] = server2.query(conn, "SELECT k, v FROM t WHERE k = 21")
        assert answers["true"] == answers["false"] and len(answers["true"]) == 1, answers
        plan = server2.query(conn, "EXPLAIN SELECT k, v FROM t WHERE k = 21")[0][0]
        assert ix.Explained(plan).read == (1, 4), plan
        server2.query(conn, "DROP INDEX c ON t")
        assert server2.query(conn, "SHOW INDEXES ON t") == []
