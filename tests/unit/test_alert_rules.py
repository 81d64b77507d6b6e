"""The alert rules of roles/monitoring, run through `promtool test rules`
(alert_rules_test.yml: each alert fires after its window, not before, not when healthy)
and `promtool check rules`.

promtool ships with Debian's prometheus package, which the monitoring role installs; as
with mariadb-server for the component tests, a missing tool fails the test with what to
install rather than skipping it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

HERE = Path(__file__).parent
RULES = HERE.parent.parent / "roles" / "monitoring" / "files" / "alerts.yml"


@pytest.fixture(scope="module")
def promtool() -> str:
    path = shutil.which("promtool")
    if path is None:
        pytest.fail("promtool not found: install Debian's prometheus package (the monitoring role does)")
    return path


def run(promtool: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([promtool, *args], cwd=HERE, capture_output=True, text=True, timeout=120)


def test_rules_are_valid(promtool):
    checked = run(promtool, "check", "rules", str(RULES))
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_every_alert_fires_in_its_window_and_only_then(promtool):
    tested = run(promtool, "test", "rules", "alert_rules_test.yml")
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_every_alert_has_a_case():
    """A rule added without a promtool case would go untested."""
    alerts = {rule["alert"] for group in yaml.safe_load(RULES.read_text())["groups"] for rule in group["rules"]}
    cases = yaml.safe_load((HERE / "alert_rules_test.yml").read_text())["tests"]
    tested = {case["alertname"] for test in cases for case in test["alert_rule_test"]}
    assert alerts and alerts - tested == set()
