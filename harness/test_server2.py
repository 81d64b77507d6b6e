"""server2 as a platform user meets it: an administrator makes two users and a project for
each through the deployed platform API; each connects with PyHive (SASL PLAIN) and beeline
(Hive JDBC from the pyspark jars) with its e-mail and password, works as its project user
`<project>__<username>`, writes files owned by that user, cannot reach the other project,
and sees the file system and the metastore agree through server2."""

from __future__ import annotations

import secrets
import subprocess
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from pyhive import hive

from harness.support import metastore as ms
from harness.support import server2
from harness.support.platform import owned_projects
from harness.support.server2 import query
from harness.support.services import run_on
from harness.support.webhdfs import WebHdfs, WebHdfsError
from tests.support.spark_workload import PHASES, localize
from tests.support.polling import wait_until
from tests.support.server2 import beeline, metadata

pytestmark = [pytest.mark.server2, pytest.mark.platform, pytest.mark.spark]
PASSWORD = f"harness-{secrets.token_hex(8)}"   # no spaces: beeline splits -p at them


@pytest.fixture(scope="module")
def projects(platform, run_id, metastores) -> dict:
    """Two users, each the owner of its own project: {"a": (email, username, project), "b": ...}."""
    yield from owned_projects(platform, f"hh-{run_id}", PASSWORD)


def connect(targets, email: str, database: str):
    return server2.connect(targets, email, PASSWORD, database)


def table_path(targets, metastores, database: str, table: str) -> str:
    """A table's directory as a namespace path, from the metastore."""
    with ms.client(metastores[0], targets.user) as client:
        return unquote(urlsplit(client.get_table(database, table).sd.location).path)


def test_project_user_writes_its_own_files(targets, projects, webhdfs, metastores):
    email, username, project = projects["a"]
    with connect(targets, email, project) as conn:
        assert query(conn, "SELECT current_user(), current_database()") == [(f"{project}__{username}", project)]
        query(conn, "CREATE TABLE events (id INT, kind STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET")
        query(conn, "INSERT INTO events PARTITION (ds='2026-11-25') VALUES (1, 'click'), (2, NULL)")
        assert query(conn, "SELECT id, kind, ds FROM events ORDER BY id") == [
            (1, "click", "2026-11-25"), (2, None, "2026-11-25")]
    files = [status for _, status in webhdfs.walk(table_path(targets, metastores, project, "events"))
             if status["type"] == "FILE"]
    assert files and {status["owner"] for status in files} == {f"{project}__{username}"}


@pytest.mark.parametrize("url_tail", [";auth=noSasl", ""], ids=["nosasl", "sasl"])
def test_beeline(targets, projects, url_tail):
    email, username, project = projects["a"]
    host, port = targets.server2
    done = beeline(host, port, project, email, PASSWORD, "SELECT current_user() AS u, 1 + 1 AS two;",
                   server2.jdbc_tail(url_tail))
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"{project}__{username},2" in done.stdout.splitlines(), done.stdout


def test_wrong_password_opens_no_session(targets, projects):
    email, _, project = projects["a"]
    host, port = targets.server2
    with pytest.raises(Exception) as refused:
        server2.connect(targets, email, "not-the-password", project)
    assert "wrong e-mail or password" in str(refused.value)
    done = beeline(host, port, project, email, "not-the-password", "SELECT 1;", server2.jdbc_tail(";auth=noSasl"))
    assert done.returncode != 0 and "wrong e-mail or password" in done.stderr + done.stdout


def test_projects_cannot_reach_each_other(targets, projects):
    email_a, _, project_a = projects["a"]
    email_b, _, project_b = projects["b"]
    with connect(targets, email_b, project_b) as bob:
        query(bob, "CREATE TABLE secret (x INT)")
        query(bob, "INSERT INTO secret VALUES (42)")
    with pytest.raises(Exception) as refused:
        connect(targets, email_a, project_b)
    assert "not a member of project" in str(refused.value)
    with connect(targets, email_a, project_a) as ann:
        for sql in (f"SELECT * FROM {project_b}.secret", f"INSERT INTO {project_b}.secret VALUES (1)",
                    f"DROP TABLE {project_b}.secret"):
            with pytest.raises(hive.OperationalError) as denied:
                query(ann, sql)
            assert "ermission denied" in str(denied.value) or "AccessControl" in str(denied.value), sql
    with connect(targets, email_b, project_b) as bob:
        assert query(bob, "SELECT x FROM secret") == [(42,)]


