"""TRANSFORM refused by HopsHive's SQL extension (#24): a script runs as the engine's OS
account, outside the session user's identity.  Refused anywhere in a statement, whatever a
session SETs; allowed only in an engine started with spark.hopshive.scriptTransform.enabled."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from tests.support.spark_extension import EXTENSIONS, build_jar

STATEMENTS = {
    "top": "SELECT TRANSFORM(1) USING 'echo ran' AS (x STRING)",
    "from-subquery": "SELECT * FROM (SELECT TRANSFORM(id) USING 'cat' AS (x STRING) FROM range(1)) t",
    "in-expression": "SELECT 1 WHERE EXISTS (SELECT TRANSFORM(1) USING 'cat' AS (x STRING))",
    "view": "SELECT * FROM script_view",
}
PROBE = textwrap.dedent("""
    import json, sys
    from pyspark.sql import SparkSession
    statements, jar = json.loads(sys.argv[1]), sys.argv[2]
    answers = {}
    for enabled in ("false", "true"):
        spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
                 .config("spark.sql.extensions", "%s").config("spark.driver.extraClassPath", jar)
                 .config("spark.hopshive.scriptTransform.enabled", enabled).getOrCreate())
        spark.sql("SET spark.hopshive.scriptTransform.enabled=true")     # a session's SET changes nothing
        if enabled == "true":
            spark.sql("CREATE OR REPLACE TEMPORARY VIEW script_view AS "
                      "SELECT TRANSFORM(1) USING 'cat' AS (x STRING)")
        for name, sql in statements.items():
            try:
                answers[f"{enabled}/{name}"] = [list(row) for row in spark.sql(sql).collect()]
            except Exception as exc:
                answers[f"{enabled}/{name}"] = "ERROR " + str(exc).splitlines()[0]
        spark.stop()
    print("ANSWERS " + json.dumps(answers))
""" % EXTENSIONS)


def test_transform_is_refused_unless_the_engine_allows_it(tmp_path):
    jar = build_jar(tmp_path / "extension")
    conf = tmp_path / "conf"
    conf.mkdir()
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(STATEMENTS), str(jar)], capture_output=True,
                          text=True, timeout=300, env=dict(os.environ, SPARK_CONF_DIR=str(conf)))
    lines = [line for line in done.stdout.splitlines() if line.startswith("ANSWERS ")]
    assert done.returncode == 0 and lines, done.stderr[-4000:]
    answers = json.loads(lines[0][len("ANSWERS "):])
    for name in ("top", "from-subquery", "in-expression"):
        refused = answers[f"false/{name}"]
        assert isinstance(refused, str) and "FEATURE_NOT_ENABLED" in refused and "TRANSFORM" in refused, answers
    # The view over a script, made in the engine that allows it, is refused in none other:
    # there is no such view in the first engine, and in the second it runs.
    assert answers["true/top"] == [["ran"]] and answers["true/from-subquery"] == [["0"]], answers
    assert answers["true/in-expression"] == [[1]] and answers["true/view"] == [["1"]], answers
