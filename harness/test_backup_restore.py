"""Backup and restore of the whole platform (playbooks/backup.yml and restore.yml; issue 27).

1. load data: a partitioned Spark table through the deployed metastores, small files (kept in
   the database) and large ones (several blocks each) through WebHDFS, a platform project;
2. back up while a writer keeps writing files;
3. refuse: restore.yml onto the cluster as it is (it holds data) stops before changing anything,
   and so does a restore of a backup taken by a newer release (a copy of this one whose
   manifest records schemas beyond this release's migrations);
4. destroy the data: every service stopped, every database node's datadir and binary logs
   and every namenode's blocks deleted (the containers stay: re-creating and re-deploying
   them takes longer than the harness's whole run);
5. restore, then: every file acknowledged before the backup started has its bytes (SHA-256),
   the project and its owner are there, Spark answers as before, `hopshive-dfs fsck /` and
   `hopshive-metatool fsck` are clean, the schemas were checked against this release
   (`hopshive-schematool upgrade`: nothing to do for a backup of this release) and the
   metastore/namespace invariants hold.

Destructive to the whole deployment, so it runs only where every database node and namenode
is one of our containers (inventories/cluster: ./scripts/cluster test); on the single host
it skips (the local stack is the one everybody's tests run against).  The HBase store's
metadata lives in HBase, which backup.yml does not copy: no HBase-store table here.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import threading
import time
from pathlib import Path

import pymysql
import pytest

from harness.support import identity, metastore as ms, services
from harness.support.platform import project_token
from harness.support.spark import SPARK_TIMEOUT, hive_session

pytestmark = [pytest.mark.destructive, pytest.mark.replaces_state, pytest.mark.spark, pytest.mark.timeout(3600)]
REPOSITORY = Path(__file__).resolve().parents[1]
PLAYBOOK = REPOSITORY / ".venv-deploy" / "bin" / "ansible-playbook"
SMALL, LARGE, BLOCK = 20, 3, 1 << 20
WIPE_DATABASE = "service mariadb stop; find /var/lib/mysql -mindepth 1 -delete; rm -f /var/log/mysql/mysql-bin.*"
WIPE_BLOCKS = ("rm -rf \"$(sed -n 's/^  data_dir: \"\\(.*\\)\"$/\\1/p' /etc/hopshive/namenode.yml)/current\"")
BACKUP_DIR = "/var/backups/hopshive"        # hopshive_backup_dir's default
NEWER = "zz-newer-release"                  # the copy "taken by a newer release"
# A copy of the newest backup (hard links: no data copied) whose manifest's schemas are one
# migration beyond the release's; the manifest is replaced, not written through its link.
COPY_AS_NEWER = f"""set -e; cd {BACKUP_DIR}; newest=$(ls -1 | grep -v '^[.]' | grep -v {NEWER} | sort | tail -n 1)
cp -al "$newest" {NEWER}
python3 - <<'PY'
import json, os
path = "{NEWER}/manifest.json"
manifest = json.load(open(path))
manifest["schema_versions"] = {{schema: version + 1 for schema, version in manifest["schema_versions"].items()}}
open(path + ".new", "w").write(json.dumps(manifest))
os.replace(path + ".new", path)
PY"""


def playbook(inventory: str, name: str, *extra: str) -> subprocess.CompletedProcess:
    done = subprocess.run([str(PLAYBOOK), "-i", inventory, str(REPOSITORY / "playbooks" / name), *extra],
                          capture_output=True, text=True, timeout=1800,
                          env={**os.environ, "ANSIBLE_CONFIG": str(REPOSITORY / "ansible.cfg")})
    print(f"\n{name}: exit {done.returncode}\n{done.stdout[-6000:]}{done.stderr[-2000:]}")
    return done


@pytest.fixture(scope="module")
def cluster(targets, request) -> dict:
    """{inventory, containers of the database nodes, of the namenodes, of every host}."""
    inventory = request.config.getoption("--inventory")
    databases = list(targets.db_nodes)
    namenodes = [address.rsplit(":", 1)[0] for address in targets.namenodes]
    ours = all(host in targets.containers for host in databases + namenodes)
    if not (inventory and databases and namenodes and ours and PLAYBOOK.exists()) \
            or not all(services.controllable(targets.containers[host]) for host in databases + namenodes):
        services.cannot_control(targets, "backup/restore wipes every database node and namenode: it runs only "
                                "against our container cluster (./scripts/cluster test), never against the "
                                "single host's deployment")
    backup_host = targets.group_hosts.get("backup") or databases[-1]    # hopshive_backup_host
    return {"inventory": inventory, "databases": [targets.containers[h] for h in databases],
            "namenodes": [targets.containers[h] for h in namenodes], "backup_host": targets.containers[backup_host],
            "all": sorted(set(targets.containers.values()))}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Writer:
    """Writes files in a loop while the backup runs; remembers when each was acknowledged."""

    def __init__(self, hdfs, path: str):
        self.hdfs, self.path = hdfs, path
        self.acked: dict[str, tuple[float, str]] = {}
        self.errors: list[str] = []
        self.stop = threading.Event()

    @staticmethod
    def content(i: int) -> bytes:
        return (f"writer {i}\n".encode() * (200 if i % 2 else 20000))   # small and in the database, or a block

    def run(self) -> None:
        i = 0
        while not self.stop.is_set():
            try:
                self.hdfs.write(f"{self.path}/w{i}", self.content(i), overwrite=False)
                self.acked[f"{self.path}/w{i}"] = (time.monotonic(), sha(self.content(i)))
            except Exception as exc:  # noqa: BLE001 -- counted, shown; nothing here may fail, though
                self.errors.append(f"w{i}: {type(exc).__name__}: {str(exc)[:200]}")
            i += 1


SPARK_SETUP = [
    "CREATE DATABASE {db}",
    "CREATE TABLE {db}.sales (id INT, amount DOUBLE, note STRING) PARTITIONED BY (p INT) STORED AS PARQUET",
    "INSERT INTO {db}.sales SELECT id, id * 1.5, concat('n', id), id % 4 FROM range(2000)",
]
SPARK_QUERIES = [
    "SELECT p, COUNT(*), SUM(amount), MAX(note) FROM {db}.sales GROUP BY p",
    "SHOW PARTITIONS {db}.sales",
    "SELECT COUNT(*) FROM {db}.sales WHERE p = 2 AND id > 1000",
]


def spark_answers(session, db: str) -> dict:
    return session.run({"q": [q.format(db=db) for q in SPARK_QUERIES]}, timeout=SPARK_TIMEOUT)["q"]


def run_in(container: str, command: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return services.run_on(container, "sh", "-c", command, timeout=timeout)


@pytest.fixture
def project(platform, targets, run_id):
    """A platform user owning a project; deleted after."""
    email, password, name = f"hh-{run_id}-backup@harness.example.org", "Backup-pw-2026!", f"hh_{run_id}_bk"
    platform.add_user(email, password)
    platform.create_project(name, email)
    yield email, password, name
    platform.delete_project(name)
    platform.block(email)


def test_a_backup_taken_under_writes_restores_every_acknowledged_item(
        cluster, scratch, targets, project, db, root, tmp_path):
    pytest.importorskip("hdfs")
    hdfs = identity.hdfs_client(targets.webhdfs_url, targets.user)
    files = {}
    for i in range(SMALL):
        files[f"{scratch.path}/small/s{i}"] = os.urandom(1000 + i)
    for i in range(LARGE):
        files[f"{scratch.path}/large/l{i}"] = os.urandom(3 * BLOCK + 12345 * i)
    for path, content in files.items():
        hdfs.write(path, content, blocksize=BLOCK if "/large/" in path else None)
    spark_db = f"{scratch.prefix}spark"
    warehouse = targets.uri(f"{root}/hive-warehouse")
    # A JVM of its own, ended before the wipe: its metastore connections would die with it.
    session = hive_session(targets, targets.metastore_uris, warehouse, tmp_path / "spark-before")
    try:
        created = session.run({"setup": [s.format(db=spark_db) for s in SPARK_SETUP]}, timeout=SPARK_TIMEOUT)["setup"]
        assert all(not isinstance(answer, dict) for answer in created.values()), created
        before = spark_answers(session, spark_db)
    finally:
        session.close()
    email, password, project_name = project

    writer = Writer(hdfs, f"{scratch.path}/writer")
    thread = threading.Thread(target=writer.run)
    thread.start()
    try:
        time.sleep(3)
        started = time.monotonic()
        taken = playbook(cluster["inventory"], "backup.yml")
        backup_seconds = time.monotonic() - started
    finally:
        writer.stop.set()
        thread.join(120)
    assert taken.returncode == 0, "backup.yml failed (output above)"
    assert not writer.errors, writer.errors[:5]
    acked_before = {p: digest for p, (t, digest) in writer.acked.items() if t < started}
    print(f"backup: {backup_seconds:.1f}s while the writer had {len(writer.acked)} files acknowledged"
          f" ({len(acked_before)} before the backup began)")

    refused = playbook(cluster["inventory"], "restore.yml")
    assert refused.returncode != 0 and "the cluster holds data" in refused.stdout, \
        "restore.yml must refuse a cluster that holds data"
    assert hdfs.status(f"{scratch.path}/small/s0", strict=False), "the refused restore changed the cluster"
    backup_host = cluster["backup_host"]
    copied = run_in(backup_host, COPY_AS_NEWER)
    assert copied.returncode == 0, copied.stdout + copied.stderr
    try:
        newer = playbook(cluster["inventory"], "restore.yml", "-e", f"hopshive_restore_id={NEWER}",
                         "-e", "hopshive_restore_force=true")
    finally:
        run_in(backup_host, f"rm -rf {BACKUP_DIR}/{NEWER}")
    assert newer.returncode != 0 and f"backup {NEWER} was taken by a newer release" in newer.stdout, \
        "restore.yml must refuse a backup whose schemas this release does not know"
    assert hdfs.status(f"{scratch.path}/small/s0", strict=False), "the refused restore changed the cluster"

    for container in cluster["all"]:
        services.stop_all(container)
    for container in cluster["databases"]:
        wiped = run_in(container, WIPE_DATABASE)
        assert wiped.returncode == 0, wiped.stdout + wiped.stderr
    for container in cluster["namenodes"]:
        wiped = run_in(container, WIPE_BLOCKS)
        assert wiped.returncode == 0, wiped.stdout + wiped.stderr

    started = time.monotonic()
    restored = playbook(cluster["inventory"], "restore.yml")
    print(f"restore: {time.monotonic() - started:.1f}s")
    assert restored.returncode == 0, "restore.yml failed (output above)"
    assert "The filesystem under path '/' is HEALTHY" in restored.stdout
    assert "metastore fsck: " in restored.stdout
    assert "hops: nothing to do" in restored.stdout, "the restore did not bring the schemas to this release"

    for instance in targets.metastores:
        ms.wait_healthy(instance, deadline=180)
    for path, content in files.items():
        with hdfs.read(path) as reader:
            assert sha(reader.read()) == sha(content), path
    for path, digest in acked_before.items():
        with hdfs.read(path) as reader:
            assert sha(reader.read()) == digest, path
    survived = len(hdfs.list(f"{scratch.path}/writer"))
    print(f"restored: {len(files)} loaded files, {len(acked_before)} files acknowledged before the backup began; "
          f"{survived} of the writer's {len(writer.acked)} files are in the backup")
    assert project_token(targets.platform_url, email, password, project_name)["user"]

    session = hive_session(targets, targets.metastore_uris, warehouse, tmp_path / "spark-after")
    try:
        assert spark_answers(session, spark_db) == before
    finally:
        session.close()

    nn, meta = cluster["namenodes"][0], targets.containers[targets.metastores[0][0]]
    dfs = run_in(nn, "hopshive-dfs fsck /")
    assert dfs.returncode == 0 and "HEALTHY" in dfs.stdout, dfs.stdout + dfs.stderr
    metatool = run_in(meta, "hopshive-metatool fsck")
    assert metatool.returncode == 0, metatool.stdout + metatool.stderr
    try:                                    # the harness's own connection died with its server
        db.ping()
    except pymysql.MySQLError:
        db.connect()
    assert ms.violations(db, scratch.uri) == {}

