"""End-to-end harness: real clients (Spark, HdfsCLI, fsspec) against a deployed HopsHive.

Targets come from ``--inventory PATH`` or the environment (see harness/support/targets.py).
Each run works below a unique root, ``<base>/harness-<uuid>``, removed before and after.
Unreachable targets skip the tests with the reason, or fail them with HOPSHIVE_E2E_REQUIRED=1.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from pathlib import Path

import pytest

from harness.support import identity, inodes, metastore as ms, metrics, targets as target_config, trust
from harness.support.platform import PlatformAdmin
from harness.support.spark import Reference, hive_session, session, spark_conf_problem
from harness.support.webhdfs import WebHdfs

HERE = Path(__file__).parent
STALE_HOURS = 6


def pytest_addoption(parser):
    parser.addoption("--inventory", default=None,
                     help="Ansible inventory (hosts.yml or its directory) naming the e2e targets; "
                          "default: HOPSHIVE_WEBHDFS_URL / HOPSHIVE_DB or local defaults")


def pytest_collection_modifyitems(items):
    """Every test under harness/ is `e2e`.  The rolling upgrade (`upgrades`) runs first, so
    every other scenario runs on the upgraded deployment; those that wipe and restore the
    deployment's data (`replaces_state`) run last, so that no other scenario meets a restored
    deployment's reset state (new binary logs, fresh connections) or its failure."""
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.e2e)
    items.sort(key=lambda item: (item.get_closest_marker("upgrades") is None,
                                 item.get_closest_marker("replaces_state") is not None))


def _unavailable(targets, reason: str):
    if targets.required:
        pytest.fail(f"{reason} (HOPSHIVE_E2E_REQUIRED is set)", pytrace=False)
    pytest.skip(f"{reason}; set HOPSHIVE_WEBHDFS_URL/HOPSHIVE_METASTORE_URIS/HOPSHIVE_DB or --inventory")


@pytest.fixture(scope="session")
def targets(request):
    found = target_config.load(request.config.getoption("--inventory"))
    identity.use(found)
    trust.use(found)
    return found


@pytest.fixture(scope="session")
def _webhdfs_probe(targets):
    """None when WebHDFS answers, else why not (computed once per run)."""
    try:
        WebHdfs(targets.webhdfs_url, targets.user, timeout=5).status("/")
        return None
    except Exception as exc:
        return (f"WebHDFS at {targets.webhdfs_url} ({targets.source}) is not usable: "
                f"{type(exc).__name__}: {str(exc)[:160]}")


@pytest.fixture(scope="session")
def webhdfs(targets, _webhdfs_probe):
    """A plain WebHDFS client acting as the harness user."""
    if _webhdfs_probe:
        _unavailable(targets, _webhdfs_probe)
    client = WebHdfs(targets.webhdfs_url, targets.user)
    yield client
    client.close()


@pytest.fixture(scope="session")
def root(webhdfs, targets):
    """This run's unique directory, e.g. /tmp/harness-<uuid>; cleaned before and after.
    Roots of this user's earlier runs that were interrupted (untouched for STALE_HOURS) go too."""
    base = targets.base.rstrip("/")
    cutoff = (time.time() - STALE_HOURS * 3600) * 1000
    for entry in webhdfs.list(base or "/") if webhdfs.status(base or "/") else []:
        if entry["pathSuffix"].startswith("harness-") and entry["owner"] == targets.user \
                and entry["modificationTime"] < cutoff:
            webhdfs.delete(f"{base}/{entry['pathSuffix']}", recursive=True)
    path = f"{base}/harness-{uuid.uuid4().hex[:12]}"
    webhdfs.delete(path, recursive=True)
    assert webhdfs.mkdirs(path, "755"), f"MKDIRS {path} returned false"
    yield path
    webhdfs.delete(path, recursive=True)
    assert webhdfs.status(path) is None, f"{path} still exists after clean-up"


@pytest.fixture
def workdir(root, webhdfs, request):
    """A fresh directory below the run root for one test: (plain path, webhdfs:// URI)."""
    path = f"{root}/{request.node.name.replace('[', '-').replace(']', '').replace('/', '_')}"
    webhdfs.delete(path, recursive=True)
    webhdfs.mkdirs(path)
    yield path
    webhdfs.delete(path, recursive=True)


@pytest.fixture(scope="session")
def db(targets):
    """A PyMySQL connection to the namespace database (`hops` schema)."""
    try:
        connection = inodes.connect(targets.db)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT id FROM {inodes.INODES} WHERE id=%s", (inodes.ROOT_ID,))
            assert cursor.fetchone(), "no root inode"
    except Exception as exc:
        shown = {k: v for k, v in targets.db.items() if k != "password"}
        _unavailable(targets, f"namespace database {shown} is not usable: {type(exc).__name__}: {exc}")
    yield connection
    connection.close()


