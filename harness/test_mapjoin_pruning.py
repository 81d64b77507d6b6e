"""Map-join partition pruning (issue 11) on the deployment: the deployed Spark configuration
(roles/spark, whose SQL extension carries the rule) and server2's engines, each turning it on
with SET spark.hopshive.mapJoinPruning.enabled=true.  A star schema whose fact has
``SALES_PARTITIONS`` partitions (ds x region, made with one ALTER TABLE ADD PARTITION) and
dimensions filtered by non-key columns: the rows the data holds, and the partitions the
metastore instances returned (their /metrics, summed) are exactly the matching ones.  Then the
cases of tests/support/mapjoin_workload.py the issue names, each with the same rows with the
option off and on -- cascades intersect; outer/anti joins, a function on the key, a non-partition
key and a small side over the broadcast threshold are left alone; over maxValues a range is
sent -- and the faults: an empty dimension fetches nothing, a failing one fails the query with
Spark's error."""

from __future__ import annotations

import secrets

import pytest

from harness.support import metastore as ms
from harness.support import metrics, server2
from tests.support import mapjoin_workload as mj

pytestmark = [pytest.mark.metastore, pytest.mark.spark]
TIMEOUT = 900
SALES_DAYS, SALES_REGIONS = 200, 10
SALES_PARTITIONS = SALES_DAYS * SALES_REGIONS
PROMO_DAYS, NORTH = (3, 7, 11), ("r1", "r4")      # the dimensions' filters keep these keys


def _day(i: int) -> str:
    return f"d{i:03d}"


# The fact has a row in each partition of the odd days among its first 12 (the promotions fall
# there) and empty partitions elsewhere: ALTER TABLE ADD PARTITION makes all of them in one
# statement, and few data files keep the set-up short.
SALES_SETUP = [
    "CREATE TABLE mj.sales (amount INT, ds STRING, region STRING) USING parquet PARTITIONED BY (ds, region)",
    "ALTER TABLE mj.sales ADD " + " ".join(f"PARTITION (ds='{_day(d)}', region='r{r}')"
                                           for d in range(SALES_DAYS) for r in range(SALES_REGIONS)),
    "INSERT INTO mj.sales VALUES " + ", ".join(f"({d * 10 + r}, '{_day(d)}', 'r{r}')"
                                               for d in range(1, 12, 2) for r in range(SALES_REGIONS)),
    "CREATE TABLE mj.dates (ds STRING, weekday INT, promo BOOLEAN) USING parquet",
    "INSERT INTO mj.dates VALUES " + ", ".join(f"('{_day(d)}', {d % 7}, {str(d in PROMO_DAYS).lower()})"
                                               for d in range(SALES_DAYS)),
    "CREATE TABLE mj.regions (region STRING, zone STRING) USING parquet",
    "INSERT INTO mj.regions VALUES " + ", ".join(f"('r{r}', '{'north' if f'r{r}' in NORTH else 'south'}')"
                                                 for r in range(SALES_REGIONS)),
]
# (case, its rows): known from the data, so the 2,000 partitions are not listed by a run with
# the option off (that listing is what the rule saves, and minutes of this scenario).
SALES = [
    (mj.Case("star-promo-days", "SELECT s.amount, s.ds, s.region FROM mj.sales s JOIN mj.dates d ON s.ds = d.ds"
             " WHERE d.promo", len(PROMO_DAYS) * SALES_REGIONS, "mj.sales", partitions=SALES_PARTITIONS),
     sorted([str(d * 10 + r), _day(d), f"r{r}"] for d in PROMO_DAYS for r in range(SALES_REGIONS))),
    (mj.Case("star-cascade", "SELECT s.amount FROM mj.sales s JOIN mj.dates d ON s.ds = d.ds"
             " JOIN mj.regions r ON s.region = r.region WHERE d.promo AND r.zone = 'north'",
             len(PROMO_DAYS) * len(NORTH), "mj.sales", partitions=SALES_PARTITIONS),
     sorted([str(d * 10 + int(r[1:]))] for d in PROMO_DAYS for r in NORTH)),
]
NAMED = {"cascade-two-columns", "cascade-same-column", "left-semi", "range-over-max-values", "empty-key-set"}
CASES = [case for case in mj.PRUNED if case.name in NAMED]
ALONE = [case for case in mj.LEFT_ALONE if case.name in
         {"left-outer-big-preserved", "left-anti", "function-on-key", "non-partition-key", "over-broadcast-threshold"}]


