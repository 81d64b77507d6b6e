"""HopsHive's Spark commit protocol (services/spark/), built for the pyspark the tests run,
for sessions that do not read the deployed client configuration (roles/spark builds and
configures it there)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2] / "services" / "spark"
PROTOCOL = "io.hopshive.spark.KeepDirectoriesCommitProtocol"
EXTENSIONS = "io.hopshive.spark.HopsHiveExtensions"


def build_jar(work: Path) -> Path:
    """The protocol and extensions compiled against this interpreter's pyspark
    (services/spark/build-jar, the script roles/spark runs on each host); returns the jar.
    Built once per content of the sources and pyspark version (scalac takes ~40 s) and kept
    in the system's temporary directory for every later test module and run."""
    import pyspark

    digest = hashlib.sha256(pyspark.__version__.encode())
    for source in sorted(SOURCE.rglob("*")):
        if source.is_file():
            digest.update(str(source.relative_to(SOURCE)).encode() + b"\0" + source.read_bytes())
    cached = Path(tempfile.gettempdir()) / f"hopshive-spark-{digest.hexdigest()[:16]}.jar"
    if not cached.exists():
        work.mkdir(parents=True, exist_ok=True)
        jar = work / "hopshive-spark.jar"
        built = subprocess.run(["sh", str(SOURCE / "build-jar"), str(Path(pyspark.__file__).parent), str(jar)],
                               capture_output=True, text=True)
        if built.returncode != 0:
            raise RuntimeError(f"building the Spark commit protocol failed:\n{built.stdout}{built.stderr}")
        partial = cached.with_suffix(f".{os.getpid()}.tmp")
        shutil.copyfile(jar, partial)
        partial.replace(cached)    # atomic: a concurrent run sees the whole jar or none
    return cached


def session_args(jar: Path) -> list[str]:
    """SparkProcess arguments that make a session use the protocol and the extensions."""
    return ["--conf", f"spark.sql.sources.commitProtocolClass={PROTOCOL}", "--conf", f"spark.sql.extensions={EXTENSIONS}",
            "--conf", f"spark.driver.extraClassPath={jar}", "--conf", f"spark.executor.extraClassPath={jar}"]
