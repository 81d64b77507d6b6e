"""Spark's standalone cluster (roles/spark_cluster, roles/zookeeper) on the container cluster.

A PySpark job submitted with a plain `spark-submit job.py` on the spark host (its client
configuration names every master) runs on executors of two or more worker hosts, as the
masters' /json API and the workers' say; its result is checked.  Then master failover
(destructive): kill -9 of the active master while a job runs; the standby is elected through
ZooKeeper, the workers and the application re-register with it, and the job's result is
right.  Worker loss (destructive): kill -9 of a worker and its executors while the job's tasks
run; the driver loses those executors, their tasks rerun on the other worker, and the result
is right.  Runs where the inventory's spark_master (two or more, for failover) and
spark_worker (two or more) hosts are our containers (inventories/cluster); skipped
otherwise.  Expected wall time on the container cluster: about 1 minute each.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import urllib.request

import pytest

from harness.support import services
from tests.support.polling import wait_until

pytestmark = [pytest.mark.spark]
MASTER_UI_PORT = 8080      # spark_cluster_master_ui_port
WORKER_UI_PORT = 8081      # spark_cluster_worker_ui_port
DEADLINE = 240.0

# Prints its application id and UI, waits until executors of `hosts` hosts have registered
# (its REST API lists them), sums sum(i * i) over `tasks` tasks of `seconds` each, and prints
# what it did (with the executors it lost on the way).
JOB = """
import json, sys, time, urllib.request
from pyspark.sql import SparkSession
hosts, tasks, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
spark = SparkSession.builder.appName("hopshive-harness-cluster").getOrCreate()
sc = spark.sparkContext
print("STARTED", json.dumps({"app": sc.applicationId, "ui": sc.uiWebUrl}), flush=True)
def executors(which):   # the application's own REST API
    url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/{which}"
    return [e for e in json.load(urllib.request.urlopen(url)) if e["id"] != "driver"]
def executor_hosts():
    return {e["hostPort"].rsplit(":", 1)[0] for e in executors("executors")}
deadline = time.time() + 120
while len(executor_hosts()) < hosts and time.time() < deadline:
    time.sleep(0.5)
print("EXECUTORS", json.dumps(sorted(executor_hosts())), flush=True)
total = sc.parallelize(range(tasks), tasks).map(lambda i: (time.sleep(seconds), i * i)[1]).sum()
lost = [e["hostPort"] for e in executors("allexecutors") if not e["isActive"]]
print("RESULT", json.dumps({"app": sc.applicationId, "master": sc.master, "total": total, "lost": lost}), flush=True)
spark.stop()
"""
JOB_PATH = "/tmp/hopshive-harness-cluster-job.py"


def json_at(url: str):
    """A daemon's JSON answer, or None when it does not answer."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return json.load(response)
    except OSError:
        return None


def master_state(address: str) -> dict | None:
    return json_at(f"http://{address}:{MASTER_UI_PORT}/json/")


def leader(targets) -> tuple[str, dict] | None:
    """(address, /json) of the master that is ALIVE, if one is."""
    for address in targets.spark_masters:
        state = master_state(address)
        if state and state.get("status") == "ALIVE":
            return address, state
    return None


@pytest.fixture(scope="module")
def submitter(targets):
    """The container of the first `spark` host, with the job script in it."""
    if not targets.spark_masters:     # not a failure: the inventory deploys no Spark cluster
        pytest.skip("the inventory has no spark_master hosts (no Spark cluster is deployed; "
                    "inventories/local's default)")
    container = targets.containers.get(targets.group_hosts.get("spark", ""))
    if len(targets.spark_workers) < 2 or container is None or not services.controllable(container):
        services.cannot_control(targets, "needs a Spark master and two or more workers in our cluster containers "
                                         f"(inventories/cluster); got masters {targets.spark_masters}, workers "
                                         f"{targets.spark_workers}, spark host container {container}")
    subprocess.run(["docker", "exec", "-i", container, "sh", "-c", f"cat > {JOB_PATH}"], input=JOB, text=True,
                   check=True, timeout=30)
    return container


class Job:
    """`spark-submit job.py` in a login shell of the container: no flags, the deployed client
    configuration names the masters.  Its stderr (Spark's log) goes to a file, which no
    pipe's limit can stall; its stdout carries the job's tagged lines."""

    def __init__(self, container: str, hosts: int, tasks: int, seconds: float):
        self.log = tempfile.TemporaryFile(mode="w+")
        self.lines: dict = {}
        self.process = subprocess.Popen(["docker", "exec", container, "bash", "-lc",
                                         f"spark-submit {JOB_PATH} {hosts} {tasks} {seconds}"],
                                        stdout=subprocess.PIPE, stderr=self.log, text=True)

    def _keep(self, out: str) -> None:
        self.lines.update({line.split(" ", 1)[0]: json.loads(line.split(" ", 1)[1])
                           for line in out.splitlines() if line.startswith(("STARTED ", "EXECUTORS ", "RESULT "))})

    def _failure(self) -> str:
        self.log.seek(0)
        return f"spark-submit ({self.process.returncode}) printed {self.lines}:\n{self.log.read()[-4000:]}"

    def read_until(self, tag: str) -> dict:
        """The job's ``tag`` line (it prints each one once; the job itself bounds the wait)."""
        for line in self.process.stdout:
            self._keep(line)
            if tag in self.lines:
                return self.lines[tag]
        raise AssertionError(f"the job ended before it printed {tag}: {self._failure()}")

    def finished(self) -> dict:
        self.process.wait(timeout=DEADLINE)     # (stdout is a few lines: it cannot fill the pipe)
        self._keep(self.process.stdout.read())  # after read_until, what its buffer holds too
        assert self.process.returncode == 0 and "RESULT" in self.lines, self._failure()
        return {"executors": self.lines.get("EXECUTORS"), **self.lines["RESULT"]}

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)


