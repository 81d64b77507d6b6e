"""Hive indexes through HopsHive's Spark extension (issue 25): the tables, statements and
checks shared by the component tests (tests/component/test_indexes_spark.py) and the e2e
harness (harness/test_indexes.py), both driving a SparkProcess (tests/support/spark_workload).

Database ``ix`` (prefixable): ``t`` partitioned by ds ('a', 'b'), 12 Parquet files, its key
``k`` a permutation of 0..2999 (unique, unsorted: Parquet's own min/max cannot skip a file);
``u`` a Hive serde Parquet table (STORED AS PARQUET), unpartitioned, 4 files.  Strings and
ints carry NULLs."""

from __future__ import annotations

import os
import re
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from hypothesis import strategies as st

from tests.support.spark_workload import SparkProcess, localize

ROWS = 3000
ENABLED = "spark.hopshive.index.enabled"
_ROWS = (f"SELECT /*+ REPARTITION(6) */ id * 7919 % {ROWS} AS k,"
         " IF(id % 11 = 0, NULL, concat('s', id % 97)) AS s, IF(id % 13 = 0, NULL, CAST(id % 50 AS INT)) AS n")
SETUP = [
    "CREATE DATABASE ix",
    "CREATE TABLE ix.t (k BIGINT, s STRING, n INT, ds STRING) USING parquet PARTITIONED BY (ds)",
    f"INSERT INTO ix.t {_ROWS}, IF(id < {ROWS // 2}, 'a', 'b') AS ds FROM range({ROWS})",
    "CREATE TABLE ix.u (k BIGINT, s STRING, n INT) STORED AS PARQUET",
    f"INSERT INTO ix.u SELECT /*+ REPARTITION(4) */ k, s, n FROM ({_ROWS} FROM range({ROWS}))",
    "CREATE VIEW ix.v AS SELECT * FROM ix.t",
]
_USED = re.compile(r"IndexedScan (?P<what>.*?): read (?P<read>\d+) of (?P<files>\d+) files")
_FRESH = re.compile(r"(?P<fresh>\d+) of (?P<partitions>\d+) partitions fresh")


@dataclass
class Explained:
    """What EXPLAIN said of index use: None when no index was consulted."""
    text: str

    @property
    def used(self) -> re.Match | None:
        return _USED.search(self.text)

    @property
    def read(self) -> tuple[int, int] | None:
        return (int(self.used["read"]), int(self.used["files"])) if self.used else None

    @property
    def fresh(self) -> tuple[int, int] | None:
        match = _FRESH.search(self.text)
        return (int(match["fresh"]), int(match["partitions"])) if match else None


def ask(spark, statement: str, prefix: str = "", timeout: float = 600):
    """One statement's answer: sorted rows, or {"error", "message"}."""
    return spark.run({"one": [localize_ix(statement, prefix)]}, timeout=timeout)["one"][localize_ix(statement, prefix)]


def ok(spark, statements: list[str], prefix: str = "", timeout: float = 600) -> None:
    """Run statements that must all succeed."""
    done = spark.run({"ok": [localize_ix(s, prefix) for s in statements]}, timeout=timeout)["ok"]
    failed = {s: a for s, a in done.items() if isinstance(a, dict)}
    assert not failed, failed


def explain(spark, query: str, prefix: str = "", timeout: float = 600) -> Explained:
    answer = ask(spark, f"EXPLAIN {query}", prefix, timeout)
    assert not isinstance(answer, dict), answer
    return Explained(answer[0][0])


def on_off(spark, query: str, prefix: str = "", timeout: float = 600) -> tuple:
    """(rows with indexes, rows without): a query run with spark.hopshive.index.enabled on, then off."""
    text = localize_ix(query, prefix)
    answers = spark.run({"on": [f"SET {ENABLED}=true", text], "off": [f"SET {ENABLED}=false", text],
                         "reset": [f"SET {ENABLED}=true"]}, timeout=timeout)
    return answers["on"][text], answers["off"][text]


