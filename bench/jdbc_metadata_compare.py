"""server2's JDBC metadata beside the Spark Thrift Server's (the reference), on the same
metastore and namenode: GetCatalogs, GetSchemas, GetTableTypes, GetTables, GetColumns,
GetFunctions and GetTypeInfo through PyHive, for a table of every type and a view made in
project "bench".  Prints a markdown table: whether the result set columns (names, types)
and the rows are the same, and the row counts.  Exits 1 when something differs.

The reference runs without identities (NOSASL, as the superuser): it would list every
project; here there is one, so both should give the same rows.

    .venv-test/bin/python bench/jdbc_metadata_compare.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pyhive import hive  # noqa: E402
from server2_bench import EMAIL, PASSWORD, both_servers, stop_all  # noqa: E402

from tests.component.test_server2_metadata import T1  # noqa: E402
from tests.support.server2 import metadata  # noqa: E402

CALLS = [("GetCatalogs", {}), ("GetSchemas", {}), ("GetTableTypes", {}), ("GetTables", {"schemaName": "bench"}),
         ("GetColumns", {"schemaName": "bench"}), ("GetFunctions", {"schemaName": "bench", "functionName": "%"}),
         ("GetTypeInfo", {})]


def main() -> int:
    base = Path(tempfile.mkdtemp(prefix="jdbc-metadata-"))
    stack: list = []
    try:
        server2, sts = both_servers(base, stack)
        ours = hive.connect(host="127.0.0.1", port=server2.port, username=EMAIL, password=PASSWORD, auth="CUSTOM",
                            database="bench")
        for sql in (T1, "CREATE VIEW v1 AS SELECT id FROM t1"):
            ours.cursor().execute(sql)
        reference = sts.connect()
        reference.cursor().execute("USE bench")
        differ = False
        print("| call | same columns | same rows | rows (ours) | rows (reference) |\n|---|---|---|---:|---:|")
        for call, fields in CALLS:
            (our_columns, our_rows), (ref_columns, ref_rows) = (metadata(conn, call, **fields)
                                                                for conn in (ours, reference))
            same_columns, same_rows = our_columns == ref_columns, sorted(map(repr, our_rows)) == sorted(
                map(repr, ref_rows))
            differ |= not (same_columns and same_rows)
            print(f"| {call} {fields or ''} | {same_columns} | {same_rows} | {len(our_rows)} | {len(ref_rows)} |")
            if not same_rows:
                for row in sorted(set(map(repr, our_rows)) ^ set(map(repr, ref_rows)))[:10]:
                    print(f"|  differs: {row[:200]} | | | | |")
        return 1 if differ else 0
    finally:
        stop_all(stack)


if __name__ == "__main__":
    sys.exit(main())
