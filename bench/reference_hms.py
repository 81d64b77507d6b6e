"""The reference Hive Metastore: Apache HMS 2.3.10 started from the jars in the pyspark wheel.

It keeps its metadata in its own MariaDB schema (``hive_ref`` by default, created and dropped
here, reached by a throw-away user) with direct SQL on, as measured in
/work/shared/notes/facts.md. Use it as a context manager::

    with ReferenceMetastore(port=9184) as ref:
        ...  # Thrift on ref.address

or run it in the foreground for development: ``python bench/reference_hms.py --port 9184``.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from xml.sax.saxutils import escape

import pymysql

MARIADB_JAR = Path("/usr/share/java/mariadb-java-client.jar")
DEFAULT_SOCKET = "/run/mysqld/mysqld.sock"
START_DEADLINE = 120.0
STOP_GRACE = 20.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def pyspark_jars() -> Path:
    try:
        import pyspark
    except ImportError as exc:
        raise RuntimeError("pyspark is not importable: the reference HMS runs from its jars "
                           "(pip install pyspark==4.3.0 into this interpreter)") from exc
    jars = Path(pyspark.__file__).parent / "jars"
    if not any(jars.glob("hive-metastore-2.3.*.jar")):
        raise RuntimeError(f"no hive-metastore-2.3.*.jar under {jars}")
    return jars


def hive_site(jdbc_url: str, user: str, password: str, warehouse: str) -> str:
    """hive-site.xml for HMS 2.3.10 on MariaDB. Each setting is one facts.md needed."""
    props = {
        "javax.jdo.option.ConnectionURL": jdbc_url,
        "javax.jdo.option.ConnectionDriverName": "org.mariadb.jdbc.Driver",
        "javax.jdo.option.ConnectionUserName": user,
        "javax.jdo.option.ConnectionPassword": password,
        "datanucleus.schema.autoCreateAll": "true",
        "hive.metastore.schema.verification": "false",
        "hive.metastore.warehouse.dir": warehouse,
        "hive.metastore.event.db.notification.api.auth": "false",
        # Without it: NoClassDefFoundError com/lmax/disruptor (not in the pyspark jars).
        "hive.async.log.enabled": "false",
        # Without it: BoneCP NoClassDefFoundError on DROP DATABASE.
        "datanucleus.connectionPoolingType": "HikariCP",
    }
    body = "\n".join(f"  <property><name>{escape(k)}</name><value>{escape(v)}</value></property>"
                     for k, v in props.items())
    return f'<?xml version="1.0"?>\n<configuration>\n{body}\n</configuration>\n'


class ReferenceMetastore:
    """Apache HMS 2.3.10 on ``127.0.0.1:port`` with its own MariaDB schema and warehouse.

    Args:
        port: Thrift port; a free one when None.
        schema: MariaDB schema for the metastore tables; dropped and recreated on start,
            dropped on stop unless ``keep``.
        workdir: conf dir, warehouse and JVM log; a temporary directory when None.
        mysql_socket: root's unix socket, used only to create/drop the schema and user.
        mysql_port: the TCP port the JVM's JDBC driver connects to.
        heap: the JVM's -Xmx.
        keep: keep the schema, user and workdir after stop (for post-mortems).
    """

    def __init__(self, port: int | None = None, schema: str = "hive_ref", workdir: str | None = None,
                 mysql_socket: str = DEFAULT_SOCKET, mysql_port: int = 3306, heap: str = "1g",
                 keep: bool = False):
        self.port = port or free_port()
        self.schema = schema
        self.user = f"{schema}_user"
        self.password = secrets.token_hex(12)
        self.mysql_socket = mysql_socket
        self.mysql_port = mysql_port
        self.heap = heap
        self.keep = keep
        self._own_workdir = workdir is None
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="hms-ref-"))
        self.conf_dir = self.workdir / "conf"
        self.log_path = self.workdir / "hms.log"      # log4j (the metastore's own log)
        self.out_path = self.workdir / "jvm.out"      # JVM stdout/stderr
        self.warehouse = f"file://{self.workdir / 'warehouse'}"
        self.process: subprocess.Popen | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _root(self):
        return pymysql.connect(unix_socket=self.mysql_socket, user="root", autocommit=True)

    def _create_schema(self) -> None:
        with self._root() as conn, conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS `{self.schema}`")
            # latin1 as Hive's MySQL guide says: with utf8mb4 DataNucleus fails to create SD_PARAMS
            # ("Column length too big for column 'PARAM_VALUE'") and logs it instead of failing.
            cur.execute(f"CREATE DATABASE `{self.schema}` CHARACTER SET latin1 COLLATE latin1_bin")
            for host in ("127.0.0.1", "localhost"):
                cur.execute(f"CREATE OR REPLACE USER '{self.user}'@'{host}' IDENTIFIED BY %s", (self.password,))
                cur.execute(f"GRANT ALL ON `{self.schema}`.* TO '{self.user}'@'{host}'")

    def _drop_schema(self) -> None:
        with self._root() as conn, conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS `{self.schema}`")
            for host in ("127.0.0.1", "localhost"):
                cur.execute(f"DROP USER IF EXISTS '{self.user}'@'{host}'")

    def log_tail(self, chars: int = 3000) -> str:
        tails = []
        for path in (self.out_path, self.log_path):
            try:
                tails.append(f"--- {path}\n{path.read_text(errors='replace')[-chars:]}")
            except FileNotFoundError:
                tails.append(f"--- {path}: (none)")
        return "\n".join(tails)

    def uses_direct_sql(self) -> bool:
        """True once the log shows DirectSQL on (it is logged at the first metastore call)."""
        try:
            return "Using direct SQL" in self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return False

    def log_findings(self) -> str:
        """What in the log makes numbers suspect: ORM fallbacks (direct SQL failed for a call)
        and OutOfMemoryErrors, as text for the report ('' when none)."""
        try:
            text = self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""
        found = {"fell back from direct SQL to ORM": text.count("Falling back to ORM path"),
                 "java.lang.OutOfMemoryError": text.count("java.lang.OutOfMemoryError")}
        return "".join(f"; **{n}× {what}** (see {self.log_path})" for what, n in found.items() if n)

    def command(self) -> list[str]:
        classpath = os.pathsep.join([str(self.conf_dir), f"{pyspark_jars()}/*", str(MARIADB_JAR)])
        return ["java", f"-Xmx{self.heap}", f"-Dhive.log.dir={self.workdir}", "-Dhive.log.file=hms.log",
                "-cp", classpath,
                "org.apache.hadoop.hive.metastore.HiveMetaStore", "-p", str(self.port)]

    def start(self) -> "ReferenceMetastore":
        if not MARIADB_JAR.exists():
            raise RuntimeError(f"{MARIADB_JAR} missing: apt-get install libmariadb-java")
        if not shutil.which("java"):
            raise RuntimeError("java not on PATH: HMS 2.3.10 needs a JRE (17 works)")
        if port_open("127.0.0.1", self.port):
            raise RuntimeError(f"port {self.port} is already in use; pick another with --port")
        self._create_schema()
        self.conf_dir.mkdir(parents=True, exist_ok=True)
        jdbc_url = f"jdbc:mariadb://127.0.0.1:{self.mysql_port}/{self.schema}?useMysqlMetadata=true"
        (self.conf_dir / "hive-site.xml").write_text(
            hive_site(jdbc_url, self.user, self.password, self.warehouse))
        with open(self.out_path, "ab") as log:
            self.process = subprocess.Popen(self.command(), cwd=self.workdir, stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + START_DEADLINE
        while not port_open("127.0.0.1", self.port):
            if self.process.poll() is not None:
                raise RuntimeError(f"reference HMS exited with {self.process.returncode}; "
                                   f"log tails:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"reference HMS not listening on {self.address} after "
                                   f"{START_DEADLINE:.0f}s; log tail:\n{self.log_tail()}")
            time.sleep(0.1)
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(STOP_GRACE)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(STOP_GRACE)
        if not self.keep:
            self._drop_schema()
            if self._own_workdir:
                shutil.rmtree(self.workdir / "warehouse", ignore_errors=True)
                if self.log_findings():
                    print(f"reference HMS: kept {self.workdir} for its logs{self.log_findings()}",
                          file=sys.stderr)
                else:
                    shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> "ReferenceMetastore":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run Apache HMS 2.3.10 (pyspark jars) on MariaDB "
                                                 "in the foreground until Ctrl-C.")
    parser.add_argument("--port", type=int, default=9184,
                        help="Thrift port (default %(default)s; 9083/9084 are the deployed metastores)")
    parser.add_argument("--schema", default="hive_ref", help="MariaDB schema (dropped on start)")
    parser.add_argument("--workdir", help="conf/warehouse/log directory (default: a temp dir)")
    parser.add_argument("--mysql-socket", default=DEFAULT_SOCKET)
    parser.add_argument("--mysql-port", type=int, default=3306)
    parser.add_argument("--keep", action="store_true", help="keep schema and workdir on exit")
    args = parser.parse_args(argv)
    ref = ReferenceMetastore(port=args.port, schema=args.schema, workdir=args.workdir,
                             mysql_socket=args.mysql_socket, mysql_port=args.mysql_port, keep=args.keep)
    stop = False

    def on_signal(*_):
        nonlocal stop
        stop = True
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    with ref:
        print(f"reference HMS 2.3.10 on {ref.address}, schema {ref.schema}, warehouse {ref.warehouse}, "
              f"log {ref.log_path}", flush=True)
        while not stop and ref.process.poll() is None:
            time.sleep(0.5)
    return 0 if stop else 1


if __name__ == "__main__":
    sys.exit(main())