@pytest.fixture(scope="session")
def spark(targets, root, tmp_path_factory):
    """One local[2] SparkSession for the run; its warehouse is <root>/warehouse on WebHDFS."""
    spark = session(targets, targets.uri(f"{root}/warehouse"), tmp_path_factory.mktemp("spark"))
    yield spark
    spark.stop()


@pytest.fixture
def local_dir(tmp_path):
    """The file:// twin of a test's workdir, for same-workload comparisons."""
    path = tmp_path / "local"
    path.mkdir()
    return path


# ------------------------------------------------------------------ metastore
@pytest.fixture(scope="session")
def run_id(root) -> str:
    """This run's id (the suffix of its root), for names outside the namespace."""
    return root.rsplit("-", 1)[-1]


@pytest.fixture(scope="session")
def metastores(targets, webhdfs) -> list[tuple]:
    """Every deployed metastore instance, (host, port), each answering get_database('default')."""
    problems = {f"{host}:{port}": why for host, port in targets.metastores
                if (why := ms.probe((host, port)))}
    if problems:
        _unavailable(targets, f"metastore instances ({targets.source}) are not usable: {problems}")
    return list(targets.metastores)


@pytest.fixture(scope="session")
def counted_metastores(metastores) -> list[tuple]:
    """The deployed instances, after checking that each serves its counters at its Thrift port +
    100 (every deployment of this release does: roles/metastore, metastore_metrics_enabled)."""
    problems = {f"{host}:{port}": why for host, port in metastores if (why := metrics.unavailable((host, port)))}
    assert not problems, f"metastore instances do not serve /metrics at their Thrift port + 100: {problems}"
    return metastores


@pytest.fixture
def scratch(root, webhdfs, targets, run_id, metastores, db, request) -> ms.Scratch:
    """A test's own metastore names and directory.  Databases with its prefix are dropped
    before and after; after, the directory is removed (which takes any metadata still
    linked to it) and what the test orphaned in the metastore is swept."""
    name = "".join(c if c.isalnum() else "_" for c in request.node.name.lower()).strip("_")
    if len(name) > 40:   # short, and still unique per parameter set
        name = f"{name[:31]}_{hashlib.sha1(name.encode()).hexdigest()[:8]}"
    path = f"{root}/ms/{name}"
    scratch = ms.Scratch(f"hh_{run_id}_{name}_", path, targets.uri(path), ms.now(db))
    ms.drop_databases(metastores[0], targets.user, scratch.prefix)
    webhdfs.delete(path, recursive=True)
    assert webhdfs.mkdirs(path, "755"), f"MKDIRS {path} returned false"
    yield scratch
    ms.drop_databases(metastores[0], targets.user, scratch.prefix)
    webhdfs.delete(path, recursive=True)
    ms.sweep_orphans(targets.db, scratch.started)


@pytest.fixture(scope="session")
def spark_home(webhdfs, targets, root) -> str:
    """The Hive session user's own directories, as a platform gives a new user: its home
    (Hive serde overwrites move old files to its trash) and, in the run root, its warehouse
    and a data directory.  Returns the data directory."""
    user = targets.spark_user
    for path in (f"/user/{user}", f"{root}/hive-warehouse", f"{root}/{user}-data"):
        webhdfs.mkdirs(path, "755")
        webhdfs.chown(path, user)
    return f"{root}/{user}-data"


@pytest.fixture(scope="session")
def hive_spark(targets, root, metastores, spark_home, tmp_path_factory):
    """One Spark session with Hive support on the deployed metastores (a JVM holds one
    SparkContext, and the `spark` fixture's has the in-memory catalog), acting as
    ``targets.spark_user`` -- not a superuser, so the metastore's storage-based
    authorization judges every call it makes."""
    if problem := spark_conf_problem(targets):
        _unavailable(targets, problem)
    process = hive_session(targets, targets.metastore_uris, targets.uri(f"{root}/hive-warehouse"),
                           tmp_path_factory.mktemp("hive-spark"))
    yield process
    process.close()


@pytest.fixture(scope="session")
def workload_prefix(run_id) -> str:
    """The prefix of the Spark workload's databases (<prefix>w1, <prefix>w2), unique to the run."""
    return f"hh_{run_id}_spark_"


@pytest.fixture(scope="session")
def spark_reference(tmp_path_factory, workload_prefix):
    pytest.importorskip("pyspark", reason="PySpark is not installed (requirements-test.txt)")
    reference = Reference(tmp_path_factory.mktemp("spark-reference"), workload_prefix)
    yield reference
    reference.session.close()


# ------------------------------------------------------------------ platform
@pytest.fixture(scope="module")
def platform(targets):
    """An administrator's session of the deployed platform API (makes users and projects)."""
    try:
        admin = PlatformAdmin(targets.platform_url, *targets.platform_admin)
    except Exception as exc:  # noqa: BLE001 -- shown in the skip/fail reason
        _unavailable(targets, f"the platform API at {targets.platform_url} ({targets.source}) is not usable: {exc}")
    yield admin
    admin.close()
