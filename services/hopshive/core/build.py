"""The build a service runs: the package version and the digest of the source it was
installed from, which the install role writes into the virtualenv beside the package.

Read once, when a service imports this module at start-up: a service that was not restarted
after an upgrade keeps reporting the build it runs, which is how an operator (and the
harness's upgrade scenario) tells the hosts an upgrade has not reached yet."""

from __future__ import annotations

import sys
from pathlib import Path

from prometheus_client.core import GaugeMetricFamily

from .. import __version__

SOURCE_DIGEST_FILE = Path(sys.prefix) / "hopshive-source-digest"
UNKNOWN = "unknown"      # run from a checkout or a virtualenv the install role did not make


def source_digest(path: Path) -> str:
    try:
        return path.read_text().strip() or UNKNOWN
    except OSError:
        return UNKNOWN


RUNNING = {"version": __version__, "source": source_digest(SOURCE_DIGEST_FILE)}


class BuildInfo:
    """A collector for ``hopshive_build_info{version, source} 1``: the Prometheus convention
    for a build's identity, so `count by (job, source) (hopshive_build_info)` shows how far a
    rolling upgrade has gone."""

    def collect(self):
        family = GaugeMetricFamily("hopshive_build_info", "The build this process runs: package version and "
                                   "the digest of the source it was installed from.", labels=["version", "source"])
        family.add_metric([RUNNING["version"], RUNNING["source"]], 1)
        yield family