def localize_ix(statement: str, prefix: str) -> str:
    """Database ix renamed <prefix>ix (w1/w2 too, as spark_workload.localize does)."""
    return re.sub(r"\bix\b", f"{prefix}ix", localize(statement, prefix)) if prefix else statement


# Predicates of the property test: equality, IN, range, NULL and string predicates on t's columns.
PREDICATES = st.one_of(
    st.builds(lambda v: f"k = {v}", st.integers(-5, ROWS + 5)),
    st.builds(lambda vs: f"k IN ({', '.join(map(str, vs))})", st.lists(st.integers(0, ROWS), min_size=1, max_size=4)),
    st.builds(lambda lo, w: f"k BETWEEN {lo} AND {lo + w}", st.integers(-10, ROWS), st.integers(0, 40)),
    st.builds(lambda v, op: f"n {op} {v}", st.integers(-2, 52), st.sampled_from(["=", "<", ">=", "<=>"])),
    st.sampled_from(["n IS NULL", "s IS NULL", "s IS NOT NULL AND k < 100", "n <=> NULL"]),
    st.builds(lambda v: f"s = 's{v}'", st.integers(0, 100)),
    st.builds(lambda v: f"s IN ('s{v}', 'zz')", st.integers(0, 100)),
    st.builds(lambda v: f"s LIKE 's{v}%' OR k = {v}", st.integers(0, 99)),
)
PROPERTY_INDEXES = ["CREATE INDEX pk ON TABLE ix.t (k, n, s) AS 'DATASKIPPING'",
                    "CREATE INDEX ps ON TABLE ix.t (s) AS 'COMPACT'",
                    "CREATE INDEX pb ON TABLE ix.t (n, s) AS 'BITMAP'"]
DROP_PROPERTY_INDEXES = ["DROP INDEX pk ON ix.t", "DROP INDEX ps ON ix.t", "DROP INDEX pb ON ix.t"]


def bitmap_positions(code: list[int]) -> list[int]:
    """The row positions a BITMAP index's ``_bitmaps`` holds (RowBitmap in the Spark extension):
    chunks of a marker -- zero words skipped (high 32 bits), literal words following (low 32
    bits) -- and those 64-bit words, bit p % 64 of word p / 64 for row p."""
    positions, i, word = [], 0, 0
    while i < len(code):
        marker = code[i] & (2**64 - 1)
        word += marker >> 32
        for literal in code[i + 1:i + 1 + (marker & 0xFFFFFFFF)]:
            literal &= 2**64 - 1
            positions += [word * 64 + bit for bit in range(64) if literal >> bit & 1]
            word += 1
        i += 1 + (marker & 0xFFFFFFFF)
    return positions


def jvm_of(pid: int) -> int:
    """The JVM a SparkProcess child started (its child process)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    return int(entry.name)
            except (OSError, IndexError, ValueError):
                continue
    raise AssertionError(f"no JVM below process {pid}")


def freeze_mid_rebuild(victim: SparkProcess, statement: str, staging: Callable[[], list], timeout: float = 600) -> int:
    """Start ``statement`` (a rebuild) in ``victim`` and SIGSTOP its JVM as soon as ``staging()``
    (the index table's staging directories) is not empty: the rebuild has written and not yet
    committed.  Returns the JVM's pid (kill it)."""
    victim.ready(timeout)
    victim.submit({"rebuild": [statement]})
    jvm = jvm_of(victim.process.pid)
    deadline = time.monotonic() + timeout
    while not staging():        # polled fast: the staging directory lives for about a second
        assert time.monotonic() < deadline, f"no staging directory; the session's log: {victim.log_tail()}"
        time.sleep(0.01)
    os.kill(jvm, signal.SIGSTOP)
    return jvm


def staging_names(entries: list[dict]) -> list[str]:
    """The staging directories among a LISTSTATUS answer's entries."""
    return [e["pathSuffix"] for e in entries if e["pathSuffix"].startswith(".hopshive-staging-")]
