"""pyiceberg's FileIO for webhdfs:// and swebhdfs:// (hopshive.clients.webhdfs_io) against real
namenodes in token mode and with TLS, and pyiceberg's Hive catalog keeping an Iceberg table
on the namespace with it: a project member's token from the platform API is all it needs."""

from __future__ import annotations

import os

import pytest
import pyarrow as pa
from pyiceberg.catalog import load_catalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from hopshive.clients.webhdfs_io import READ_AHEAD, WebHdfsFileIO
from tests.support.mariadb import _free_port
from tests.support.namenode import SUPERUSER, NamenodeServer
from tests.support.platform_fixtures import secure_platform_stack  # noqa: F401 (fixture)
from tests.support.server2 import API, add_owners
from tests.support.tls import make_ca

pytestmark = pytest.mark.metastore
PASSWORD = "fileio-test-password"
OWNERS = {"ice@example.org": "ice", "other@example.org": "other"}


@pytest.fixture(scope="module")
def tokens(secure_platform_stack) -> dict:
    """Each project's member's token (urlString), as the platform API gives it."""
    platform = secure_platform_stack["platform"]
    add_owners(platform, PASSWORD, OWNERS)
    found = {}
    for email, project in OWNERS.items():
        answer = platform.session(email, PASSWORD).post(f"{platform.url}{API}/project/{project}/token", timeout=30)
        assert answer.status_code == 200, answer.text
        found[project] = answer.json()["urlString"]
    return found


def project_dir(stack, project: str) -> str:
    return f"webhdfs://{stack['namenode'].address}/Projects/{project}"


def test_a_file_streams_out_and_reads_back_in_ranges(secure_platform_stack, tokens):
    io = WebHdfsFileIO({"hopshive.token": tokens["ice"]})
    location = f"{project_dir(secure_platform_stack, 'ice')}/blob.bin"
    data = os.urandom(2 * READ_AHEAD + 12345)
    output = io.new_output(location)
    with output.create() as stream:
        for start in range(0, len(data), 37 * 1024):
            stream.write(data[start:start + 37 * 1024])
        assert stream.tell() == len(data)
    assert len(output) == len(data) and io.new_input(location).exists()
    with io.new_input(location).open() as stream:
        stream.seek(-8, os.SEEK_END)
        assert stream.read(8) == data[-8:] and stream.read(1) == b""
        stream.seek(READ_AHEAD - 10)
        assert stream.read(20) == data[READ_AHEAD - 10:READ_AHEAD + 10]
        assert stream.read(5) == data[READ_AHEAD + 10:READ_AHEAD + 15]      # from the read-ahead
        stream.seek(3)
        assert stream.read() == data[3:] and stream.tell() == len(data)
    with pytest.raises(FileExistsError):
        output.create()
    with output.create(overwrite=True) as stream:
        stream.write(b"short")
    assert io.new_input(location).open().read() == b"short"
    io.delete(location)
    assert not io.new_input(location).exists()
    with pytest.raises(FileNotFoundError):
        io.new_input(location).open()
    with pytest.raises(FileNotFoundError):
        io.delete(location)


def test_a_logical_name_reaches_the_first_namenode_that_answers(secure_platform_stack, tokens):
    namenodes = f"127.0.0.1:{_free_port()},{secure_platform_stack['namenode'].address}"    # the first is down
    io = WebHdfsFileIO({"hopshive.token": tokens["ice"], "hopshive.namenodes": namenodes})
    with io.new_output("webhdfs://hopshive/Projects/ice/ha.txt").create() as stream:
        stream.write(b"either namenode")
    assert io.new_input("webhdfs://hopshive/Projects/ice/ha.txt").open().read() == b"either namenode"


def test_another_projects_files_are_refused(secure_platform_stack, tokens):
    owner, intruder = (WebHdfsFileIO({"hopshive.token": tokens[p]}) for p in ("ice", "other"))
    location = f"{project_dir(secure_platform_stack, 'ice')}/private.txt"
    with owner.new_output(location).create() as stream:
        stream.write(b"secret")
    with pytest.raises(PermissionError):
        intruder.new_input(location).open().read()
    with pytest.raises(PermissionError):
        with intruder.new_output(f"{project_dir(secure_platform_stack, 'ice')}/planted.txt").create() as stream:
            stream.write(b"x")
    with pytest.raises(ValueError, match="webhdfs:// and swebhdfs://"):
        owner.new_input("s3://bucket/key")


def test_an_iceberg_table_on_the_namespace(secure_platform_stack, tokens):
    """pyiceberg's HiveCatalog (through TokenHiveCatalog, which picks this FileIO for
    webhdfs:// by itself): create, append, scan, add a column, append, scan, drop."""
    catalog = load_catalog("hopshive", **{"py-catalog-impl": "hopshive.clients.pyiceberg.TokenHiveCatalog",
                                          "uri": f"thrift://127.0.0.1:{secure_platform_stack['metastore'].port}",
                                          "hopshive.token": tokens["ice"]})
    table = catalog.create_table("ice.events", Schema(NestedField(1, "id", LongType(), required=False),
                                                      NestedField(2, "kind", StringType(), required=False)))
    assert isinstance(table.io, WebHdfsFileIO) and table.location().startswith("webhdfs://")
    table.append(pa.table({"id": pa.array([1, 2], pa.int64()), "kind": ["click", None]}))
    with table.update_schema() as update:
        update.add_column("score", LongType())
    table = catalog.load_table("ice.events")
    table.append(pa.table({"id": pa.array([3], pa.int64()), "kind": ["view"], "score": pa.array([7], pa.int64())}))
    rows = sorted(table.scan().to_arrow().to_pylist(), key=lambda row: row["id"])
    assert rows == [{"id": 1, "kind": "click", "score": None}, {"id": 2, "kind": None, "score": None},
                    {"id": 3, "kind": "view", "score": 7}]
    data_files = [task.file.file_path for task in table.scan().plan_files()]
    assert len(data_files) == 2 and all(table.io.new_input(path).exists() for path in data_files)
    catalog.drop_table("ice.events")
    assert ("ice", "events") not in catalog.list_tables("ice")


def test_swebhdfs_verifies_the_namenode_with_the_ca(secure_platform_stack, tmp_path):
    ca = make_ca(tmp_path / "ca")
    namenode = NamenodeServer(tmp_path / "nn-tls", secure_platform_stack["db"].config, workers=1, ca=ca).start()
    try:
        location = f"swebhdfs://{namenode.address}/fileio-tls/check.txt"
        trusting = WebHdfsFileIO({"hopshive.user": SUPERUSER, "hopshive.ca-file": str(ca.ca_file)})
        with trusting.new_output(location).create() as stream:
            stream.write(b"over TLS")
        assert trusting.new_input(location).open().read() == b"over TLS"
        with pytest.raises(OSError, match="CERTIFICATE_VERIFY_FAILED|SSLError|cannot reach"):
            WebHdfsFileIO({"hopshive.user": SUPERUSER, "hopshive.ca-file": "/etc/ssl/certs/ca-certificates.crt"}
                          ).new_input(location).exists()
    finally:
        assert namenode.stop() == 0
