"""Every operator command of the top-level README, run exactly as the README shows it, as
root, with no flags but the ones printed there, on a host of the tier that deploys it
(this machine, or one of our cluster containers through `docker exec`).  Each line below
must appear verbatim in README.md: change one, change the other.  Read-only commands only."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.support import metastore as ms
from harness.support.services import manager, run_on
from harness.support.targets import LOCAL_NAMES
from harness.test_metastore_hbase import hbase_metastores  # noqa: F401 (fixture)
from tests.support.hms import database, table

pytestmark = pytest.mark.metastore
README = (Path(__file__).resolve().parent.parent / "README.md").read_text()

# (README line, inventory group of the hosts that have it, what its output starts with or holds)
COMMANDS = [
    ("hopshive-dfs -ls /", "namenode", "Found "),
    ("hopshive-dfs fsck /", "namenode", "Status: HEALTHY"),
    ("hopshive-schematool info", "metastore", "hops: version "),
    ("hopshive-metatool fsck", "metastore", "metastore fsck: "),
    ("hopshive-metatool fsck-hbase", "metastore", "hbase store fsck: "),
    ('hopshive-metatool explain-filter DB TABLE "FILTER"', "metastore", "plan: "),
    ("hopshive-cleaner status", "cleaner", "leader: "),
    ("hopshive-platform user list", "platform", "admin@"),
    ("hopshive-supervisorctl status", "cleaner", "hopshive-cleaner"),
    ("systemctl list-units --plain 'hopshive-*'", "cleaner", "hopshive-cleaner"),
]
# The lines only one kind of host has: {first word: the service manager they need}
MANAGER_OF = {"hopshive-supervisorctl": "supervisord", "systemctl": "systemd"}
# exit status each may end with besides 0: fsck says 1 while findings remain, which a
# shared deployment under test may well have for a moment
FINDINGS_POSSIBLE = {"hopshive-metatool fsck": {1}, "hopshive-metatool fsck-hbase": {1}}


@pytest.fixture(scope="module")
def hbase_table(hbase_metastores, targets, run_id):
    """A partitioned table on the HBase store for explain-filter's DB TABLE, dropped after."""
    name = f"hh_{run_id}_operator"
    with ms.client(hbase_metastores[0], targets.user) as hive:
        hive.create_database(database(name))
        hive.create_table(table(name, "t", parts=("p int", "q string"), owner=targets.user))
    yield name, "t"
    ms.drop_databases(hbase_metastores[0], targets.user, name)


def where(targets, group: str) -> str | None:
    """The container to run a command of ``group`` in, None for this machine; skips when the
    group's host is neither."""
    host = targets.group_hosts.get(group, "127.0.0.1")
    if host in targets.containers:
        return targets.containers[host]
    if host not in LOCAL_NAMES:
        pytest.skip(f"the {group} host {host} is neither this machine nor one of our containers")
    if os.geteuid() != 0:
        pytest.skip("the operator commands read root-only files: run the harness as root")
    return None


@pytest.mark.parametrize("line, group, expected", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_the_readme_command_runs_as_shown(line, group, expected, targets, request):
    assert line in README, f"README.md no longer shows `{line}`"
    container = where(targets, group)
    needs, has = MANAGER_OF.get(line.split()[0]), manager(container)
    if needs and has != needs:
        pytest.skip(f"the services on {container or 'this machine'} run under {has}; `{line}` is for {needs} hosts")
    command = line
    if "explain-filter" in line:
        db_name, table_name = request.getfixturevalue("hbase_table")
        command = line.replace("DB TABLE", f"{db_name} {table_name}").replace('"FILTER"', "\"p > 1 and q = 'x'\"")
    done = run_on(container, "sh", "-c", command, timeout=120)
    shown = f"`{command}` on {container or 'this machine'} exited {done.returncode}:\n{done.stdout}{done.stderr}"
    assert done.returncode in {0} | FINDINGS_POSSIBLE.get(line, set()), shown
    assert done.stdout.startswith(expected) or f"\n{expected}" in done.stdout, shown


def test_hdfs_dfs_dash_forms_round_trip(targets, run_id):
    """`hdfs dfs` habits work as typed: -mkdir -p, -put from stdin, -cat, -stat, -du, -rm."""
    container = where(targets, "namenode")
    base = f"/tmp/hh-{run_id}-dash"
    script = (f"set -e; hopshive-dfs -mkdir -p {base}; echo dash-forms | hopshive-dfs -put - {base}/f; "
              f"hopshive-dfs -cat {base}/f; hopshive-dfs -stat %n {base}/f; hopshive-dfs -du -s {base}; "
              f"hopshive-dfs -rm -r -skipTrash {base}")
    done = run_on(container, "sh", "-c", script, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == ["dash-forms", "f"] and lines[2].startswith("11 "), lines
