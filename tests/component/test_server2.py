"""hopshive-server2 with clients nobody here wrote (PyHive, beeline from the pyspark jars)
against the real platform API, metastore and namenode: the HopsWorks authenticator, one
Spark engine per project user, and storage-based authorization between projects."""

from __future__ import annotations

import decimal
import os
import socket
import ssl
import struct
import subprocess
import sys
import threading
import time

import pytest
import requests
from pyhive import hive

from tests.support.platform_fixtures import platform_stack  # noqa: F401 (fixture)
from tests.support.polling import wait_until
from tests.support.prometheus import moved, scrape_url, total
from tests.support.server2 import Server2Process, add_owners, beeline as run_beeline

pytestmark = [pytest.mark.server2, pytest.mark.spark]
PASSWORD = "server2-test-password"   # beeline splits -p at spaces
ANN, BOB = "ann@example.org", "bob@example.org"


@pytest.fixture(scope="module")
def server2(platform_stack):
    platform = platform_stack["platform"]
    add_owners(platform, PASSWORD, {ANN: "alpha", BOB: "beta"})
    added = platform.cli("user", "add", "--email", "tfa@example.org", "--password-stdin", "--two-factor",
                         stdin=PASSWORD + "\n")
    assert added.returncode == 0, added.stderr
    added = platform.cli("user", "add", "--email", "blocked@example.org", "--password-stdin", stdin=PASSWORD + "\n")
    assert added.returncode == 0, added.stderr
    assert platform.cli("project", "add-member", "alpha", "blocked@example.org", "--role", "Data scientist").returncode == 0
    assert platform.cli("user", "block", "blocked@example.org").returncode == 0
    server = Server2Process(platform_stack["base"] / "server2", platform.url, platform_stack["metastore"].port,
                            platform_stack["namenode"].address, max_engines=10, login_cache_seconds=20).start()
    yield server
    code = server.stop(60)
    assert code == 0, server.log_tail()


def connect(server, email: str = ANN, password: str = PASSWORD, database: str = "alpha"):
    return hive.connect(host="127.0.0.1", port=server.port, username=email, password=password, auth="CUSTOM",
                        database=database)


def query(conn, sql: str) -> list:
    cursor = conn.cursor()
    cursor.execute(sql)
    return cursor.fetchall() if cursor.description else []


def test_session_runs_as_the_project_user(server2):
    with connect(server2) as conn:
        assert query(conn, "SELECT current_user(), current_database()") == [("alpha__ann", "alpha")]


def test_tables_in_own_project_and_file_owner(server2, platform_stack):
    with connect(server2) as conn:
        query(conn, "CREATE TABLE t1 (id INT, name STRING) STORED AS PARQUET")
        query(conn, "INSERT INTO t1 VALUES (1, 'a'), (2, NULL)")
        assert query(conn, "SELECT id, name FROM t1 ORDER BY id") == [(1, "a"), (2, None)]
        cursor = conn.cursor()
        cursor.execute("SELECT array(1, 2), map('k', 1), named_struct('a', 1), CAST(1.5 AS DECIMAL(4,2))")
        assert cursor.fetchall() == [("[1,2]", '{"k":1}', '{"a":1}', decimal.Decimal("1.50"))]
    nn = platform_stack["namenode"]
    listing = requests.get(f"{nn.url}/webhdfs/v1/user/hive/warehouse/alpha.db/t1",
                           params={"op": "LISTSTATUS", "user.name": "hdfs"}, timeout=30).json()
    owners = {s["owner"] for s in listing["FileStatuses"]["FileStatus"]}
    assert owners == {"alpha__ann"}


def test_projects_cannot_touch_each_other(server2):
    with connect(server2, BOB, database="beta") as bob:
        query(bob, "CREATE TABLE secret (x INT)")
        query(bob, "INSERT INTO secret VALUES (42)")
        assert query(bob, "SELECT x FROM secret") == [(42,)]
    with connect(server2) as ann:
        for sql in ("SELECT * FROM beta.secret", "INSERT INTO beta.secret VALUES (1)", "DROP TABLE beta.secret",
                    "CREATE TABLE beta.intruder (x INT)"):
            with pytest.raises(hive.OperationalError) as refused:
                query(ann, sql)
            assert "ermission denied" in str(refused.value) or "AccessControl" in str(refused.value), sql
    with connect(server2, BOB, database="beta") as bob:
        assert query(bob, "SELECT x FROM secret") == [(42,)]


