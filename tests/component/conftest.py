"""Fixtures for namespace component tests."""

from __future__ import annotations

import pytest

from hopshive.namespace.liveness import Liveness
from hopshive.namespace.namespace import Namespace


def namespace_config(data_dir) -> dict:
    return {"superusers": ["hdfs"], "supergroup": "supergroup", "data_dir": str(data_dir), "umask": "022"}


@pytest.fixture
def namespace(db, tmp_path):
    liveness = Liveness(db, "127.0.0.1:0", dead_after=10.0)
    liveness.register()
    return Namespace(db, namespace_config(tmp_path / "data"), "127.0.0.1:0", liveness)