def daemon(targets, address: str, name: str) -> services.Service:
    """The Spark ``name`` daemon (master, worker) of the host at ``address``."""
    container = targets.containers.get(address)
    how = services.manager(container) if container else None
    if how is None:
        services.cannot_control(targets, f"cannot control the Spark {name} on {address} (container {container})")
    return services.spark_daemon(name, how, container)


def executor_hosts(state: dict, app: str) -> set[str]:
    """Hosts of the live workers (listed by the master's /json) that ran executors of ``app``."""
    hosts = set()
    for worker in state["workers"]:
        own = json_at(worker["webuiaddress"] + "/json/") if worker["state"] == "ALIVE" else None
        if own and any(e["appid"] == app for e in own["executors"] + own["finishedexecutors"]):
            hosts.add(worker["host"])
    return hosts


def test_job_runs_on_executors_of_two_hosts(submitter, targets):
    result = Job(submitter, hosts=2, tasks=16, seconds=0.1).finished()
    assert result["total"] == sum(i * i for i in range(16)), f"expected {sum(i * i for i in range(16))}, got {result}"
    masters = ",".join(f"{m}:{targets.spark_master_port}" for m in targets.spark_masters)
    assert result["master"] == f"spark://{masters}", f"expected the job on spark://{masters}, got {result['master']}"
    address, state = wait_until(lambda: leader(targets), 30, lambda _: "no master is ALIVE")
    hosts = executor_hosts(state, result["app"])
    assert len(hosts) >= 2, (f"expected executors of {result['app']} on two or more hosts, the workers that "
                             f"{address}'s /json lists show {sorted(hosts)} (the driver saw {result['executors']})")


@pytest.mark.destructive
def test_standby_master_takes_over_a_running_job(submitter, targets):
    if len(targets.spark_masters) < 2:
        services.cannot_control(targets, f"needs two or more Spark masters; got {targets.spark_masters}")
    old, _ = wait_until(lambda: leader(targets), 30, lambda _: "no master is ALIVE before the failure")
    victim = daemon(targets, old, "master")
    job = Job(submitter, hosts=2, tasks=60, seconds=1.0)
    try:
        wait_until(lambda: (leader(targets) or (None, {}))[1].get("activeapps"), 90,
                   lambda _: f"the job never showed up running on the active master {old}")
        victim.crash()       # kill -9; supervisord restarts it: stop it to leave the standby alone
        victim.stop()
        new, state = wait_until(lambda: leader(targets), 120,
                                lambda _: f"no standby became ALIVE after {old} was killed: "
                                          f"{ {m: (master_state(m) or {}).get('status') for m in targets.spark_masters} }")
        assert new != old, f"expected another master than {old} to lead"
        result = job.finished()
    finally:
        job.kill()
        victim.start()
    assert result["total"] == sum(i * i for i in range(60)), f"expected {sum(i * i for i in range(60))}, got {result}"

    def reregistered():
        state = master_state(new) or {}
        apps = [a["id"] for a in state.get("activeapps", []) + state.get("completedapps", [])]
        alive = [w["host"] for w in state.get("workers", []) if w["state"] == "ALIVE"]
        return (result["app"] in apps and len(alive) >= len(targets.spark_workers)), apps, alive
    wait_until(lambda: reregistered()[0], 60,
               lambda _: f"expected {result['app']} and every worker on the new leader {new}, got {reregistered()[1:]}")
    wait_until(lambda: (master_state(old) or {}).get("status") == "STANDBY", 60,
               lambda _: f"the restarted master {old} is not STANDBY: {(master_state(old) or {}).get('status')}")


@pytest.mark.destructive
def test_tasks_of_a_lost_worker_rerun_elsewhere(submitter, targets):
    job = Job(submitter, hosts=2, tasks=60, seconds=1.0)
    victim = None
    try:
        started = job.read_until("STARTED")
        job.read_until("EXECUTORS")

        def progress():   # the running job's tasks, from the driver's REST API
            jobs = json_at(f"{started['ui']}/api/v1/applications/{started['app']}/jobs") or []
            return next(({k: j[k] for k in ("numActiveTasks", "numCompletedTasks")}
                         for j in jobs if j["status"] == "RUNNING"), {})
        # The first wave of tasks done: each executor is running tasks of the second one.
        wait_until(lambda: progress().get("numCompletedTasks", 0) >= 4, 90,
                   lambda _: f"the job's tasks do not run: {progress()}")
        _, state = wait_until(lambda: leader(targets), 30, lambda _: "no master is ALIVE")
        hosts = sorted(executor_hosts(state, started["app"]))
        assert len(hosts) >= 2, f"expected executors of {started['app']} on two workers, got {hosts}"
        victim = daemon(targets, hosts[0], "worker")
        before = progress()
        victim.crash()       # kill -9 of its process group: the worker and its executors
        victim.stop()        # keep it down (supervisord would restart it) until the job is done
        result = job.finished()
    finally:
        job.kill()
        if victim is not None:
            victim.start()
    assert result["total"] == sum(i * i for i in range(60)), f"expected {sum(i * i for i in range(60))}, got {result}"
    assert any(lost.startswith(f"{hosts[0]}:") for lost in result["lost"]), \
        f"expected the driver to lose the executor on {hosts[0]} (killed at {before}), it lost {result['lost']}"
    worker = f"http://{hosts[0]}:{WORKER_UI_PORT}/json/"
    wait_until(lambda: (json_at(worker) or {}).get("masterurl"), 90,
               lambda _: f"the restarted worker on {hosts[0]} has not registered with a master: {json_at(worker)}")
