"""Iceberg tables on the namespace with pyiceberg alone (no JVM), as a data engineer of a
project works: the project's token from the platform API, pyiceberg's Hive catalog on the
deployed metastore (hopshive.clients.pyiceberg.TokenHiveCatalog: SASL DIGEST-MD5 with the
token, TLS with the deployment's CA where it serves TLS), and the FileIO it picks by itself
for the project database's webhdfs:// or swebhdfs:// location (hopshive.clients.webhdfs_io).

Spark reading the same tables needs Iceberg's runtime jar, which is on Maven Central only:
not reachable from these machines, so not shown here."""

from __future__ import annotations

import secrets

import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from hopshive.clients.webhdfs_io import WebHdfsFileIO
from tests.support.polling import wait_until

from .support import trust
from .support.platform import owned_projects, project_token

pytestmark = [pytest.mark.metastore, pytest.mark.platform]
PASSWORD = f"harness-{secrets.token_hex(8)}"


@pytest.fixture(scope="module")
def member(platform, run_id, metastores) -> tuple:
    """(email, username, project) of the owner of a project of its own."""
    for made in owned_projects(platform, f"ice-{run_id}", PASSWORD, keys=("a",)):
        yield made["a"]


@pytest.fixture(scope="module")
def catalog(targets, metastores, member):
    email, _, project = member
    host, port = metastores[0]
    properties = {"py-catalog-impl": "hopshive.clients.pyiceberg.TokenHiveCatalog", "uri": f"thrift://{host}:{port}",
                  "hopshive.token": project_token(targets.platform_url, email, PASSWORD, project)["urlString"]}
    if trust.ca_file():
        properties["hopshive.ca-file"] = trust.ca_file()
    if targets.nameservice:         # locations name the namenodes by their logical name
        properties["hopshive.namenodes"] = ",".join(targets.namenodes)
    return load_catalog("hopshive", **properties)


def test_create_append_scan_evolve_and_drop(targets, member, catalog):
    _, username, project = member
    table = catalog.create_table(f"{project}.events", Schema(NestedField(1, "id", LongType(), required=False),
                                                             NestedField(2, "kind", StringType(), required=False)))
    assert isinstance(table.io, WebHdfsFileIO) and table.location().startswith(f"{targets.scheme}://")
    table.append(pa.table({"id": pa.array([1, 2], pa.int64()), "kind": ["click", None]}))
    with table.update_schema() as update:
        update.add_column("score", LongType())
    table = catalog.load_table(f"{project}.events")
    table.append(pa.table({"id": pa.array([3], pa.int64()), "kind": ["view"], "score": pa.array([7], pa.int64())}))
    rows = sorted(table.scan().to_arrow().to_pylist(), key=lambda row: row["id"])
    assert rows == [{"id": 1, "kind": "click", "score": None}, {"id": 2, "kind": None, "score": None},
                    {"id": 3, "kind": "view", "score": 7}]
    assert table.scan(row_filter="score = 7").to_arrow().column("id").to_pylist() == [3]
    for task in table.scan().plan_files():
        client, path = table.io.client(task.file.file_path)
        assert client.status(path)["owner"] == f"{project}__{username}"
    catalog.drop_table(f"{project}.events")
    assert (project, "events") not in catalog.list_tables(project)


def test_a_deleted_table_directory_takes_its_table_along(member, catalog):
    """As for any table (the thesis's Table 3.1): the directory goes, the metadata follows."""
    _, _, project = member
    table = catalog.create_table(f"{project}.doomed", Schema(NestedField(1, "id", LongType(), required=False)))
    table.append(pa.table({"id": pa.array([1], pa.int64())}))
    client, path = table.io.client(table.location())
    assert client.delete(path, recursive=True)
    wait_until(lambda: (project, "doomed") not in catalog.list_tables(project), 30,
               lambda _: f"{project}.doomed is still in the metastore after its directory was deleted")
