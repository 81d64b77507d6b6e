"""The cleaner's leader dies (destructive: kills a deployed process).

kill -9 of the instance holding the lease, then table directories moved behind the
metastore's back while nobody leads: another instance takes the lease once it expires,
resumes the binlog at the stored GTID position, and the orphans go; the killed instance is
started again (the supervisor also restarts it by itself).  Runs only where the harness
controls the instances: on their machine, as root (harness/support/services.py).
"""

from __future__ import annotations

import time

import pytest

from harness.support import metastore as ms, services
from harness.test_cleaner import cleaner, wait_clean  # noqa: F401 (fixture)
from harness.test_metastore_consistency import hive, sales  # noqa: F401 (fixtures)
from tests.support.hms import table
from tests.support.polling import wait_until

pytestmark = [pytest.mark.destructive, pytest.mark.metastore]
LEASE = "SELECT OWNER FROM metastore.CLEANER_LEASE WHERE EXPIRES > NOW(3) AND OWNER IS NOT NULL"


@pytest.fixture
def leader_service(cleaner, targets):
    """(owner, Service) of the leading instance; started again after the test."""
    host, _, port = cleaner.rpartition(":")
    container = targets.containers.get(host)
    how = services.manager_at(host, container)
    if how is None or not port.isdigit():
        services.cannot_control(targets, f"the harness cannot kill and restart the cleaner {cleaner} from here (it must run on this "
                    "machine or in our cluster containers, under hopshive-supervisorctl or systemd, and the "
                    "harness as root)")
    service = services.cleaner(int(port), how, container)
    yield cleaner, service
    service.start()


def test_follower_takes_over_and_cleans_what_happened_meanwhile(leader_service, hive, sales, webhdfs, db, scratch,
                                                                targets):
    leader, service = leader_service
    name, _, db_path = sales
    for n in range(5):
        hive.create_table(table(name, f"t{n}", owner=targets.user))
    service.crash()
    killed = time.monotonic()
    service.stop()      # and stays down: restarted, the same instance would renew its own lease
    for n in range(5):  # while nobody leads
        assert webhdfs.rename(f"{db_path}/t{n}", f"{scratch.path}/t{n}-moved")
    assert webhdfs.rename(f"{db_path}/orders", f"{scratch.path}/orders-moved")
    successor = wait_until(lambda: [row[0] for row in ms.query(db)(LEASE) if row[0] != leader], 60,
                           lambda _: f"no instance took the lease from {leader}")[0]
    print(f"\ncleaner failover: {successor} leads {time.monotonic() - killed:.1f} s after kill -9 of {leader}")
    wait_clean(targets, scratch, f"after kill -9 of the leader {leader}")
    assert hive.get_all_tables(name) == []
    assert ms.violations(db, scratch.uri) == {}
