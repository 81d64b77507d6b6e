"""server2: the service runs, the account users' SQL runs under cannot read
the platform's configuration (a database password), and a project member's beeline session
(SASL PLAIN) runs as <project>__<username>.  The platform scenario's tests run first
(molecule.yml: server2 depends on the platform API, the same converge deployed it)."""

import shlex

testinfra_hosts = ["server2"]

PROJECT = "s2verify"


def test_service_runs(node):
    node.assert_running("hopshive-server2")


def test_sql_account_cannot_read_the_platform_configuration(host):
    result = host.run("runuser -u hopshive-sql -- cat /etc/hopshive/platform.yml")
    assert result.rc != 0, f"expected a refusal, got rc={result.rc} (the account can read the file)"


def test_session_runs_as_the_project_user(node, platform_admin):
    pyspark = node.tool("python", "-c", "import os, pyspark; print(os.path.dirname(pyspark.__file__))")
    beeline = [
        f"{pyspark}/bin/beeline", "-u", f"jdbc:hive2://127.0.0.1:10000/{PROJECT}",
        "-n", platform_admin.email, "-p", platform_admin.password,
        "--silent=true", "--outputformat=tsv2", "--showHeader=false", "-e", "SELECT current_user()",
    ]
    with node.platform_project(PROJECT, owner=platform_admin.email):
        result = node.host.run(shlex.join(beeline))
    # beeline echoes its prompt too: look for the user among the words.
    assert result.rc == 0 and f"{PROJECT}__admin" in result.stdout.split(), (
        f"expected {PROJECT}__admin, got rc={result.rc}: {result.stdout} {result.stderr}"
    )
