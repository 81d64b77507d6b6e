"""Map-join partition pruning (issue 11, services/spark MapJoinPruning) as a Spark workload:
a small star schema, the queries that must be pruned and those that must be left alone, and
one function that runs a query with the option off and on and counts, on the metastore's
/metrics, the partitions each run fetched.  Shared by the component tests
(tests/component/test_mapjoin_pruning.py) and the e2e harness (harness/test_mapjoin_pruning.py);
database mj may be prefixed (tests.support.spark_workload.localize).

The fact tables have one row per partition, so a query's matching partitions are the
partitions of the fact rows it returns."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tests.support import metastore_metrics as prom
from tests.support.spark_workload import SparkProcess

ENABLED = "spark.hopshive.mapJoinPruning.enabled"
MAX_VALUES = "spark.hopshive.mapJoinPruning.maxValues"
DATABASE = "mj"
DAYS = [f"2024-01-0{d}" for d in range(1, 7)]
REGIONS = ["eu", "us", "ap"]
_DB = re.compile(r"\bmj\b")


def localize(statement: str, prefix: str) -> str:
    """The statement with database mj renamed to <prefix>mj."""
    return _DB.sub(f"{prefix}{DATABASE}", statement) if prefix else statement


def _fact_rows() -> str:
    return ", ".join(f"({i}, '{day}', '{region}')" for i, (day, region) in
                     enumerate(((d, r) for d in DAYS for r in REGIONS), start=1))


# The fact mj.f and the two dimensions of the star queries (what the harness makes) ...
STAR_SETUP = [
    "CREATE DATABASE mj",
    "CREATE TABLE mj.f (v INT, ds STRING, region STRING) USING parquet PARTITIONED BY (ds, region)",
    f"INSERT INTO mj.f VALUES {_fact_rows()}",
    "CREATE TABLE mj.dd (ds STRING, n INT, holiday BOOLEAN, label STRING, day DATE) USING parquet",
    "INSERT INTO mj.dd VALUES " + ", ".join(
        f"('{day}', {n}, {str(n in (2, 4)).lower()}, '{'early' if n <= 3 else 'late'}', DATE'{day}')"
        for n, day in enumerate(DAYS, start=1)),
    "CREATE TABLE mj.dr (region STRING, name STRING, code STRING) USING parquet",
    "INSERT INTO mj.dr VALUES ('eu', 'Europe', 'EU'), ('us', 'America', 'US'), ('ap', 'Asia', 'AP')",
]
# ... and the other facts and dimensions of the component tests.
SETUP = STAR_SETUP + [
    # the same fact as a Hive serde (text) table, and one partitioned by an int
    "CREATE TABLE mj.fh (v INT) PARTITIONED BY (ds STRING, region STRING) STORED AS TEXTFILE",
    "SET hive.exec.dynamic.partition.mode=nonstrict",
    "INSERT INTO mj.fh PARTITION (ds, region) SELECT v, ds, region FROM mj.f",
    "CREATE TABLE mj.fi (v INT, h INT) USING parquet PARTITIONED BY (h)",
    "INSERT INTO mj.fi VALUES " + ", ".join(f"({h * 10}, {h})" for h in range(1, 7)),
    # more dimensions (unpartitioned, like dd and dr: Spark knows their size and broadcasts them)
    "CREATE TABLE mj.dk (ds STRING, region STRING) USING parquet",
    "INSERT INTO mj.dk VALUES ('2024-01-01', 'eu'), ('2024-01-02', 'us'), ('2024-01-03', 'ap')",
    "CREATE TABLE mj.dh (h BIGINT) USING parquet",
    "INSERT INTO mj.dh VALUES (2), (5), (9999999999)",
    # a partitioned dimension: its key values come from the metastore's partition list
    "CREATE TABLE mj.dp (x INT, ds STRING, kind STRING) USING parquet PARTITIONED BY (ds, kind)",
    "INSERT INTO mj.dp VALUES (1, '2024-01-01', 'plain'), (2, '2024-01-03', 'promo'), (3, '2024-01-06', 'promo'),"
    " (4, '2024-01-02', 'plain')",
]


@dataclass(frozen=True)
class Case:
    """A query; ``fetched``: partitions of ``table`` (``partitions`` in all) the metastore returns
    with the option on (None: the rule leaves the query alone, so it fetches what it fetches with
    the option off).  ``settings`` are SET for the query only."""
    name: str
    query: str
    fetched: int | None
    table: str = "mj.f"
    settings: dict = field(default_factory=dict)
    partitions: int = len(DAYS) * len(REGIONS)


STAR = "SELECT f.v, f.ds, f.region FROM mj.f JOIN mj.dd ON f.ds = dd.ds WHERE dd.holiday"

PRUNED = [
    Case("star", STAR, 6),
    Case("hive-serde-fact", "SELECT fh.v FROM mj.fh JOIN mj.dd ON fh.ds = dd.ds WHERE dd.holiday", 6, "mj.fh"),
    Case("cascade-two-columns", "SELECT f.v FROM mj.f JOIN mj.dd ON f.ds = dd.ds JOIN mj.dr ON f.region = dr.region"
         " WHERE dd.holiday AND dr.name = 'Europe'", 2),
    Case("cascade-same-column", "SELECT f.v FROM mj.f JOIN mj.dd a ON f.ds = a.ds JOIN mj.dd b ON f.ds = b.ds"
         " WHERE a.holiday AND b.label = 'early'", 3),
    Case("multi-column", "SELECT f.v FROM mj.f JOIN mj.dk ON f.ds = dk.ds AND f.region = dk.region", 3),
    Case("left-semi", "SELECT v FROM mj.f LEFT SEMI JOIN mj.dd ON f.ds = dd.ds AND dd.holiday", 6),
    Case("in-subquery", "SELECT v FROM mj.f WHERE ds IN (SELECT ds FROM mj.dd WHERE holiday)", 6),
    Case("widening-cast", "SELECT fi.v FROM mj.fi JOIN mj.dh ON fi.h = dh.h", 2, "mj.fi", partitions=6),
    Case("partitioned-dimension", "SELECT f.v, dp.x FROM mj.f JOIN mj.dp ON f.ds = dp.ds WHERE dp.kind = 'promo'", 6),
    Case("range-over-max-values", "SELECT f.v FROM mj.f JOIN mj.dd ON f.ds = dd.ds WHERE dd.n % 2 = 1", 15,
         settings={MAX_VALUES: "2"}),
    Case("empty-key-set", "SELECT f.v FROM mj.f JOIN mj.dd ON f.ds = dd.ds WHERE dd.label = 'none'", 0),
]

LEFT_ALONE = [
    Case("left-outer-big-preserved", "SELECT f.v, dd.n FROM mj.f LEFT JOIN mj.dd ON f.ds = dd.ds AND dd.holiday", None),
    Case("left-anti", "SELECT v FROM mj.f LEFT ANTI JOIN mj.dd ON f.ds = dd.ds AND dd.holiday", None),
    Case("function-on-key", "SELECT f.v FROM mj.f JOIN mj.dr ON upper(f.region) = dr.code WHERE dr.name = 'Asia'",
         None),
    Case("value-changing-cast", "SELECT f.v FROM mj.f JOIN mj.dd ON CAST(f.ds AS DATE) = dd.day WHERE dd.holiday",
         None),
    Case("non-partition-key", "SELECT f.v FROM mj.f JOIN mj.dd ON f.v = dd.n WHERE dd.holiday", None),
    Case("or-condition", "SELECT f.v FROM mj.f JOIN mj.dd ON (f.ds = dd.ds OR f.region = 'none') WHERE dd.holiday",
         None),
    # always true, but not deterministic (Spark's optimizer drops `rand() >= 0` as always true)
    Case("non-deterministic-small-side", "SELECT f.v FROM mj.f JOIN (SELECT ds FROM mj.dd WHERE holiday AND"
         " length(uuid()) = 36) d ON f.ds = d.ds", None),
    Case("over-broadcast-threshold", STAR, None, settings={"spark.sql.autoBroadcastJoinThreshold": "-1"}),
    # the fact is the side Spark broadcasts, or a hint asks for a sort-merge join: no map join
    Case("big-table-broadcast", STAR.replace("SELECT", "SELECT /*+ BROADCAST(f) */"), None),
    Case("merge-hint", STAR.replace("SELECT", "SELECT /*+ MERGE(dd) */"), None),
]

# A dimension that fails while it is materialized (ANSI cast of 'early'/'late' to INT).
FAILING = "SELECT f.v FROM mj.f JOIN mj.dd ON f.ds = dd.ds WHERE CAST(dd.label AS INT) > 0"


@dataclass
class Run:
    """One query with the option off and on: rows (or the error) and partitions fetched."""
    off: object
    on: object
    fetched_off: dict
    fetched_on: dict


def _statements(case: Case, enabled: bool) -> list[str]:
    sets = {ENABLED: str(enabled).lower(), **case.settings}
    resets = {key: {MAX_VALUES: "1000", "spark.sql.autoBroadcastJoinThreshold": "10MB"}[key] for key in case.settings}
    return ([f"SET {key}={value}" for key, value in sets.items()] + [case.query]
            + [f"SET {key}={value}" for key, value in resets.items()])


def run(spark: SparkProcess, endpoints: list[tuple], case: Case, prefix: str = "", timeout: float = 600,
        off: bool = True) -> Run:
    """Runs ``case`` with the option off (unless ``off`` is false: Run.off is then None), then on,
    in ``spark``; ``endpoints`` are the metastores' (host, metrics port)."""
    table = localize(case.table, prefix)
    answers, fetched = {False: None}, {False: {}}
    for enabled in (False, True) if off else (True,):
        statements = [localize(s, prefix) for s in _statements(case, enabled)]
        with prom.fetched(endpoints, table) as got:
            answer = spark.run({"q": statements}, timeout=timeout)["q"]
        answers[enabled], fetched[enabled] = answer[statements[-1 - len(case.settings)]], got.by_method
    return Run(answers[False], answers[True], fetched[False], fetched[True])


