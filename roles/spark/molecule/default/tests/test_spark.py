"""spark: /etc/hopshive/spark's client configuration (Hive catalog on both metastore
instances, WebHDFS over TLS (swebhdfs, the default) as warehouse and default file system, the
directory-keeping commit protocol from the extension jar, map-join pruning offered commented
out), the protocol compiled into that jar (and no copy of its source left on the host), login shells' SPARK_CONF_DIR and spark-submit, and the files copied
into the listed pyspark package that exists (prepare.yml's stand-in), the missing one skipped."""

import pytest

testinfra_hosts = ["spark"]

CONF_DIR = "/etc/hopshive/spark"
EXTENSION_JAR = "/opt/hopshive/spark-extension/hopshive-spark.jar"
METASTORE_URIS = "thrift://127.0.0.1:9083,thrift://127.0.0.1:9084"


@pytest.mark.parametrize(
    "line",
    [
        "spark.sql.catalogImplementation hive",
        f"spark.hadoop.hive.metastore.uris {METASTORE_URIS}",
        "spark.sql.warehouse.dir swebhdfs://127.0.0.1:9870/user/hive/warehouse",
        "spark.hadoop.fs.defaultFS swebhdfs://127.0.0.1:9870",
        "spark.sql.sources.commitProtocolClass io.hopshive.spark.KeepDirectoriesCommitProtocol",
        f"spark.driver.extraClassPath {EXTENSION_JAR}",
        "# spark.hopshive.mapJoinPruning.enabled true",
    ],
)
def test_spark_defaults_line(host, line):
    text = host.file(f"{CONF_DIR}/spark-defaults.conf").content_string
    assert line in text.splitlines(), f"expected the line {line!r}, got spark-defaults.conf:\n{text}"


def test_extension_jar_holds_the_compiled_protocol(host):
    entries = host.check_output(f"jar tf {EXTENSION_JAR}").splitlines()
    protocol = "io/hopshive/spark/KeepDirectoriesCommitProtocol.class"
    assert protocol in entries, f"expected {protocol}, got jar contents: {entries}"
    # Compiled once on the play's first host from an archive in a temporary directory.
    assert host.file("/opt/hopshive/spark-extension").listdir() == ["hopshive-spark.jar"]


def test_login_shell_runs_the_deployed_spark(host):
    result = host.run("bash -lc 'spark-submit --version'")
    assert result.rc == 0 and "version 4.3.0" in result.stderr, (
        f"expected version 4.3.0, spark-submit --version said (rc={result.rc}): {result.stderr}"
    )


def test_hive_site_names_both_metastore_instances(host):
    text = host.file(f"{CONF_DIR}/hive-site.xml").content_string
    expected = f"<value>{METASTORE_URIS}</value>"
    assert expected in text, f"expected {expected}, got hive-site.xml:\n{text}"


def test_login_shell_gets_the_client_configuration(host):
    conf_dir = host.check_output("bash -lc 'echo \"$SPARK_CONF_DIR\"'")
    assert conf_dir == CONF_DIR, f"expected SPARK_CONF_DIR={CONF_DIR}, got {conf_dir!r}"


@pytest.mark.parametrize("name", ["spark-defaults.conf", "hive-site.xml", "core-site.xml"])
def test_existing_pyspark_package_gets_the_file(host, name):
    path = f"/opt/pyspark-standin/pyspark/conf/{name}"
    assert host.file(path).exists, f"expected {path}, got no such file"


def test_missing_pyspark_package_is_skipped(host):
    path = "/opt/no-such-venv/pyspark/conf"
    assert not host.file(path).exists, f"expected nothing at {path} (no pyspark package there), got a file"
