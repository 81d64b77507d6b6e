"""Our HBase Thrift server through the real happybase client: admin, batches, gets, scans
with filters, counters, versions, bad input, restart and kill -9 durability."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import happybase
import pytest
import yaml

from tests.support.hbase import HBaseServerProcess
from tests.support.prometheus import moved, scrape_url, total


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    process = HBaseServerProcess(tmp_path_factory.mktemp("hbase")).start()
    yield process
    process.stop()


@pytest.fixture
def conn(server):
    connection = happybase.Connection("127.0.0.1", server.port)
    yield connection
    connection.close()


@pytest.fixture
def table(conn, request):
    name = request.node.name.replace("[", "_").replace("]", "_")[:60]
    conn.create_table(name, {"f": dict(max_versions=3), "g": dict()})
    yield conn.table(name)
    conn.delete_table(name, disable=True)


def _fill(table, count=20):
    with table.batch() as batch:
        for i in range(count):
            batch.put(b"row%03d" % i, {b"f:a": b"a%d" % i, b"f:b": b"b%d" % (i % 3), b"g:c": b"c"})


def test_admin(conn):
    conn.create_table("admin_t", {"cf1": dict(max_versions=5), "cf2": dict()})
    try:
        assert b"admin_t" in conn.tables()
        families = conn.table("admin_t").families()
        assert set(families) == {b"cf1", b"cf2"} and families[b"cf1"]["max_versions"] == 5
        with pytest.raises(Exception, match="already exists"):
            conn.create_table("admin_t", {"cf1": dict()})
    finally:
        conn.delete_table("admin_t", disable=True)
    assert b"admin_t" not in conn.tables()
    with pytest.raises(Exception, match="does not exist"):
        conn.table("admin_t").row(b"x")


def test_rows_and_columns(table):
    _fill(table, 5)
    assert table.row(b"row001") == {b"f:a": b"a1", b"f:b": b"b1", b"g:c": b"c"}
    assert table.row(b"row001", columns=[b"g"]) == {b"g:c": b"c"}
    assert table.row(b"row001", columns=[b"f:b"]) == {b"f:b": b"b1"}
    assert table.row(b"nope") == {}
    assert [k for k, _ in table.rows([b"row004", b"nope", b"row000"])] == [b"row004", b"row000"]
    table.delete(b"row001", columns=[b"f:a"])
    assert table.row(b"row001") == {b"f:b": b"b1", b"g:c": b"c"}
    table.delete(b"row001")
    assert table.row(b"row001") == {}
    with pytest.raises(Exception, match="column family 'zz' does not exist"):
        table.put(b"row009", {b"zz:q": b"1"})


def test_versions_and_timestamps(table):
    for ts in (10, 20, 30, 40):
        table.put(b"r", {b"f:v": b"v%d" % ts}, timestamp=ts)
    # max_versions=3 keeps the newest three
    assert table.cells(b"r", b"f:v", versions=10, include_timestamp=True) == [(b"v40", 40), (b"v30", 30),
                                                                           (b"v20", 20)]
    assert table.row(b"r", timestamp=35) == {b"f:v": b"v30"}
    table.delete(b"r", columns=[b"f:v"], timestamp=30)
    assert table.cells(b"r", b"f:v", versions=10) == [b"v40"]


def test_scans(table):
    _fill(table)
    keys = [k for k, _ in table.scan()]
    assert keys == [b"row%03d" % i for i in range(20)]
    assert [k for k, _ in table.scan(row_start=b"row005", row_stop=b"row008")] == [b"row005", b"row006", b"row007"]
    assert [k for k, _ in table.scan(row_prefix=b"row01")] == [b"row%03d" % i for i in range(10, 20)]
    assert [k for k, _ in table.scan(row_start=b"row003", reverse=True)] == [b"row003", b"row002", b"row001",
                                                                          b"row000"]
    assert [k for k, _ in table.scan(limit=4, batch_size=3)] == [b"row000", b"row001", b"row002", b"row003"]
    # batch: a row's columns split into results of at most `batch` columns (scan_batching)
    parts = list(table.scan(row_start=b"row000", row_stop=b"row001", scan_batching=2))
    assert [sorted(d) for _, d in parts] == [[b"f:a", b"f:b"], [b"g:c"]]
    assert [k for k, _ in table.scan(columns=[b"g:c"], row_stop=b"row002")] == [b"row000", b"row001"]
    ordered = list(table.scan(row_stop=b"row001", sorted_columns=True))
    assert list(ordered[0][1]) == [b"f:a", b"f:b", b"g:c"]


FILTER_CASES = [
    ("RowFilter(>=, 'binary:row017')", [17, 18, 19], None),
    ("RowFilter(=, 'regexstring:row00[13]')", [1, 3], None),
    ("RowFilter(=, 'substring:W01')", list(range(10, 20)), None),
    ("RowFilter(<, 'binaryprefix:row002')", [0, 1], None),
    ("PrefixFilter('row01') AND RowFilter(!=, 'binary:row015')", [10, 11, 12, 13, 14, 16, 17, 18, 19], None),
    ("SingleColumnValueFilter('f', 'b', =, 'binary:b2')", [2, 5, 8, 11, 14, 17], None),
    ("SingleColumnValueFilter('f', 'b', =, 'binary:b2') AND PageFilter(2)", [2, 5], None),
    ("ValueFilter(=, 'binary:a7')", [7], {b"f:a"}),
    ("QualifierFilter(=, 'binary:b') AND RowFilter(<, 'binary:row002')", [0, 1], {b"f:b"}),
    ("FamilyFilter(=, 'binary:g') AND InclusiveStopFilter('row002')", [0, 1, 2], {b"g:c"}),
    ("ColumnPrefixFilter('c') OR ColumnPrefixFilter('a')", list(range(20)), {b"f:a", b"g:c"}),
    ("FirstKeyOnlyFilter() AND PageFilter(3)", [0, 1, 2], {b"f:a"}),
    ("SKIP ValueFilter(!=, 'binary:b0')", [1, 2, 4, 5, 7, 8, 10, 11, 13, 14, 16, 17, 19], None),
    ("WHILE RowFilter(<, 'binary:row004')", [0, 1, 2, 3], None),
    ("(RowFilter(=, 'binary:row001') OR RowFilter(=, 'binary:row009')) AND KeyOnlyFilter()", [1, 9], None),
]


@pytest.mark.parametrize("text,rows,columns", FILTER_CASES)
def test_filters(table, text, rows, columns):
    _fill(table)
    found = list(table.scan(filter=text))
    assert [k for k, _ in found] == [b"row%03d" % i for i in rows]
    if columns is not None:
        assert all(set(d) == columns for _, d in found)
    if "AND KeyOnlyFilter" in text:
        assert all(v == b"" for _, d in found for v in d.values())


@pytest.mark.parametrize("text,message", [
    ("NoSuchFilter('x')", "unknown filter 'NoSuchFilter'"),
    ("RowFilter(=, 'binary:x'", "does not parse"),
    ("RowFilter(<, 'regexstring:a.*')", "only supports = and !="),
    ("RowFilter(=, 'octal:1')", "expected binary:"),
    ("PageFilter('x')", "must be integer"),
    ("RowFilter(=, 'regexstring:(')", "regexstring"),
])
def test_bad_filters_are_errors_and_the_connection_lives(table, text, message):
    _fill(table, 3)
    with pytest.raises(Exception, match=message):
        list(table.scan(filter=text))
    assert [k for k, _ in table.scan()] == [b"row000", b"row001", b"row002"]


def test_counters(table):
    assert table.counter_inc(b"c", b"f:n") == 1
    assert table.counter_inc(b"c", b"f:n", 10) == 11
    assert table.counter_dec(b"c", b"f:n", 2) == 9
    assert table.counter_get(b"c", b"f:n") == 9
    table.put(b"c", {b"f:s": b"abc"})
    with pytest.raises(Exception, match="not a 64-bit counter"):
        table.counter_inc(b"c", b"f:s")


def test_concurrent_counters(conn, table, server):
    def bump():
        connection = happybase.Connection("127.0.0.1", server.port)
        for _ in range(25):
            connection.table(table.name).counter_inc(b"c", b"f:n")
        connection.close()
    threads = [threading.Thread(target=bump) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert table.counter_get(b"c", b"f:n") == 100


def test_bad_input_keeps_connection(table):
    with pytest.raises(Exception, match="row key of 600 bytes"):
        table.put(b"x" * 600, {b"f:a": b"1"})
    with pytest.raises(Exception, match="no scanner"):
        table.connection.client.scannerGetList(987654, 1)
    table.put(b"ok", {b"f:a": b"1"})
    assert table.row(b"ok") == {b"f:a": b"1"}


def test_metrics_count_calls_by_outcome_and_read_the_store(conn, table, server):
    url = f"http://127.0.0.1:{server.metrics_port}/metrics"
    before = scrape_url(url)
    _fill(table, 5)
    with pytest.raises(Exception):      # the table exists: AlreadyExists, the call's declared error
        conn.create_table(table.name.decode(), {"f": dict()})
    scanner = table.scan(batch_size=1)
    next(scanner)                       # open, not exhausted: the server holds it
    after = scrape_url(url)
    assert moved(before, after, "hopshive_hbase_calls_total", method="mutateRows", outcome="ok") >= 1
    assert moved(before, after, "hopshive_hbase_calls_total", method="createTable", outcome="error") == 1
    assert moved(before, after, "hopshive_hbase_call_seconds_count", method="mutateRows") >= 1
    assert total(after, "hopshive_hbase_scanners_open") >= 1
    assert total(after, "hopshive_hbase_tables") >= 1
    used, size = total(after, "hopshive_hbase_store_used_bytes"), total(after, "hopshive_hbase_store_size_bytes")
    assert 0 < used <= size == 512 << 20
    assert total(after, "hopshive_build_info") == 1
    scanner.close()


def test_a_bad_metrics_port_is_refused_with_its_reason(tmp_path):
    service = HBaseServerProcess(tmp_path)
    config = yaml.safe_load(service.config_path.read_text())
    config["hbase"]["metrics_port"] = "ninety"
    service.config_path.write_text(yaml.safe_dump(config))
    assert service.spawn().process.wait(30) == 1, service.log_tail()
    assert "metrics_port must be a port number" in service.log_tail()


def test_help_and_check_config():
    out = subprocess.run([sys.executable, "-m", "hopshive.hbase_server.server", "--help"], capture_output=True,
                         text=True)
    assert out.returncode == 0 and "not HBase" in out.stdout
    out = subprocess.run([sys.executable, "-m", "hopshive.hbase_server.server", "--check-config"],
                         capture_output=True, text=True, env=dict(os.environ, HOPSHIVE_HBASE__PORT="9191"))
    assert out.returncode == 0 and "port: 9191" in out.stdout


def test_restart_and_kill9_keep_acknowledged_writes(tmp_path):
    process = HBaseServerProcess(tmp_path / "durable").start()
    try:
        conn = happybase.Connection("127.0.0.1", process.port)
        conn.create_table("d", {"f": dict()})
        conn.table("d").put(b"before", {b"f:a": b"1"})
        conn.close()
        assert process.stop() == 0
        process.start()
        conn = happybase.Connection("127.0.0.1", process.port)
        assert conn.table("d").row(b"before") == {b"f:a": b"1"}
        acknowledged, failures = [], []

        def writer():
            client = happybase.Connection("127.0.0.1", process.port)
            try:
                for i in range(100000):
                    with client.table("d").batch() as batch:
                        for j in range(5):
                            batch.put(b"k%06d-%d" % (i, j), {b"f:a": b"%d" % i})
                    acknowledged.append(i)
            except Exception as exc:  # noqa: BLE001 -- the server is killed under it
                failures.append(exc)

        thread = threading.Thread(target=writer)
        thread.start()
        from tests.support.polling import wait_until
        wait_until(lambda: len(acknowledged) >= 30, 60, lambda _: f"{len(acknowledged)} batches, {failures}")
        process.kill()
        thread.join(30)
        process.start()
        conn = happybase.Connection("127.0.0.1", process.port)
        stored = {k for k, _ in conn.table("d").scan(row_prefix=b"k")}
        missing = [i for i in acknowledged for j in range(5) if b"k%06d-%d" % (i, j) not in stored]
        assert acknowledged and not missing
        # batches are atomic: every batch is all there or not at all
        batches = {}
        for key in stored:
            batches.setdefault(key[:7], set()).add(key)
        assert all(len(v) == 5 for v in batches.values())
        conn.close()
    finally:
        process.stop()


def test_regex_row_filter_reads_only_rows_it_can_match(table, server):
    """A condition on the second field of the metastore's keys, as the planner writes it (an
    anchored regexstring RowFilter, HBase's own), returns exactly the matching rows, and this
    server reads about one more row per value of the first field (seek hints), not the range."""
    from decimal import Decimal

    from hopshive.metastore.filter.keytypes import key_type
    from hopshive.metastore.stores.hbase import keyregex, rowkey

    kinds = [key_type("int"), key_type("int")]
    with table.batch() as batch:
        for a in range(20):
            for b in range(50):
                batch.put(rowkey.row_key("d", "t", kinds, [str(a), str(b)]), {b"f:a": b"%d/%d" % (a, b)})
    prefix = rowkey.table_prefix("d", "t")
    low, high = (keyregex.compare(op, rowkey.encode_typed("number", Decimal(v))) for op, v in ((">=", 10), ("<", 12)))
    text = keyregex.row_filter(prefix, kinds, 1, low) + b" AND " + keyregex.row_filter(prefix, kinds, 1, high)
    found = [d[b"f:a"] for _, d in table.scan(filter=text)]
    assert found == [b"%d/%d" % (a, b) for a in range(20) for b in (10, 11)]
    closed = [line for line in server.log_path.read_text().splitlines() if '"scanner closed"' in line]
    last = json.loads(closed[-1])
    assert last["rows_returned"] == 40 and last["rows_read"] <= 2 * 40, last


@pytest.mark.parametrize("text,rows", [
    # HBase decodes rows as UTF-8: every invalid byte is U+FFFD, valid multi-byte text is one character
    ("RowFilter(=, 'regexstring:^r\\x{fffd}x')", [b"r\xffx", b"r\xfex"]),
    ("RowFilter(=, 'regexstring:^r\u00e9x')", [b"r\xc3\xa9x"]),        # the pattern's bytes are UTF-8 too
    ("RowFilter(=, 'regexstring:^r.x$')", [b"r\xffx", b"r\xfex", b"r\xc3\xa9x", b"r\nx"]),   # DOTALL
    ("RowFilter(=, 'regexstring:\\Qr\\E[^a]')", [b"r\xffx", b"r\xfex", b"r\xc3\xa9x", b"r\nx"]),
    ("RowFilter(!=, 'regexstring:x')", [b"ra"]),
    ("RowFilter(=, 'substring:\u00c9')", [b"r\xc3\xa9x"]),            # case-insensitive on the UTF-8 text
])
def test_regexes_see_rows_as_hbase_does(table, text, rows):
    with table.batch() as batch:
        for row in (b"r\xffx", b"r\xfex", b"r\xc3\xa9x", b"r\nx", b"ra"):
            batch.put(row, {b"f:a": b"1"})
    assert sorted(k for k, _ in table.scan(filter=text.encode("utf-8"))) == sorted(rows)


@pytest.mark.parametrize("text,message", [
    ("RowFilter(=, 'regexstring:(?i)a')", "not supported"),          # inline flags: Java-only meaning
    ("RowFilter(=, 'regexstring:(a)\\1')", "back-references"),
    ("RowFilter(=, 'binary:a') or RowFilter(=, 'binary:b')", "does not parse"),   # HBase's OR is upper case
    ("RowFilter(=, 'BINARY:a')", "expected binary:"),
    ("ColumnRangeFilter('a', true, 'b', false)", "does not implement"),
])
def test_what_hbase_would_read_otherwise_is_refused(table, text, message):
    with pytest.raises(Exception, match=message):
        list(table.scan(filter=text))


def test_check_and_put(table):
    """checkAndPut through happybase's own Thrift client, with HBase's rule for the check."""
    from happybase.batch import Mutation

    client = table.connection.client

    def cas(expected, value, column=b"f:a"):
        return client.checkAndPut(table.name, b"r", column, expected, Mutation(column=b"f:a", value=value), {})

    assert cas(None, b"v1")                 # absent: written
    assert not cas(None, b"v2")             # present: not
    assert not cas(b"v2", b"v3")            # different value: not
    assert cas(b"v1", b"v2") and table.row(b"r") == {b"f:a": b"v2"}
    assert not cas(b"v2", b"v3", column=b"f:other") and cas(b"", b"x", column=b"f:other")   # "" = absent too
    with pytest.raises(Exception, match="column family 'zz'"):
        cas(None, b"v", column=b"zz:a")


def test_check_and_put_has_one_winner(conn, table, server):
    """Writers racing to create the same cell: exactly one checkAndPut succeeds."""
    from happybase.batch import Mutation

    wins = []

    def race(i):
        connection = happybase.Connection("127.0.0.1", server.port)
        for row in range(30):
            if connection.client.checkAndPut(table.name, b"row%d" % row, b"f:a", None,
                                             Mutation(column=b"f:a", value=b"%d" % i), {}):
                wins.append((row, i))
        connection.close()
    threads = [threading.Thread(target=race, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(row for row, _ in wins) == list(range(30))
    assert all(table.row(b"row%d" % row) == {b"f:a": b"%d" % i} for row, i in wins)