@pytest.fixture(scope="module")
def star(hive_spark, counted_metastores, targets, run_id, db) -> str:
    """The workload's tables and the sales star, made by the deployed Spark session in databases
    of this module's own; returns their prefix.  Fails when the deployed extension predates the
    rule (EXPLAIN shows no pruning)."""
    prefix = f"hh_{run_id}_mapjoin_"
    started = ms.now(db)
    ms.drop_databases(counted_metastores[0], targets.user, prefix)
    statements = [mj.localize(statement, prefix) for statement in mj.STAR_SETUP + SALES_SETUP]
    created = hive_spark.run({"setup": statements}, timeout=TIMEOUT)["setup"]
    assert all(not isinstance(answer, dict) for answer in created.values()), created
    if "mapjoin_pruning(" not in mj.explain(hive_spark, mj.STAR, True, prefix, TIMEOUT):
        pytest.fail("the deployed Spark extension has no map-join pruning: redeploy roles/spark "
                    "(./scripts/deploy --tags spark)", pytrace=False)
    yield prefix
    ms.drop_databases(counted_metastores[0], targets.user, prefix)
    ms.sweep_orphans(targets.db, started)


def _endpoints(instances: list[tuple]) -> list[tuple]:
    return [metrics.endpoint(instance) for instance in instances]


@pytest.mark.parametrize("case, rows", SALES, ids=lambda value: getattr(value, "name", ""))
def test_star_query_fetches_only_the_matching_partitions(hive_spark, star, counted_metastores, case, rows):
    run = mj.run(hive_spark, _endpoints(counted_metastores), case, star, TIMEOUT, off=False)
    assert (run.on, run.fetched_on) == (rows, {"get_partitions_by_filter": case.fetched})


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_pruned_query_fetches_only_the_matching_partitions(hive_spark, star, counted_metastores, case):
    mj.check_pruned(mj.run(hive_spark, _endpoints(counted_metastores), case, star, TIMEOUT), case)


@pytest.mark.parametrize("case", ALONE, ids=lambda case: case.name)
def test_query_the_rule_cannot_prune_is_left_alone(hive_spark, star, counted_metastores, case):
    mj.check_left_alone(mj.run(hive_spark, _endpoints(counted_metastores), case, star, TIMEOUT), case)


def test_failing_dimension_fails_the_query_with_sparks_error(hive_spark, star, counted_metastores):
    run = mj.run(hive_spark, _endpoints(counted_metastores), mj.Case("failing", mj.FAILING, None), star, TIMEOUT)
    assert isinstance(run.on, dict) and run.on["error"] == run.off["error"], (run.on, run.off)
    assert "CAST_INVALID_INPUT" in run.on["message"], run.on


# ------------------------------------------------------------------ through server2
PASSWORD = f"harness-{secrets.token_hex(8)}"


@pytest.fixture(scope="module")
def project(platform, run_id) -> tuple[str, str]:
    """(e-mail, project) of a user who owns a project of this module's own."""
    email, name = f"hh-{run_id}-mapjoin@harness.example.org", f"hh_{run_id}_mapjoin"
    platform.add_user(email, PASSWORD)
    platform.create_project(name, email)
    yield email, name
    platform.delete_project(name)
    platform.block(email)


@pytest.mark.server2
@pytest.mark.platform
def test_a_query_through_server2_is_pruned(targets, project, counted_metastores):
    email, name = project
    with server2.connect(targets, email, PASSWORD, name) as conn:
        answers = mj.through_server2(conn, lambda table: metrics.fetched(counted_metastores, table), f"{name}.f")
    assert answers == mj.SERVER2_EXPECTED