def test_jdbc_metadata_lists_what_the_user_may_read(targets, projects, tmp_path):
    """BI tools list every schema on connect: a member of one project lists schemas, tables and
    columns across the deployment (another project included) with PyHive's cursor and with
    beeline's !tables / !columns, and gets its own project's, no permission error."""
    email_a, _, project_a = projects["a"]
    email_b, _, project_b = projects["b"]
    with connect(targets, email_b, project_b) as bob:
        query(bob, "CREATE TABLE IF NOT EXISTS unlisted (x INT)")
    with connect(targets, email_a, project_a) as ann:
        query(ann, "CREATE TABLE IF NOT EXISTS listed (id INT COMMENT 'the id', name STRING) COMMENT 'shown'")
        schemas = [row[0] for row in metadata(ann, "GetSchemas")[1]]
        assert project_a in schemas and project_b not in schemas
        tables = metadata(ann, "GetTables")[1]
        assert ("", project_a, "listed", "TABLE", "shown") in [row[:5] for row in tables]
        assert project_b not in {row[1] for row in tables}
        columns = metadata(ann, "GetColumns", schemaName=project_a, tableName="listed")[1]
        assert [(row[3], row[5], row[11], row[16]) for row in columns] == [("id", "INT", "the id", 1),
                                                                           ("name", "STRING", "", 2)]
        assert metadata(ann, "GetColumns", schemaName=project_b)[1] == []
    script = tmp_path / "commands.txt"
    script.write_text("!tables\n!columns listed\n")
    host, port = targets.server2
    done = beeline(host, port, project_a, email_a, PASSWORD, "", server2.jdbc_tail(), options=("-f", str(script)))
    assert done.returncode == 0, done.stderr[-2000:]
    assert f",{project_a},listed,TABLE,shown,NULL,NULL,NULL,NULL,NULL" in done.stdout.splitlines(), done.stdout
    assert f"NULL,{project_a},listed,id,4,INT,4,NULL,0,10,1,the id," in done.stdout, done.stdout
    assert project_b not in done.stdout and "Permission denied" not in done.stdout + done.stderr


def test_the_hive_admin_cannot_read_a_project_after_the_hand_over(targets, projects, metastores):
    """The Hive admin made the project's database; the platform then gave its directory to
    the project (owner <project>__<owner>, group <project>, 0770), and the Hive admin, no
    namespace superuser, can read nothing of it any more (thesis §3.3)."""
    email, username, project = projects["a"]
    with connect(targets, email, project) as conn:
        query(conn, "CREATE TABLE private (x INT) STORED AS PARQUET")
        query(conn, "INSERT INTO private VALUES (1)")
    database = table_path(targets, metastores, project, "private").rsplit("/", 1)[0]
    admin, superuser = WebHdfs(targets.webhdfs_url, targets.hive_admin), WebHdfs(targets.webhdfs_url, targets.user)
    try:
        status = superuser.status(database)
        assert (status["owner"], status["group"], status["permission"]) == (f"{project}__{username}", project, "770")
        with pytest.raises(WebHdfsError) as denied:
            admin.list(database)
        assert denied.value.status == 403 and "AccessControlException" in str(denied.value), str(denied.value)
    finally:
        admin.close()
        superuser.close()


def engine_facts(conn) -> tuple[str, str]:
    """(OS account, token file) of the engine a session runs in, asked from SQL."""
    rows = query(conn, "SELECT java_method('java.lang.System', 'getProperty', 'user.name'), "
                       "java_method('java.lang.System', 'getenv', 'HADOOP_TOKEN_FILE_LOCATION')")
    return rows[0][0], rows[0][1]


def local_file_size(conn, path: str) -> int:
    return query(conn, f"SELECT length(content) FROM binaryFile.`file://{path}`")[0][0]


