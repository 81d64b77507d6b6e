"""mysql_cluster (one server, with the whole stack): MariaDB runs with the HopsHive drop-in
(row binlog with full metadata, log_slave_updates, >= 500 connections, utf8mb4), the cleaner
may follow the binary log and holds no global ALL, and every service account logs in over TCP."""

import pytest

testinfra_hosts = ["mysql_cluster"]


def test_server_settings(node):
    settings = node.sql(
        "SELECT @@log_bin, @@binlog_format, @@binlog_row_metadata, @@log_slave_updates,"
        " @@max_connections, @@character_set_server"
    )[0]
    log_bin, binlog_format, row_metadata, log_slave_updates, max_connections, charset = settings
    assert (
        (log_bin, binlog_format, row_metadata, log_slave_updates, charset) == ("1", "ROW", "FULL", "1", "utf8mb4")
        and int(max_connections) >= 500
    ), (
        "expected log_bin=1 binlog_format=ROW binlog_row_metadata=FULL log_slave_updates=1"
        f" max_connections>=500 character_set_server=utf8mb4, got: {settings}"
    )


def test_cleaner_may_follow_the_binary_log_and_nothing_more_globally(node):
    grants = [row[0] for row in node.sql("SHOW GRANTS FOR 'hops_cleaner'@'127.0.0.1'")]
    assert any("GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.*" in grant for grant in grants) and not any(
        "ALL PRIVILEGES ON *.*" in grant for grant in grants
    ), f"expected REPLICATION SLAVE, BINLOG MONITOR on *.* and no ALL PRIVILEGES on *.*, got: {grants}"


@pytest.mark.parametrize(
    ("account", "password_variable"),
    [
        ("hops_namenode", "hopshive_db_namenode_password"),
        ("hops_metastore", "hopshive_db_metastore_password"),
        ("hops_cleaner", "hopshive_db_cleaner_password"),
    ],
)
def test_service_account_logs_in_over_tcp(node, account, password_variable):
    login = node.host.run(
        "mariadb --protocol=TCP -h 127.0.0.1 -u %s --password=%s -e 'SELECT CURRENT_USER()'",
        account,
        node.variable(password_variable),
    )
    # Not the CommandResult: its command line holds the password.
    assert login.rc == 0, f"expected {account} to log in over TCP, got exit {login.rc}: {login.stderr.strip()}"