ARROW_TYPED = ", ".join(f"IF(id % 7 = 3, NULL, {expression}) AS c{number}" for number, expression in enumerate((
    "id % 2 = 0", "CAST(id % 100 AS TINYINT)", "CAST(id AS SMALLINT)", "CAST(id AS INT)", "id",
    "CAST(id / 3 AS FLOAT)", "CAST(id AS DOUBLE) / 7", "CAST(id AS STRING)", "CAST(CAST(id AS STRING) AS BINARY)",
    "CAST(id / 100 AS DECIMAL(10,2))", "DATE_ADD(DATE'2024-01-01', CAST(id AS INT))",
    "TIMESTAMP_MICROS(id * 1000123)", "CAST(TIMESTAMP_MICROS(id * 1000123) AS TIMESTAMP_NTZ)")))


def test_arrow_and_row_paths_give_the_same_values(server2):
    """Columns of the types fetched as Arrow batches, then the same query with an array column
    (which sends it down the row path): same values and NULLs, with fetches of 7,777 rows
    across Arrow batches (10,000 rows) and partitions (3)."""
    sql = f"SELECT {ARROW_TYPED} FROM range(0, 25000, 1, 3)"
    with connect(server2) as conn:
        cursor = conn.cursor()
        cursor.arraysize = 7777
        cursor.execute(sql)
        arrow = cursor.fetchall()
        cursor.execute(sql.replace(" FROM ", ", array(1) AS forces_rows FROM "))
        rows = [row[:-1] for row in cursor.fetchall()]
    assert len(arrow) == 25000
    assert arrow[3] == (None,) * 13 and arrow[:3] == rows[:3]
    assert arrow == rows


@pytest.mark.parametrize("email, password, database, words", [
    (ANN, "wrong password!", "alpha", "wrong e-mail or password"),
    ("nobody@example.org", PASSWORD, "alpha", "wrong e-mail or password"),
    ("tfa@example.org", PASSWORD, "alpha", "two-factor"),
    ("blocked@example.org", PASSWORD, "alpha", "blocked"),
    (ANN, PASSWORD, "beta", "not a member of project"),
])
def test_refused_logins_open_no_session(server2, email, password, database, words):
    with pytest.raises(Exception) as refused:
        connect(server2, email, password, database)
    assert words in str(refused.value)


def test_a_login_is_reused_only_for_its_cache_time(server2, platform_stack):
    """A reconnect within login_cache_seconds (20 here) skips the platform login, so a block
    reaches new connections only when that time has passed; a wrong password never hits it.
    (The timed part starts once kit's engine runs: starting one can outlast the cache time.)"""
    platform = platform_stack["platform"]
    assert platform.cli("user", "add", "--email", "kit@example.org", "--password-stdin",
                        stdin=PASSWORD + "\n").returncode == 0
    assert platform.cli("project", "add-member", "alpha", "kit@example.org", "--role", "Data scientist").returncode == 0
    started = time.monotonic()
    connect(server2, "kit@example.org").close()     # starts kit's engine: on a loaded host longer than 20 s
    time.sleep(max(0.0, 21 - (time.monotonic() - started)))
    connect(server2, "kit@example.org").close()     # a fresh login, remembered from now on
    assert platform.cli("user", "block", "kit@example.org").returncode == 0
    with pytest.raises(Exception, match="wrong e-mail or password"):
        connect(server2, "kit@example.org", "not the password")
    connect(server2, "kit@example.org").close()      # remembered: the block is not seen yet

    def refused() -> str | None:
        try:
            connect(server2, "kit@example.org").close()
        except Exception as exc:        # noqa: BLE001 -- the refusal is what we wait for
            return str(exc)
        return None
    assert "blocked" in wait_until(refused, 60, lambda _: "still logged in after the cache time")


def test_pyhive_nosasl_sends_no_password_and_is_told_so(server2):
    """PyHive's NOSASL mode refuses a password, so it can never log in here: the refusal
    says what is missing (auth='CUSTOM' is PyHive's way to send one)."""
    with pytest.raises(Exception) as refused:
        hive.connect(host="127.0.0.1", port=server2.port, username=ANN, auth="NOSASL", database="alpha")
    assert "an e-mail address and a password are required" in str(refused.value)


