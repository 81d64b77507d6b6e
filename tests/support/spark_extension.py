"""HopsHive's Spark commit protocol (services/spark/), built for the pyspark the tests run,
for sessions that do not read the deployed client configuration (roles/spark builds and
configures it there)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2] / "services" / "spark"
PROTOCOL = "io.hopshive.spark.KeepDirectoriesCommitProtocol"


def build_jar(work: Path) -> Path:
    """Compile the protocol against this interpreter's pyspark jars; returns the jar."""
    import pyspark

    javac, jar_tool = shutil.which("javac"), shutil.which("jar")
    if not (javac and jar_tool):
        raise RuntimeError("javac and jar are needed to build the Spark commit protocol: install a JDK "
                           "(./scripts/deploy installs openjdk-17-jdk-headless with the spark role)")
    classes, jar = work / "classes", work / "hopshive-spark.jar"
    classes.mkdir(parents=True, exist_ok=True)
    spark_jars = Path(pyspark.__file__).parent / "jars"
    subprocess.run([javac, "-Xlint:all,-path", "-Werror", "-d", str(classes), "-cp", f"{spark_jars}/*",
                    *map(str, sorted(SOURCE.rglob("*.java")))], check=True, capture_output=True, text=True)
    subprocess.run([jar_tool, "cf", str(jar), "-C", str(classes), "."], check=True, capture_output=True)
    return jar


def session_args(jar: Path) -> list[str]:
    """SparkProcess arguments that make a session use the protocol."""
    return ["--conf", f"spark.sql.sources.commitProtocolClass={PROTOCOL}",
            "--conf", f"spark.driver.extraClassPath={jar}", "--conf", f"spark.executor.extraClassPath={jar}"]