@pytest.mark.parametrize("path", ["/etc/hopshive/platform.yml", "/etc/hopshive/server2.yml"])
def test_sql_cannot_read_the_services_files(targets, projects, path):
    """A project user's SQL may name local files (Spark reads `file:` paths), and the engine
    runs it as a sandbox account of its own: neither the platform's configuration (a database
    password) nor server2's is readable.  The engine's own token file is, so the refusal is
    the account's, not a missing file's."""
    email, _, project = projects["a"]
    with connect(targets, email, project) as conn:
        _, own_token = engine_facts(conn)
        assert local_file_size(conn, own_token) > 0
        with pytest.raises(hive.OperationalError) as denied:
            query(conn, f"SELECT value FROM text.`file://{path}`")
    assert "ermission denied" in str(denied.value), str(denied.value)[:2000]


def test_an_engine_cannot_read_another_engines_token(targets, projects):
    """Two members' engines run as two OS accounts, each holding only its user's token: what
    a UDF or a file: path in one reads of the other's token file is refused."""
    (email_a, _, project_a), (email_b, _, project_b) = projects["a"], projects["b"]
    with connect(targets, email_a, project_a) as conn_a, connect(targets, email_b, project_b) as conn_b:
        account_a, token_a = engine_facts(conn_a)
        account_b, token_b = engine_facts(conn_b)
        assert account_a != account_b and token_a != token_b, (account_a, account_b)
        assert account_a.startswith("hopshive-e") and account_b.startswith("hopshive-e"), (account_a, account_b)
        with pytest.raises(hive.OperationalError) as denied:
            local_file_size(conn_b, token_a)
        # Hadoop's local file system tells a directory it may not enter as a missing path:
        # the file is there, as root on the server2 host sees.
        host = targets.group_hosts.get("server2", "127.0.0.1")
        assert run_on(targets.containers.get(host), "test", "-s", token_a).returncode == 0, token_a
    assert any(words in str(denied.value) for words in ("ermission denied", "PATH_NOT_FOUND")), \
        str(denied.value)[:2000]


@pytest.fixture(scope="module")
def escape_probe(tmp_path_factory) -> bytes:
    """The jar of a hostile member's UDF (support/udf/EscapeProbe.java), compiled against the
    Hive classes in pyspark's jars."""
    import pyspark
    work = tmp_path_factory.mktemp("udf")
    jars = Path(pyspark.__file__).parent / "jars"
    subprocess.run(["javac", "-d", str(work), "-cp", f"{jars}/*", str(Path(__file__).parent / "support" / "udf" /
                    "EscapeProbe.java")], check=True, capture_output=True)
    subprocess.run(["jar", "cf", str(work / "probe.jar"), "-C", str(work), "."], check=True, capture_output=True)
    return (work / "probe.jar").read_bytes()


def test_a_udf_cannot_leave_its_user(targets, projects, escape_probe):
    """A member's own jar (CREATE FUNCTION ... USING JAR) runs in the member's engine, as its
    sandbox account, with the member's token only: it reads its own token file but neither
    another engine's nor the services' configuration, and the namenodes refuse it as `hdfs`
    even with their certificates ignored."""
    (email_a, username_a, project_a), (email_b, _, project_b) = projects["a"], projects["b"]
    member = f"{project_a}__{username_a}"
    jar = f"/user/{member}/escape-probe.jar"
    WebHdfs(targets.webhdfs_url, member).write(jar, escape_probe)
    with connect(targets, email_a, project_a) as conn_a, connect(targets, email_b, project_b) as conn_b:
        _, token_a = engine_facts(conn_a)
        _, token_b = engine_facts(conn_b)
        query(conn_a, f"CREATE TEMPORARY FUNCTION escape_probe AS 'EscapeProbe' USING JAR '{targets.uri(jar)}'")

        def probe(target: str) -> str:
            return query(conn_a, f"SELECT escape_probe('{target}')")[0][0]

        assert probe(f"file:{token_a}").startswith("READ "), probe(f"file:{token_a}")
        for path in (token_b, "/etc/hopshive/server2.yml", "/etc/hopshive/platform.yml"):
            answer = probe(f"file:{path}")
            assert answer.startswith("FAILED java.nio.file.AccessDeniedException"), (path, answer)
        for url in [targets.namenode_url(address) for address in targets.namenodes] or [targets.webhdfs_url]:
            answer = probe(f"{url}/webhdfs/v1/?op=LISTSTATUS&user.name=hdfs")
            assert answer in ("HTTP 401", "HTTP 403"), (url, answer)


