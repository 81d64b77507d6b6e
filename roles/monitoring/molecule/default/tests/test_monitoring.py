"""monitoring: the daemons run as prometheus, Prometheus scrapes the jobs
of the inventory with the exporters up (mysqld_exporter logged in with its status-only
account), the rules are loaded, and services that are not deployed in this scenario are
reported down, alerted on and written to the alert log through Alertmanager."""

import json
from urllib.parse import quote

import pytest

testinfra_hosts = ["monitoring"]

PROMETHEUS = "http://127.0.0.1:9089"
ALERTMANAGER = "http://127.0.0.1:9093"
ALERT_LOG = "/var/log/prometheus/alerts.log"
DAEMONS = ["prometheus", "prometheus-alertmanager", "hopshive-alert-log", "prometheus-blackbox-exporter",
           "prometheus-node-exporter", "prometheus-mysqld-exporter"]
JOBS = {"prometheus", "alertmanager", "node", "mysqld", "namenode", "metastore", "cleaner", "server2", "platform",
        "hbase", "hbase-server"}
UP = {"prometheus", "alertmanager", "node", "mysqld", "hbase"}   # what runs here (hbase: the prober)


def api(node, path):
    """The `data` of a Prometheus HTTP API answer (path after /api/v1/)."""
    response = node.http(f"{PROMETHEUS}/api/v1/{path}")
    assert response.status == 200, f"{path}: {response}"
    return response.json()["data"]


def query(node, promql):
    """The result of an instant query."""
    return api(node, f"query?query={quote(promql)}")["result"]


@pytest.mark.parametrize("daemon", DAEMONS)
def test_daemon_runs_as_prometheus(node, daemon):
    node.assert_running(daemon)
    pid = node.pid(daemon)
    assert node.host.check_output(f"ps -o user= -p {pid}").strip() == "prometheus"


def test_prometheus_and_alertmanager_are_ready(node):
    assert node.http(f"{PROMETHEUS}/-/ready").status == 200
    assert node.http(f"{ALERTMANAGER}/-/ready").status == 200


def test_every_job_of_the_inventory_is_scraped_and_the_exporters_are_up(node, eventually):
    def check():
        targets = api(node, "targets")["activeTargets"]
        health = {}
        for target in targets:
            health.setdefault(target["labels"]["job"], set()).add(target["health"])
        assert set(health) == JOBS, f"jobs scraped: {sorted(health)}"
        assert {job for job in UP if health[job] != {"up"}} == set(), health
        assert {job for job in JOBS - UP if health[job] != {"down"}} == set(), health
        return targets
    targets = eventually(check, seconds=60)
    cleaners = sorted(t["labels"]["instance"] for t in targets if t["labels"]["job"] == "cleaner")
    assert cleaners == ["127.0.0.1:9190", "127.0.0.1:9191"]


def test_the_metrics_the_rules_use_come_from_the_exporters(node, eventually):
    names = ["mysql_up", "mysql_global_status_threads_connected", "mysql_global_variables_max_connections",
             "node_filesystem_avail_bytes", "node_filesystem_size_bytes"]
    def check():
        present = {name: bool(query(node, name)) for name in names}
        assert all(present.values()), present
    eventually(check, seconds=60)
    assert float(query(node, "mysql_up")[0]["value"][1]) == 1


def test_the_hbase_thrift_port_is_probed(node, eventually):
    """No HBase Thrift server runs here: blackbox_exporter answers, and its probe fails."""
    def check():
        result = query(node, 'probe_success{job="hbase"}')
        assert [(r["metric"]["instance"], r["value"][1]) for r in result] == [("127.0.0.1:9090", "0")], result
    eventually(check, seconds=60)


def test_the_exporter_account_may_read_status_only(node):
    grants = [row[0] for row in node.sql("SHOW GRANTS FOR 'hops_exporter'@'localhost'")]
    assert len(grants) == 1 and grants[0].startswith("GRANT PROCESS, SLAVE MONITOR ON *.* TO"), grants


def test_the_rules_are_loaded_with_the_inventorys_galera_size(node):
    groups = api(node, "rules")["groups"]
    alerts = {rule["name"] for group in groups for rule in group["rules"] if rule["type"] == "alerting"}
    assert {"GaleraNodeNotSynced", "GaleraClusterTooSmall", "HopsHiveInstanceDown", "NoCleanerLeader",
            "CleanerLagHigh", "HBaseThriftDown", "UnderReplicatedBlocks", "MissingBlocks", "DiskAlmostFull",
            "MariaDBConnectionsNearLimit", "Server2QueriesFailing"} <= alerts
    assert float(query(node, "hopshive:galera_expected_size")[0]["value"][1]) == 1


def test_services_that_are_down_fire_and_reach_the_alert_log(node, eventually):
    """Nothing but the monitoring stack and MariaDB runs here: after 1 minute the namenode,
    metastore and cleaner targets are down alerts, and with no cleaner nobody leads."""
    def check():
        firing = {(a["labels"]["alertname"], a["labels"].get("job", "")) for a in api(node, "alerts")["alerts"]
                  if a["state"] == "firing"}
        assert {("HopsHiveInstanceDown", "namenode"), ("HopsHiveInstanceDown", "metastore"),
                ("HopsHiveInstanceDown", "cleaner"), ("NoCleanerLeader", ""), ("HBaseThriftDown", "hbase")} <= firing, \
            firing
    eventually(check, seconds=150, interval=5)

    def logged():
        lines = node.host.file(ALERT_LOG).content_string.splitlines() if node.host.file(ALERT_LOG).exists else []
        names = {alert["labels"]["alertname"] for line in lines for alert in json.loads(line)["alerts"]}
        assert {"HopsHiveInstanceDown", "NoCleanerLeader"} <= names, names
    eventually(logged, seconds=90, interval=5)


def test_the_status_page_shows_what_runs_and_what_does_not(node, eventually):
    """/consoles/hopshive.html as Prometheus serves it here (tested in a browser by
    tests/component/test_status_page.py)."""
    def check():
        page = node.http(f"{PROMETHEUS}/consoles/hopshive.html")
        assert page.status == 200 and "<title>HopsHive</title>" in page.body, page
        assert 'class="up" data-job="mysqld"' in page.body and 'class="down" data-job="namenode"' in page.body
        assert "running (no Galera)" in page.body and 'id="cleaner-leader">none' in page.body
    eventually(check, seconds=60)