def test_errors_carry_sqlstate_and_no_stack_trace(server2):
    with connect(server2) as conn:
        with pytest.raises(hive.OperationalError) as failed:
            query(conn, "SELECT * FROM no_such_table")
    status = failed.value.args[0].status
    assert status.sqlState == "42P01" and "TABLE_OR_VIEW_NOT_FOUND" in status.errorMessage
    assert "\tat " not in status.errorMessage
    with connect(server2) as conn:          # a JVM exception PySpark does not convert: its message alone
        with pytest.raises(hive.OperationalError) as failed:
            query(conn, f"INSERT OVERWRITE DIRECTORY 'webhdfs://{server2.namenode_address}/Projects/beta/x'"
                        " USING parquet SELECT 1")
    message = failed.value.args[0].status.errorMessage
    assert message.startswith("org.apache.hadoop.security.AccessControlException: Permission denied: user=alpha__ann")
    assert "\tat " not in message and "calling o" not in message, message


def operation_status(cursor):
    """GetOperationStatus with the progress report (PyHive itself never asks for it)."""
    from TCLIService import ttypes as pyhive_types
    request = pyhive_types.TGetOperationStatusReq(operationHandle=cursor._operationHandle, getProgressUpdate=True)
    return cursor._connection.client.GetOperationStatus(request)


def running_tasks(cursor) -> int:
    return sum(int(row[5]) for row in operation_status(cursor).progressUpdateResponse.rows)


def test_a_long_query_reports_progress_and_its_cancel_stops_the_spark_job(server2):
    with connect(server2) as conn:
        cursor = conn.cursor()
        cursor.execute("SELECT count(*) FROM range(100000000000000) a", async_=True)    # hours of work
        wait_until(lambda: running_tasks(cursor), 120, lambda _: f"no task running: {operation_status(cursor)}")
        update = operation_status(cursor).progressUpdateResponse
        assert update.headerNames[:3] == ["STAGES", "ATTEMPT", "STATUS"] and update.status == 0   # IN_PROGRESS
        assert "RUNNING" in [row[2] for row in update.rows] and update.footerSummary.startswith("STAGES: ")
        cursor.cancel()
        assert cursor.poll().operationState in (3, 5)    # CANCELED (or ERROR when Spark reports the cancelled job)
        wait_until(lambda: running_tasks(cursor) == 0, 60,
                   lambda _: f"the Spark job still runs after the cancel: {operation_status(cursor)}")
        assert query(conn, "SELECT 1") == [(1,)]


def closed_by_server(payload: bytes, port: int) -> bool:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
        raw.sendall(payload)
        try:
            return raw.recv(100) == b""
        except ConnectionResetError:    # closed with our garbage unread
            return True