def check_pruned(run_: Run, case: Case) -> None:
    """Same rows off and on; off, Spark fetched every partition; on, exactly ``case.fetched``,
    which is the partitions the rows came from (one row each) unless a range was sent."""
    assert not isinstance(run_.off, dict), run_.off
    assert run_.on == run_.off
    assert MAX_VALUES in case.settings or case.fetched == len(run_.on), run_.on
    assert sum(run_.fetched_off.values()) == case.partitions, run_.fetched_off
    assert run_.fetched_on == ({"get_partitions_by_filter": case.fetched} if case.fetched else {})


def check_left_alone(run_: Run, case: Case) -> None:
    """Same rows and the same partitions fetched (all of them) off and on."""
    assert not isinstance(run_.off, dict), run_.off
    assert (run_.on, run_.fetched_on) == (run_.off, run_.fetched_off)
    assert sum(run_.fetched_on.values()) == case.partitions


# A project user's star through server2, in the project's database (server2 opens sessions there).
SERVER2_SETUP = [
    "CREATE TABLE f (v INT, ds STRING) USING parquet PARTITIONED BY (ds)",
    "INSERT INTO f VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')",
    "CREATE TABLE d (ds STRING, hot BOOLEAN) USING parquet",
    "INSERT INTO d VALUES ('a', false), ('b', true), ('c', false), ('d', true)",
]
SERVER2_QUERY = "SELECT f.v FROM f JOIN d ON f.ds = d.ds WHERE d.hot ORDER BY f.v"


