"""hbase: our HBase Thrift server runs, answers happybase (a table created,
a batch written and scanned with a row filter) and keeps acknowledged writes across a restart."""

testinfra_hosts = ["hbase"]

# `write`: create the table when missing and put rows r0..r9; then (both modes) print the
# keys a RowFilter scan from r7 returns.
HAPPYBASE_ROUND_TRIP = """
import sys, happybase
connection = happybase.Connection("127.0.0.1", 9090)
if sys.argv[1] == "write":
    if b"verify" not in connection.tables():
        connection.create_table("verify", {"f": {}})
    with connection.table("verify").batch() as batch:
        for i in range(10):
            batch.put(b"r%d" % i, {b"f:a": b"%d" % i})
rows = connection.table("verify").scan(filter="RowFilter(>=, 'binary:r7')")
print(",".join(key.decode() for key, _ in rows))
"""
ROWS_FROM_R7 = "r7,r8,r9"


def happybase(node, mode):
    return node.tool("python", "-c", HAPPYBASE_ROUND_TRIP, mode)


def test_service_runs(node):
    node.assert_running("hopshive-hbase")


def test_metrics_count_the_calls(node):
    happybase(node, "write")
    metrics = node.http("http://127.0.0.1:9095/metrics")
    assert metrics.status == 200, metrics
    assert 'hopshive_hbase_calls_total{method="mutateRows",outcome="ok"}' in metrics.body, metrics.body[:2000]


def test_written_rows_survive_a_restart(node, eventually):
    written = happybase(node, "write")
    node.control("restart", "hopshive-hbase")
    read = eventually(lambda: happybase(node, "read"), seconds=15)
    assert (written, read) == (ROWS_FROM_R7, ROWS_FROM_R7), (
        f"expected {ROWS_FROM_R7} twice, got {written} / {read}")