def test_garbage_on_the_socket_is_dropped(server2):
    assert closed_by_server(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" + os.urandom(256), server2.port)
    assert closed_by_server(b"\x80\x01\x00\x01\xff\xff\xff\xff" + os.urandom(64), server2.port)
    assert closed_by_server(b"\x01\x00\x00\x00\x05PLAIN\x02\xff\xff\xff\xff", server2.port)
    with connect(server2) as conn:
        assert query(conn, "SELECT 1") == [(1,)]


def sasl_login(port: int, source: str, email: str, password: str) -> tuple[int, bytes]:
    """A SASL PLAIN handshake from ``source``: the server's status and message."""
    with socket.create_connection(("127.0.0.1", port), timeout=60, source_address=(source, 0)) as raw:
        raw.sendall(struct.pack(">BI", 1, 5) + b"PLAIN")
        payload = b"\0" + email.encode() + b"\0" + password.encode()
        raw.sendall(struct.pack(">BI", 2, len(payload)) + payload)
        status, length = struct.unpack(">BI", raw.recv(5, socket.MSG_WAITALL))
        return status, raw.recv(length, socket.MSG_WAITALL)


def test_one_client_guessing_passwords_locks_out_only_itself(server2, platform_stack):
    """server2 forwards each client's address to the platform, whose per-address limit (8 in
    these tests) then applies to that client, not to every JDBC user behind server2."""
    assert platform_stack["platform"].cli("user", "add", "--email", "lee@example.org", "--password-stdin",
                                          stdin=PASSWORD + "\n").returncode == 0
    for attempt in range(8):
        status, message = sasl_login(server2.port, "127.0.0.4", f"guess{attempt}@example.org", "x")
        assert status == 3 and b"wrong e-mail or password" in message, message
    status, message = sasl_login(server2.port, "127.0.0.4", "lee@example.org", PASSWORD)   # never logged in
    assert status == 3 and b"Too many failed logins" in message, message
    with connect(server2) as conn:
        assert query(conn, "SELECT current_user()") == [("alpha__ann",)]


def test_disconnect_mid_fetch_frees_the_session(server2):
    conn = connect(server2)
    cursor = conn.cursor()
    cursor.execute("SELECT id FROM range(100000)")
    assert len(cursor.fetchmany(10)) == 10
    conn._transport.close()             # gone without CloseSession
    with connect(server2) as again:
        assert query(again, "SELECT count(*) FROM range(1000)") == [(1000,)]


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024


def test_a_million_rows_fetched_slowly_keep_server2_small(server2):
    """server2 holds one batch at a time: fetching 1,000,000 rows in batches of 10,000 (with a
    pause between batches, a slow client) grows it by far less than the rows would take."""
    pid, peak, fetched = server2.process.pid, [0.0], 0
    with connect(server2) as conn:
        cursor = conn.cursor()
        cursor.execute("SELECT id, CAST(id AS STRING) AS s FROM range(1000000)")
        before = rss_mib(pid)
        while True:
            batch = cursor.fetchmany(10000)
            if not batch:
                break
            fetched += len(batch)
            peak[0] = max(peak[0], rss_mib(pid))
            if fetched % 200000 == 0:
                time.sleep(0.5)
    assert fetched == 1_000_000
    assert peak[0] - before < 64, f"server2 grew from {before:.0f} MiB to {peak[0]:.0f} MiB while fetching"


def test_eight_users_at_once(server2, platform_stack):
    """Eight users, each in a project of its own, at the same time: eight engines, each
    session its own project user, each writing and reading its own table."""
    platform = platform_stack["platform"]
    people = [(f"user{i}@example.org", f"crowd{i}") for i in range(8)]
    for email, project in people:
        added = platform.cli("user", "add", "--email", email, "--password-stdin", stdin=PASSWORD + "\n")
        assert added.returncode == 0, added.stderr
        made = platform.cli("project", "create", project, "--owner", email)
        assert made.returncode == 0, made.stderr
    results, errors = {}, []

    def work(email: str, project: str) -> None:
        try:
            with connect(server2, email, database=project) as conn:
                query(conn, "CREATE TABLE mine (x BIGINT) STORED AS PARQUET")
                query(conn, "INSERT INTO mine SELECT id FROM range(5000)")
                results[project] = query(conn, "SELECT current_user(), count(*), sum(x) FROM mine")[0]
        except Exception as exc:        # noqa: BLE001 -- collected and shown
            errors.append((project, exc))
    threads = [threading.Thread(target=work, args=person) for person in people]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(600)
    assert errors == []
    assert results == {project: (f"{project}__user{i}", 5000, sum(range(5000)))
                       for i, (_, project) in enumerate(people)}


def beeline(server, url_tail: str, sql: str, password: str = PASSWORD) -> subprocess.CompletedProcess:
    return run_beeline("127.0.0.1", server.port, "alpha", ANN, password, sql, url_tail)


@pytest.mark.parametrize("url_tail", [";auth=noSasl", ""])
def test_beeline(server2, url_tail):
    done = beeline(server2, url_tail, "SELECT current_user() AS u, 1 + 1 AS two;")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "alpha__ann,2" in done.stdout.splitlines(), done.stdout


def test_beeline_wrong_password(server2):
    done = beeline(server2, ";auth=noSasl", "SELECT 1;", password="not-the-password")
    assert done.returncode != 0
    assert "wrong e-mail or password" in done.stderr + done.stdout


# ----------------------------------------------------------------------------------- TLS
TRUST_PASSWORD = "changeit"


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory) -> dict:
    """A self-signed certificate for 127.0.0.1, and a Java trust store holding it."""
    base = tmp_path_factory.mktemp("server2-tls")
    cert, key, store = base / "cert.pem", base / "key.pem", base / "truststore.p12"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    subprocess.run(["keytool", "-importcert", "-noprompt", "-alias", "server2", "-file", str(cert), "-keystore",
                    str(store), "-storetype", "PKCS12", "-storepass", TRUST_PASSWORD], check=True, capture_output=True)
    return {"cert": cert, "key": key, "store": store}


