"""A rolling upgrade under load (playbooks/upgrade.yml; destructive).  The cluster runs an
earlier commit (CI: ``HOPSHIVE_CLUSTER_FROM=<commit> ./scripts/cluster up``) and clients keep
working while ``./scripts/cluster upgrade`` brings it to this checkout, one host at a time:

* metastore DDL (tables and partitions), each call moving to the next metastore instance
  when one does not answer, as Hive's clients do with several hive.metastore.uris;
* WebHDFS writes and reads through both namenodes: HdfsCLI given both URLs, its HA setting;
* Spark DDL and DML (a table created every 20 rows, rows inserted) in the harness's
  long-lived Hive session (every metastore URI; Hive's client retries), which the later
  scenarios go on using;
* SQL through server2 with beeline, each statement on a new connection, retried while
  server2 drains and restarts (Hive JDBC does not reconnect by itself).

Each call is retried that way for up to RETRY_FOR seconds, as the README's client settings
say; none may still fail after it.  Afterwards every acknowledged write is there, the
metastore/namespace invariants hold, ``hopshive-dfs fsck`` is clean, and every service
reports this checkout's build: Prometheus' hopshive_build_info and the namenodes' rows in
hops.hdfs_namenodes (the migration this upgrade applies).  The harness runs this scenario
first (conftest), so every other one then runs on the upgraded cluster.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from pymetastore.hive_metastore.ttypes import AlreadyExistsException

from harness.support import identity, metastore as ms, server2, services, webhdfs
from harness.support.galera import reopen
from harness.support.platform import owned_projects
from harness.support.prometheus import SCRAPED, api, usable
from harness.support.spark import SPARK_TIMEOUT
from tests.support.hms import database, partition, table
from tests.support.polling import wait_until
from tests.support.server2 import beeline

pytestmark = [pytest.mark.destructive, pytest.mark.upgrades, pytest.mark.metastore, pytest.mark.server2,
              pytest.mark.spark, pytest.mark.timeout(3000)]
ROOT = Path(__file__).resolve().parents[1]
RETRY_FOR = 150.0       # seconds a client goes on retrying one call (README: rolling upgrade)
PASSWORD = f"harness-{secrets.token_hex(8)}"
SERVICES = ("namenode", "metastore", "cleaner", "server2", "platform")   # Prometheus jobs that report a build
PARTITIONS = 2


def this_build() -> str:
    return subprocess.run([ROOT / "scripts/source-digest"], check=True, capture_output=True, text=True).stdout.strip()


@dataclass
class Calls:
    """Client calls retried the documented way: how many, how many needed a retry, and what
    still failed once RETRY_FOR had passed."""
    made: int = 0
    retried: int = 0
    failed: list = field(default_factory=list)

    def call(self, what: str, attempt, went_through=lambda exc: False) -> tuple[bool, object]:
        """``attempt(n)`` until it returns, n = 0, 1, ...: (True, what it returned), or
        (False, None) once RETRY_FOR has passed.  An error that ``went_through`` says a previous
        attempt had done (a create answered with "already exists") counts as success."""
        deadline, n = time.monotonic() + RETRY_FOR, 0
        while True:
            try:
                result = attempt(n)
            except Exception as exc:  # noqa: BLE001 -- retried, and reported if it never succeeds
                if n and _safely(went_through, exc):
                    result = None
                elif time.monotonic() < deadline:
                    n += 1
                    time.sleep(2)
                    continue
                else:
                    self.failed.append(f"{what}: {type(exc).__name__}: {str(exc)[:300]}")
                    return False, None
            self.made += 1
            self.retried += n > 0
            return True, result


def _safely(check, exc) -> bool:
    """``check(exc)``, False when the check itself fails (it may call the server again)."""
    try:
        return bool(check(exc))
    except Exception:  # noqa: BLE001
        return False


@dataclass
class Load:
    """The three clients, each in a thread of its own, until ``stop`` is set."""
    targets: object
    metastores: list
    hdfs: object
    database: str
    path: str
    sql: tuple              # (email, project) of a project member, for beeline
    spark: object           # a SparkProcess on the metastores
    spark_db: str
    calls: Calls = field(default_factory=Calls)
    tables: dict = field(default_factory=dict)      # acknowledged: table -> partitions
    files: dict = field(default_factory=dict)       # acknowledged: path -> bytes
    rows: set = field(default_factory=set)          # acknowledged: values inserted through server2
    spark_rows: set = field(default_factory=set)    # acknowledged: values inserted by Spark
    stop: threading.Event = field(default_factory=threading.Event)

    def metastore_step(self, i: int) -> None:
        def client(n: int):
            return ms.client(self.metastores[(i + n) % len(self.metastores)], self.targets.user, timeout=30)

        def create(n: int) -> None:
            with client(n) as hms:
                hms.create_table(table(self.database, f"t{i}", parts=("p int",), owner=self.targets.user))

        def add(n: int) -> None:
            with client(n) as hms:
                created = hms.get_table(self.database, f"t{i}")
                hms.add_partitions([partition(created, [str(p)]) for p in range(PARTITIONS)])

        def exists(exc) -> bool:
            return isinstance(exc, AlreadyExistsException)

        created, _ = self.calls.call(f"create table t{i}", create, exists)
        if created:
            self.tables[f"t{i}"] = 0
            added, _ = self.calls.call(f"add partitions to t{i}", add, exists)
            if added:
                self.tables[f"t{i}"] = PARTITIONS

    def webhdfs_step(self, i: int) -> None:
        path, content = f"{self.path}/f{i}", f"file {i}\n".encode() * 10

        def write(n: int) -> None:
            self.hdfs.write(path, content, overwrite=False)

        def read(n: int) -> bytes:
            with self.hdfs.read(path) as reader:
                return reader.read()

        def written(exc) -> bool:
            return "already exists" in str(exc).lower() and read(0) == content

        wrote, _ = self.calls.call(f"write {path}", write, written)
        readable, found = self.calls.call(f"read {path}", read) if wrote else (False, None)
        if readable and found != content:
            self.calls.failed.append(f"read {path}: {len(found)} bytes, not the {len(content)} written")
        elif readable:
            self.files[path] = content

    def sql_step(self, i: int) -> None:
        email, project = self.sql
        host, port = self.targets.server2

        def insert(n: int) -> None:
            done = beeline(host, port, project, email, PASSWORD, f"INSERT INTO upgrade_rows VALUES ({i});",
                           server2.jdbc_tail(), timeout=120)
            if done.returncode != 0:
                raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "beeline failed")

        inserted, _ = self.calls.call(f"INSERT {i} through server2", insert)
        if inserted:
            self.rows.add(i)

    def spark_step(self, i: int) -> None:
        statements = [f"CREATE TABLE IF NOT EXISTS {self.spark_db}.t{i // 20} (v INT, note STRING) USING parquet",
                      f"INSERT INTO {self.spark_db}.t{i // 20} VALUES ({i}, 'row {i}')"]

        def run(n: int) -> None:
            answers = self.spark.run({"step": statements}, timeout=300)["step"]
            failed = [answer for answer in answers.values() if isinstance(answer, dict)]
            if failed:
                raise RuntimeError(f"{failed[0]['error']}: {failed[0]['message']}")

        done, _ = self.calls.call(f"Spark INSERT {i}", run)
        if done:
            self.spark_rows.add(i)

    def loop(self, step, pause: float) -> None:
        """``step`` again and again, ``pause`` seconds apart: a steady load, not a flood that
        would slow the upgrade it is watching (a beeline call starts a JVM)."""
        i = 0
        while not self.stop.wait(pause if i else 0):
            try:
                step(i)
            except Exception as exc:  # noqa: BLE001 -- a client that breaks is a failed call, shown
                self.calls.failed.append(f"{step.__name__} {i}: {type(exc).__name__}: {str(exc)[:300]}")
            i += 1


def builds_reported(prometheus: str) -> dict[str, str]:
    """``job instance`` -> the build source it reports, for every target of SERVICES that is up
    (one that reports none, a release from before hopshive_build_info, maps to "none")."""
    jobs = "|".join(SERVICES)
    up = {(r["metric"]["job"], r["metric"]["instance"])
          for r in api(prometheus, "query", query=f'up{{job=~"{jobs}"}} == 1')["result"]}
    reported = {(r["metric"]["job"], r["metric"]["instance"]): r["metric"]["source"]
                for r in api(prometheus, "query", query=f'hopshive_build_info{{job=~"{jobs}"}}')["result"]}
    return {f"{job} {instance}": reported.get((job, instance), "none") for job, instance in sorted(up)}


@pytest.fixture
def projects(platform, run_id):
    yield from owned_projects(platform, f"up-{run_id}", PASSWORD, keys=("a",))


def test_rolling_upgrade_under_load(targets, scratch, db, metastores, platform, projects, hive_spark):
    if not targets.containers or not all(targets.containers.get(n.rsplit(":", 1)[0]) for n in targets.namenodes):
        services.cannot_control(targets, "the upgrade scenario runs on our container cluster (./scripts/cluster test)")
    new = this_build()
    before = {n: (webhdfs.health(targets.namenode_url(n)) or {}).get("build", {}).get("source")
              for n in targets.namenodes}
    if all(source == new for source in before.values()):
        reason = (f"the cluster already runs this checkout's build ({new[:12]}): deploy an earlier commit first "
                  "(HOPSHIVE_CLUSTER_FROM=<commit> ./scripts/cluster up)")
        if os.environ.get("HOPSHIVE_CLUSTER_FROM"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    pytest.importorskip("hdfs")
    prometheus = usable(targets)
    name = f"{scratch.prefix}upgrade"
    with ms.client(metastores[0], targets.user) as client:
        client.create_database(database(name, f"{scratch.uri}/upgrade.db"))
    email, _, project = projects["a"]
    done = beeline(*targets.server2, project, email, PASSWORD, "CREATE TABLE upgrade_rows (v INT);",
                   server2.jdbc_tail())
    assert done.returncode == 0, done.stderr[-2000:]
    spark = hive_spark      # the harness's shared session: the scenarios after this one go on with it
    spark_db = f"{scratch.prefix}upgrade_spark"
    created = spark.run({"setup": [f"CREATE DATABASE {spark_db}"]}, timeout=SPARK_TIMEOUT)["setup"]
    assert all(not isinstance(answer, dict) for answer in created.values()), created
    both = ";".join(targets.namenode_url(n) for n in targets.namenodes)
    load = Load(targets, metastores, identity.hdfs_client(both, targets.user), name, scratch.path, (email, project),
                spark, spark_db)
    clients = [threading.Thread(target=load.loop, args=(step, pause), name=step.__name__)
               for step, pause in ((load.metastore_step, 0.5), (load.webhdfs_step, 0.2), (load.sql_step, 10.0),
                                   (load.spark_step, 2.0))]
    for thread in clients:
        thread.start()
    try:
        wait_until(lambda: load.tables and load.files and load.rows and load.spark_rows, 300,
                   lambda _: f"the clients do not start: {load.calls.failed[-5:]}")
        started = time.monotonic()
        # Every task's time in the kept log (where a rolling upgrade's time goes), not only the slowest.
        upgrade = subprocess.run([ROOT / "scripts/cluster", "upgrade"], capture_output=True, text=True, timeout=2400,
                                 env=dict(os.environ, PROFILE_TASKS_SUMMARY_ONLY="false"))
        took = time.monotonic() - started
        (ROOT / ".state").mkdir(exist_ok=True)
        (ROOT / ".state/upgrade.log").write_text(upgrade.stdout + upgrade.stderr)   # the whole run, kept
        time.sleep(10)          # the clients go on with the whole deployment upgraded
    finally:
        load.stop.set()
        for thread in clients:
            thread.join(300)
        tables = range(max(load.spark_rows, default=0) // 20 + 1)
        answers = spark.run({"q": [f"SELECT DISTINCT v FROM {spark_db}.t{k}" for k in tables]}, timeout=SPARK_TIMEOUT)["q"]
    print(f"\nupgrade.yml took {took:.0f} s; {load.calls.made} client calls, {load.calls.retried} needed a retry, "
          f"{len(load.calls.failed)} failed after {RETRY_FOR:.0f} s of retries; {len(load.tables)} tables, "
          f"{len(load.files)} files, {len(load.rows)} server2 rows, {len(load.spark_rows)} Spark rows acknowledged")
    assert upgrade.returncode == 0, upgrade.stdout[-6000:] + upgrade.stderr[-2000:]
    assert load.calls.failed == []

    reopen(db)
    with ms.client(metastores[0], targets.user) as client:
        for name_, partitions in load.tables.items():
            assert len(client.get_partition_names(name, name_, -1)) >= partitions, name_
    for path, content in load.files.items():
        with load.hdfs.read(path) as reader:
            assert reader.read() == content, path
    done = beeline(*targets.server2, project, email, PASSWORD, "SELECT DISTINCT v FROM upgrade_rows;",
                   server2.jdbc_tail())
    assert done.returncode == 0, done.stderr[-2000:]
    assert load.rows <= {int(line) for line in done.stdout.split() if line.isdigit()}
    spark_found = {int(row[0]) for answer in answers.values() if not isinstance(answer, dict) for row in answer}
    assert load.spark_rows <= spark_found, sorted(load.spark_rows - spark_found)
    assert ms.violations(db, scratch.uri) == {}
    fsck = services.run_on(targets.containers[targets.namenodes[0].rsplit(":", 1)[0]], "hopshive-dfs", "fsck", "/",
                           timeout=300)
    assert fsck.returncode == 0 and "HEALTHY" in fsck.stdout, fsck.stdout[-2000:] + fsck.stderr[-2000:]

    def stragglers() -> dict:
        return {instance: source[:12] for instance, source in builds_reported(prometheus).items() if source != new}

    wait_until(lambda: not stragglers(), SCRAPED, lambda _: f"services not reporting {new[:12]}: {stragglers()}")
    assert {instance.split()[0] for instance in builds_reported(prometheus)} == set(SERVICES)
    registered = dict(ms.query(db)("SELECT address, build FROM hops.hdfs_namenodes"))
    assert registered and set(registered.values()) == {new}, registered
