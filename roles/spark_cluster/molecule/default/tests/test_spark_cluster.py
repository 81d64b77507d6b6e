"""spark_cluster and zookeeper on one container: ZooKeeper serves, the master recovers through
it and leads, the worker (with the shuffle service) registered with the configured cores and
memory, the history server answers; then a login shell's plain `spark-submit job.py` (the
spark role's client configuration names the master) runs a PySpark job on the cluster, whose
result, executors (from the master's /json API, then its worker's) and history entry are
checked."""

import json
import shlex

import pytest

testinfra_hosts = ["spark_master"]

MASTER_JSON = "http://127.0.0.1:8080/json/"
HISTORY_APPS = "http://127.0.0.1:18080/api/v1/applications"
DAEMON_CONF = "/etc/spark/cluster/spark-daemons.conf"
CLIENT_CONF = "/etc/hopshive/spark/spark-defaults.conf"
APP_NAME = "hopshive-molecule-job"

# Sums 1..100000 doubled over 8 partitions, and prints what its own REST API (the driver's UI)
# says about its executors while it runs.
JOB = f"""
import json, urllib.request
from pyspark.sql import SparkSession
spark = SparkSession.builder.appName("{APP_NAME}").getOrCreate()
sc = spark.sparkContext
total = sc.parallelize(range(1, 100001), 8).map(lambda x: 2 * x).sum()
url = sc.uiWebUrl + "/api/v1/applications/" + sc.applicationId + "/executors"
executors = [e["hostPort"] for e in json.load(urllib.request.urlopen(url)) if e["id"] != "driver"]
print("RESULT", json.dumps({{"app": sc.applicationId, "master": sc.master, "total": total,
                            "executors": executors}}))
spark.stop()
"""


def get_json(host, url):
    return json.loads(host.check_output(f"curl -sf {shlex.quote(url)}"))


def test_zookeeper_serves(host, node):
    node.assert_running("hopshive-zookeeper")
    answer = host.check_output("""python3 -c 'import socket; s = socket.create_connection(("127.0.0.1", 2181), 3); \
s.sendall(b"srvr"); print(s.recv(4096).decode())'""")
    assert "Mode: standalone" in answer, f"expected a standalone ZooKeeper server, srvr said: {answer}"


@pytest.mark.parametrize("daemon", ["master", "worker", "history"])
def test_daemons_run_as_spark(host, node, daemon):
    service = node.service("hopshive-spark", daemon)
    node.assert_running(service)
    pid = node.pid(service)
    user = host.check_output(f"ps -o user= -p {pid}").strip()
    assert user == "spark", f"expected the {daemon} (pid {pid}) to run as spark, got {user!r}"


def test_daemon_properties_turn_on_recovery_auth_and_shuffle_service(host):
    conf = host.file(DAEMON_CONF)
    assert conf.mode == 0o640 and conf.user == "root" and conf.group == "spark", (
        f"expected {DAEMON_CONF} root:spark 0640 (it holds the secret), got {conf.user}:{conf.group} {oct(conf.mode)}")
    lines = set(conf.content_string.splitlines())
    for line in ("spark.deploy.recoveryMode ZOOKEEPER", "spark.deploy.zookeeper.url 127.0.0.1:2181",
                 "spark.authenticate true", "spark.shuffle.service.enabled true"):
        assert line in lines, f"expected {line!r} in {DAEMON_CONF}, got:\n{conf.content_string}"


def test_master_leads_through_zookeeper_with_the_worker_registered(host):
    state = get_json(host, MASTER_JSON)
    assert state["status"] == "ALIVE", f"expected the master ALIVE, got {state['status']}"
    workers = [w for w in state["workers"] if w["state"] == "ALIVE"]
    assert [(w["cores"], w["memory"]) for w in workers] == [(2, 1024)], (
        f"expected one ALIVE worker with 2 cores and 1024 MiB, got {state['workers']}")
    log = host.file("/var/log/hopshive/spark-master.log").content_string
    assert "Persisting recovery state to ZooKeeper" in log and "elected leader" in log, (
        f"expected the master to recover through ZooKeeper and be elected leader; its log:\n{log[-3000:]}")


def test_worker_runs_the_external_shuffle_service(host):
    log = host.file("/var/log/hopshive/spark-worker.log").content_string
    assert "Starting shuffle service on port 7337 (auth enabled = true)" in log, (
        f"expected the worker's shuffle service on 7337 with authentication; its log:\n{log[-3000:]}")


def test_client_configuration_names_the_master_and_holds_the_secret_privately(host, node):
    group = node.variable("spark_submit_group")
    conf = host.file(CLIENT_CONF)
    lines = set(conf.content_string.splitlines())
    assert "spark.master spark://127.0.0.1:7077" in lines and "spark.authenticate true" in lines, (
        f"expected spark.master and spark.authenticate in {CLIENT_CONF}, got:\n{conf.content_string}")
    assert conf.mode == 0o640 and conf.group == group, (
        f"expected {CLIENT_CONF} root:{group} 0640 (the secret), got {conf.user}:{conf.group} {oct(conf.mode)}")


@pytest.fixture(scope="module")
def job(host):
    """Submits JOB once from a login shell with no flags; its RESULT line, parsed."""
    host.check_output(f"cat > /tmp/hopshive-job.py <<'EOF'\n{JOB}\nEOF")
    done = host.run("bash -lc 'spark-submit /tmp/hopshive-job.py'")
    results = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.rc == 0 and results, f"spark-submit failed (rc={done.rc}):\n{done.stdout}\n{done.stderr[-4000:]}"
    return json.loads(results[0][len("RESULT "):])


def test_job_runs_on_the_cluster_with_the_right_result(job):
    assert job["master"] == "spark://127.0.0.1:7077", f"expected the job on the master, got {job['master']}"
    assert job["total"] == 100000 * 100001, f"expected {100000 * 100001}, got {job['total']}"
    assert job["executors"], f"expected the application's REST API to list executors, got {job}"


def test_master_json_lists_the_application_and_its_executor(host, job):
    state = get_json(host, MASTER_JSON)
    apps = {a["id"]: a for a in state["activeapps"] + state["completedapps"]}
    assert job["app"] in apps and apps[job["app"]]["name"] == APP_NAME, (
        f"expected {job['app']} ({APP_NAME}) in the master's applications, got {list(apps.values())}")
    executors = []
    for worker in state["workers"]:
        worker_state = get_json(host, worker["webuiaddress"] + "/json/")
        executors += [(worker["host"], e) for e in worker_state["executors"] + worker_state["finishedexecutors"]
                      if e["appid"] == job["app"]]
    assert executors, f"expected the workers the master lists to show executors of {job['app']}, got none"


def test_history_server_lists_the_application(host, job, eventually):
    def listed():
        ids = [a["id"] for a in get_json(host, HISTORY_APPS)]
        assert job["app"] in ids, f"expected {job['app']} in the history server's applications, got {ids}"
    eventually(listed, 30)
