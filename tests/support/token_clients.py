"""Hive 2.3's own metastore client (tests/support/jvm/MetastoreTokenClient.java, compiled
against the pyspark jars) run as a Hadoop job with a delegation token runs: the token in a
Hadoop credentials file named by HADOOP_TOKEN_FILE_LOCATION, SASL on, the token's service
as the token signature."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from hopshive.security.tokens import HIVE_KIND, Token, credentials_file

SOURCE = Path(__file__).parent / "jvm" / "MetastoreTokenClient.java"
SIGNATURE = "hopshive-metastore"


def pyspark_jars() -> Path:
    import pyspark
    return Path(pyspark.__file__).parent / "jars"


class JavaMetastoreClient:
    def __init__(self, work: Path):
        self.classes = work / "classes"
        self.classes.mkdir(parents=True, exist_ok=True)
        self.classpath = f"{pyspark_jars()}/*:{self.classes}"
        built = subprocess.run(["javac", "-cp", self.classpath, "-d", str(self.classes), str(SOURCE)],
                               capture_output=True, text=True)
        if built.returncode != 0:
            raise RuntimeError(f"javac failed:\n{built.stdout}{built.stderr}")
        self.work = work

    def token_file(self, token: Token, name: str, signature: str = SIGNATURE) -> Path:
        """A credentials file holding ``token`` as a HIVE_DELEGATION_TOKEN for ``signature``."""
        path = self.work / f"{name}.token"
        path.write_bytes(credentials_file({"hive": token.labelled(HIVE_KIND, signature)}))
        return path

    def run(self, port: int, token_file: Path | None, *actions: str, signature: str = SIGNATURE,
            timeout: float = 120.0, jvm_options: tuple[str, ...] = ()) -> tuple[int, list[str]]:
        """(exit code, the client's output lines).  ``jvm_options``: -D settings of the client
        (see the Java source: hopshive.sasl, hopshive.truststore)."""
        env = {key: value for key, value in os.environ.items() if key != "HADOOP_TOKEN_FILE_LOCATION"}
        if token_file is not None:
            env["HADOOP_TOKEN_FILE_LOCATION"] = str(token_file)
        done = subprocess.run(["java", "-Xmx256m", *jvm_options, "-cp", self.classpath, "MetastoreTokenClient",
                               f"thrift://127.0.0.1:{port}", signature, *actions],
                              capture_output=True, text=True, timeout=timeout, env=env, cwd=self.work)
        lines = [line for line in done.stdout.splitlines() if line.startswith(("databases ", "table ", "token ", "renewed ", "cancelled", "ERROR "))]
        return done.returncode, lines or [done.stdout[-2000:] + done.stderr[-2000:]]
