#!/usr/bin/env python3
"""Backup and restore of a deployed cluster (playbooks/backup.yml and restore.yml) beside a
bare mariabackup of the same database on the same node.

    .venv-test/bin/python bench/backup_bench.py --inventory inventories/cluster \\
        [--partitions 10000] [--files-mb 256] [--small-files 500]

Loads, into a database and a directory of its own: a partitioned table with --partitions
partitions (each with its directory, as the metastore bench's), --files-mb of 4 MiB files in
1 MiB blocks and --small-files files of 1 KB (kept in the database).  Then times, once each:
a bare `mariabackup --backup` on the backup's database node (into its /tmp, removed after),
backup.yml (full), backup.yml incremental after 8 more MiB, and restore.yml of that
increment, forced onto the running cluster.

The restore REPLACES the cluster's databases and blocks with the backup's: run it only
against our container cluster (./scripts/cluster up), which it refuses to leave.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))

from harness.support import identity, metastore as ms, targets as target_config, trust  # noqa: E402
from tests.support.hms import database, partition, table  # noqa: E402

MIB = 1 << 20
PLAYBOOK = REPOSITORY / ".venv-deploy" / "bin" / "ansible-playbook"


def timed(label: str, command: list[str], rows: list) -> None:
    print(f"... {label}", file=sys.stderr)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True,
                          env={**os.environ, "ANSIBLE_CONFIG": str(REPOSITORY / "ansible.cfg")})
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{label} failed ({done.returncode}):\n{done.stdout[-4000:]}{done.stderr[-2000:]}")
    rows.append((label, seconds))


def load(targets, args, name: str) -> None:
    hdfs = identity.hdfs_client(targets.webhdfs_url, targets.user)
    base = f"/tmp/{name}"
    print(f"... loading {args.partitions} partitions, {args.files_mb} MiB of files, {args.small_files} small files"
          f" under {base}", file=sys.stderr)
    with ms.client(targets.metastores[0], targets.user, timeout=600) as client:
        client.create_database(database(name, targets.uri(f"{base}/db")))
        created = table(name, "t", parts=("p int", "q string"), owner=targets.user)
        client.create_table(created)
        for start in range(0, args.partitions, 1000):
            client.add_partitions([partition(created, [str(i), f"v{i % 7}"])
                                   for i in range(start, min(start + 1000, args.partitions))])
    for i in range(args.files_mb // 4):
        hdfs.write(f"{base}/large/f{i}", os.urandom(4 * MIB), blocksize=MIB)
    for i in range(args.small_files):
        hdfs.write(f"{base}/small/s{i}", os.urandom(1000))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--inventory", required=True)
    parser.add_argument("--partitions", type=int, default=10000)
    parser.add_argument("--files-mb", type=int, default=256)
    parser.add_argument("--small-files", type=int, default=500)
    args = parser.parse_args()
    targets = target_config.load(args.inventory)
    identity.use(targets)
    trust.use(targets)
    donor = targets.db_nodes[-1] if targets.db_nodes else None
    if donor not in targets.containers:
        sys.exit("the database nodes are not our containers: this bench replaces the cluster's data, so it runs "
                 "only against ./scripts/cluster")
    name = f"hh_backup_bench_{uuid.uuid4().hex[:8]}"
    load(targets, args, name)
    playbook = [str(PLAYBOOK), "-i", args.inventory]
    rows: list = []
    container = targets.containers[donor]
    timed("bare mariabackup --backup (same node, local disk)",
          ["docker", "exec", container, "sh", "-c", "rm -rf /tmp/bare && mariabackup --backup --user=root "
           "--galera-info --target-dir=/tmp/bare >/dev/null 2>&1 && du -sm /tmp/bare && rm -rf /tmp/bare"], rows)
    timed("backup.yml (full)", [*playbook, str(REPOSITORY / "playbooks" / "backup.yml")], rows)
    hdfs = identity.hdfs_client(targets.webhdfs_url, targets.user)
    for i in range(2):
        hdfs.write(f"/tmp/{name}/more/m{i}", os.urandom(4 * MIB), blocksize=MIB)
    timed("backup.yml (incremental, 8 MiB more)", [*playbook, str(REPOSITORY / "playbooks" / "backup.yml"),
                                                   "-e", "hopshive_backup_incremental=true"], rows)
    timed("restore.yml (full + increment, forced)", [*playbook, str(REPOSITORY / "playbooks" / "restore.yml"),
                                                      "-e", "hopshive_restore_force=true"], rows)
    sizes = subprocess.run(["docker", "exec", container, "du", "-sm", "/var/lib/mysql", "/var/backups/hopshive"],
                           capture_output=True, text=True).stdout.split()
    print(f"\n{args.partitions} partitions, {args.files_mb} MiB in blocks, {args.small_files} small files; "
          f"MiB on {donor}: {dict(zip(sizes[1::2], sizes[0::2]))}\n")
    print("| step | seconds |\n|---|---|")
    for label, seconds in rows:
        print(f"| {label} | {seconds:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
