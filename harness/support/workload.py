"""A workload that keeps writing while a scenario breaks something: metastore DDL (tables and
partitions, each with its directory) and WebHDFS file writes, recording what was
acknowledged, so that the scenario can check afterwards that nothing acknowledged is lost."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from tests.support.hms import partition, table

from . import metastore as ms

PARTITIONS = 3


@dataclass
class Workload:
    """Metastore DDL and WebHDFS writes in a loop, recording what was acknowledged and when."""
    metastores: list
    user: str
    database: str
    hdfs: object
    path: str
    tables: dict = field(default_factory=dict)      # table name -> partitions acknowledged
    files: dict = field(default_factory=dict)       # path -> content, acknowledged writes
    acked_at: list = field(default_factory=list)    # monotonic time of every acknowledgement
    errors: list = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def _ack(self) -> None:
        self.acked_at.append(time.monotonic())

    def step(self, i: int) -> None:
        instance = self.metastores[i % len(self.metastores)]
        name = f"t{i}"
        try:
            with ms.client(instance, self.user, timeout=60) as client:
                created = table(self.database, name, parts=("p int",), owner=self.user)
                client.create_table(created)
                self.tables[name] = 0
                self._ack()
                client.add_partitions([partition(created, [str(p)]) for p in range(PARTITIONS)])
                self.tables[name] = PARTITIONS
                self._ack()
        except Exception as exc:  # noqa: BLE001 -- unacknowledged work may fail while a node dies
            self.errors.append(f"{name}: {type(exc).__name__}: {str(exc)[:200]}")
        content = f"file {i}\n".encode() * 10
        try:
            self.hdfs.write(f"{self.path}/f{i}", content, overwrite=False)
            self.files[f"{self.path}/f{i}"] = content
            self._ack()
        except Exception as exc:  # noqa: BLE001
            self.errors.append(f"f{i}: {type(exc).__name__}: {str(exc)[:200]}")

    def run(self) -> None:
        i = 0
        while not self.stop.is_set():
            self.step(i)
            i += 1

    def acked_since(self, moment: float) -> int:
        return sum(1 for t in self.acked_at if t > moment)


def check_acknowledged(load: Workload, metastore: tuple, hdfs) -> None:
    """Every acknowledged table has its partitions, every acknowledged file its bytes."""
    with ms.client(metastore, load.user) as client:
        for name, partitions in load.tables.items():
            assert len(client.get_partition_names(load.database, name, -1)) >= partitions, name
    for path, content in load.files.items():
        with hdfs.read(path) as reader:
            assert reader.read() == content, path


class Running:
    """The workload in a thread of its own, for the length of a ``with`` block."""

    def __init__(self, load: Workload):
        self.load, self.thread = load, threading.Thread(target=load.run)

    def __enter__(self) -> Workload:
        self.thread.start()
        return self.load

    def __exit__(self, *exc) -> None:
        self.load.stop.set()
        self.thread.join(120)