@pytest.mark.parametrize("sql", [
    "SELECT TRANSFORM(1) USING 'id' AS (x STRING)",
    "SELECT * FROM (SELECT TRANSFORM(id) USING 'cat /etc/hopshive/server2.yml' AS (x STRING) FROM range(1)) t",
], ids=["top", "subquery"])
def test_transform_scripts_are_refused(targets, projects, sql):
    """A script operator would run as the engine's OS account, outside the project user's
    identity: refused (the SQL extension's check), and a session cannot SET it back on."""
    email, _, project = projects["a"]
    with connect(targets, email, project) as conn:
        query(conn, "SET spark.hopshive.scriptTransform.enabled=true")
        with pytest.raises(hive.OperationalError) as refused:
            query(conn, sql)
    assert "FEATURE_NOT_ENABLED" in str(refused.value) and "TRANSFORM" in str(refused.value), \
        str(refused.value)[:2000]


def test_a_deleted_table_directory_takes_its_table_along(targets, projects, metastores):
    """The consistency the metastore keeps (foreign keys to the inode table), seen through
    server2: the project user deletes a table's directory with a file system client, and
    the table is gone from the project's database."""
    email, username, project = projects["a"]
    with connect(targets, email, project) as conn:
        query(conn, "CREATE TABLE doomed (x INT) STORED AS PARQUET")
        query(conn, "INSERT INTO doomed VALUES (7)")
        assert "doomed" in [row[1] for row in query(conn, "SHOW TABLES")]
        path = table_path(targets, metastores, project, "doomed")
        owner = WebHdfs(targets.webhdfs_url, f"{project}__{username}")
        try:
            assert owner.delete(path, recursive=True, skiptrash=True)
        finally:
            owner.close()
        tables = lambda: [row[1] for row in query(conn, "SHOW TABLES")]   # noqa: E731
        wait_until(lambda: "doomed" not in tables(), 30, lambda _: f"the table outlived its directory: {tables()}")


# ------------------------------------------------------------- the metastore issue's workload
def run_workload(conn, prefix: str, ext: str) -> dict:
    """Every statement of the Spark DDL/DML workload through server2, answered as
    spark_workload.run answers it: rows as strings, sorted; an error as {"error": ...}."""
    results = {}
    for phase, statements in PHASES.items():
        answers = results[phase] = {}
        for statement in statements:
            try:
                rows = [[str(value) for value in row] for row in query(conn, localize(statement, prefix).format(ext=ext))]
            except hive.OperationalError as exc:
                answers[statement] = {"error": "OperationalError", "message": str(exc)[:300]}
                continue
            if statement == "SHOW DATABASES":   # the metastore holds other runs' and projects' databases too
                rows = [row for row in rows if row[0] == "default" or row[0].startswith(prefix)]
            answers[statement] = sorted(rows)
    return results


@pytest.fixture(scope="module")
def server2_workload(targets, projects, spark_reference, workload_prefix, metastores):
    """(through server2, Spark's built-in catalog): the workload of the metastore issue run
    by a project user through server2, and the reference run of harness/test_metastore_spark."""
    email, _, project = projects["b"]
    ms.drop_databases(metastores[0], targets.user, workload_prefix)
    spark_reference.start()
    with connect(targets, email, project) as conn:
        ours = run_workload(conn, workload_prefix, targets.uri(f"/Projects/{project}/ext"))
    yield ours, spark_reference.results()
    ms.drop_databases(metastores[0], targets.user, workload_prefix)


@pytest.mark.parametrize("phase", list(PHASES))
def test_the_workload_through_server2_answers_as_spark_does(server2_workload, phase):
    """Statement by statement the same rows as Spark's own catalog on local disk; a statement
    Spark refuses is refused here too (the error classes differ: server2 sends SQLSTATEs)."""
    ours, reference = (_outcomes(results[phase]) for results in server2_workload)
    different = {statement: {"server2": ours.get(statement), "builtin": answer}
                 for statement, answer in reference.items() if ours.get(statement) != answer}
    assert not different, different


def _outcomes(answers: dict) -> dict:
    return {statement: "error" if isinstance(answer, dict) else answer for statement, answer in answers.items()}
