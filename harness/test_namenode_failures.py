"""A namenode dies (destructive: stops a deployed namenode and keeps it down).

Clients carry on through the other namenode: files written before the failure stay
readable, new files are written and read, through HdfsCLI pointed at the surviving namenode
and through Spark, which names all namenodes by the WebHDFS nameservice (Hadoop's HA client
configuration: webhdfs://<nameservice>/ fails over by itself).  The platform API, given every
namenode, makes and removes a project's directories through the one still up.  Runs where
there are two or more namenodes whose services the harness controls (inventories/cluster).
"""

from __future__ import annotations

import secrets

import pytest

from harness.support import identity, services, webhdfs
from tests.support.polling import wait_until

pytestmark = [pytest.mark.destructive, pytest.mark.namespace]
SMALL = b"small file, kept in the database next to its inode\n"
LARGE = bytes(range(256)) * 4096          # 1 MiB: blocks, with a replica on another host


@pytest.fixture(scope="module")
def namenodes(targets):
    """[(host:port, Service)] of every namenode; each one left stopped is started again."""
    controls = []
    for endpoint in targets.namenodes:
        container = targets.containers.get(endpoint.rsplit(":", 1)[0])
        how = services.manager(container) if container else None
        if len(targets.namenodes) < 2 or how is None:
            services.cannot_control(targets, f"needs two or more namenodes in our cluster containers, controlled by the harness "
                        f"as root (inventories/cluster); got {targets.namenodes}")
        controls.append((endpoint, services.namenode(how, container)))
    yield controls
    for _, service in controls:
        service.start()


@pytest.fixture
def ha_spark(spark, targets):
    """The harness's Spark session, also configured with the namenodes' nameservice."""
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    ids = [f"nn{i}" for i in range(1, len(targets.namenodes) + 1)]
    conf.set("dfs.nameservices", targets.nameservice)
    conf.set(f"dfs.ha.namenodes.{targets.nameservice}", ",".join(ids))
    address_key = "https-address" if targets.tls else "http-address"      # swebhdfs:// reads https-address
    for nn, endpoint in zip(ids, targets.namenodes):
        conf.set(f"dfs.namenode.{address_key}.{targets.nameservice}.{nn}", endpoint)
    conf.set(f"dfs.client.failover.proxy.provider.{targets.nameservice}",
             "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider")
    return spark


def test_clients_carry_on_through_the_other_namenode(namenodes, ha_spark, root, targets, platform, run_id):
    pytest.importorskip("hdfs")
    (first, victim), (second, _) = namenodes[0], namenodes[1]
    writer = identity.hdfs_client(targets.namenode_url(first), targets.user)
    reader = identity.hdfs_client(targets.namenode_url(second), targets.user)
    path = f"{root}/nn-failure"
    writer.write(f"{path}/small", SMALL)
    writer.write(f"{path}/large", LARGE, replication=2)
    logical = f"{targets.scheme}://{targets.nameservice}{path}"
    ha_spark.range(100).write.parquet(f"{logical}/before")

    victim.stop()
    try:
        with reader.read(f"{path}/small") as handle:
            assert handle.read() == SMALL
        with reader.read(f"{path}/large") as handle:
            assert handle.read() == LARGE
        reader.write(f"{path}/after", SMALL)
        with reader.read(f"{path}/after") as handle:
            assert handle.read() == SMALL
        assert ha_spark.read.parquet(f"{logical}/before").count() == 100
        ha_spark.range(50).write.parquet(f"{logical}/during")
        assert ha_spark.read.parquet(f"{logical}/during").count() == 50
        owner, project = f"nf-{run_id}@harness.example.org", f"nf_{run_id}"
        platform.add_user(owner, f"harness-{secrets.token_hex(8)}")
        platform.create_project(project, owner)      # /Projects/<project> and the owner's home
        platform.delete_project(project)
        platform.block(owner)
    finally:
        victim.start()
    wait_until(lambda: webhdfs.healthy(targets.namenode_url(first)), 60, lambda _: f"the namenode {first} does not serve")
    with writer.read(f"{path}/after") as handle:      # and the restarted one serves the new files
        assert handle.read() == SMALL
    assert ha_spark.read.parquet(f"{logical}/during").count() == 50