def through_server2(conn, fetched, table: str) -> dict:
    """Makes SERVER2_SETUP over the PyHive connection ``conn``, then runs SERVER2_QUERY after
    `SET` of the option to false and to true: {"false": (rows, partitions fetched), "true": ...}.
    ``fetched(table)`` counts what the metastore returned (tests.support.metastore_metrics.fetched)."""
    cursor = conn.cursor()
    for statement in SERVER2_SETUP:
        cursor.execute(statement)
    answers = {}
    for enabled in ("false", "true"):
        cursor.execute(f"SET {ENABLED}={enabled}")
        with fetched(table) as got:
            cursor.execute(SERVER2_QUERY)
            rows = cursor.fetchall()
        answers[enabled] = (rows, got.by_method)
    return answers


SERVER2_EXPECTED = {"false": ([(2,), (4,)], {"get_partitions": 4}),
                    "true": ([(2,), (4,)], {"get_partitions_by_filter": 2})}


def explain(spark: SparkProcess, query: str, enabled: bool, prefix: str = "", timeout: float = 600) -> str:
    """EXPLAIN EXTENDED of ``query`` with the option on or off."""
    statements = [f"SET {ENABLED}={str(enabled).lower()}", f"EXPLAIN EXTENDED {localize(query, prefix)}"]
    return spark.run({"q": statements}, timeout=timeout)["q"][statements[1]][0][0]