@pytest.fixture(scope="module")
def tls_server2(server2, platform_stack, tls_files):
    """A second server2 on the same platform, with TLS on (the users and projects are server2's)."""
    server = Server2Process(platform_stack["base"] / "server2-tls", platform_stack["platform"].url,
                            platform_stack["metastore"].port, platform_stack["namenode"].address,
                            tls_cert_file=str(tls_files["cert"]), tls_key_file=str(tls_files["key"]),
                            tls_ca_file=str(tls_files["cert"])).start()     # its --check verifies, as clients do
    yield server
    code = server.stop(60)
    assert code == 0, server.log_tail()


@pytest.mark.parametrize("url_tail", [";auth=noSasl", ""], ids=["nosasl", "sasl"])
def test_beeline_over_tls(tls_server2, tls_files, url_tail):
    tls = f";ssl=true;sslTrustStore={tls_files['store']};trustStorePassword={TRUST_PASSWORD}"
    done = beeline(tls_server2, tls + url_tail, "SELECT current_user() AS u;")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "alpha__ann" in done.stdout.splitlines(), done.stdout


def test_pyhive_over_tls_and_plain_clients_refused(tls_server2, tls_files):
    import thrift_sasl
    from pyhive.hive import get_installed_sasl
    from thrift.transport.TSSLSocket import TSSLSocket
    secure = TSSLSocket("127.0.0.1", tls_server2.port,
                        ssl_context=ssl.create_default_context(cafile=str(tls_files["cert"])))
    transport = thrift_sasl.TSaslClientTransport(
        lambda: get_installed_sasl(host="127.0.0.1", sasl_auth="PLAIN", username=ANN, password=PASSWORD),
        "PLAIN", secure)
    with hive.connect(thrift_transport=transport, database="alpha") as conn:
        assert query(conn, "SELECT current_user()") == [("alpha__ann",)]
    with pytest.raises(Exception):          # a client speaking plain SASL to the TLS port
        connect(tls_server2)
    assert closed_by_server(b"\x80\x01\x00\x01" + os.urandom(64), tls_server2.port)


def test_unusable_tls_files_stop_the_start(tmp_path, tls_files):
    config = tmp_path / "server2.yml"
    config.write_text(f"server2:\n  tls_cert_file: {tmp_path / 'missing.pem'}\n  tls_key_file: {tls_files['key']}\n")
    done = subprocess.run([sys.executable, "-m", "hopshive.server2.server", "--config", str(config), "--check-config"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "tls_cert_file/tls_key_file cannot be used" in done.stderr, done.stderr


def test_metrics_count_sessions_queries_failures_and_rows(server2):
    """/metrics of the running server2, scraped around real PyHive sessions and statements."""
    url = f"http://127.0.0.1:{server2.metrics_port}/metrics"
    before = scrape_url(url)
    with connect(server2) as conn:
        assert query(conn, "SELECT id FROM range(7)") == [(i,) for i in range(7)]
        with pytest.raises(Exception, match="no_such_table"):
            query(conn, "SELECT * FROM no_such_table_here")
        during = scrape_url(url)
    after = scrape_url(url)

    assert total(during, "hopshive_server2_sessions") == total(before, "hopshive_server2_sessions") + 1
    assert total(after, "hopshive_server2_sessions") == total(before, "hopshive_server2_sessions")
    assert total(during, "hopshive_server2_engines") >= 1
    assert total(after, "hopshive_server2_queries_running") == 0
    assert {outcome: moved(before, after, "hopshive_server2_queries_total", kind="execute", outcome=outcome)
            for outcome in ("finished", "failed", "cancelled")} == {"finished": 1, "failed": 1, "cancelled": 0}
    assert moved(before, after, "hopshive_server2_rows_served_total") == 7
