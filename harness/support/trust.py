"""How the harness's clients verify the deployment's TLS (the inventory's hopshive_tls): with
the deployment's CA, as a user's clients do.  Process-wide, like Java's truststore and like
support/identity's tokens: ``use(targets)`` once, then requests-based clients (ours, HdfsCLI,
fsspec) get ``ca_file()`` (and $REQUESTS_CA_BUNDLE, which HdfsCLI and fsspec read), Thrift
clients connect with TLS, and Spark gets a configuration directory holding Hadoop's
ssl-client.xml and a PKCS12 truststore (``spark_conf_dir``)."""

from __future__ import annotations

import os
import tempfile
import threading
from pathlib import Path

from tests.support.tls import ssl_client_xml_for, truststore

_ca: str = ""
_spark_dir: Path | None = None
_lock = threading.Lock()


def use(targets) -> None:
    global _ca
    _ca = targets.ca_file if targets.tls else ""
    if _ca:
        if not Path(_ca).exists():
            raise FileNotFoundError(f"the deployment's CA {_ca} is not on this machine (HOPSHIVE_CA_FILE)")
        os.environ["REQUESTS_CA_BUNDLE"] = _ca


def ca_file() -> str | None:
    """The CA file to verify with when the services serve TLS, else None (plain clients)."""
    return _ca or None


def spark_conf_dir() -> str | None:
    """A directory for SPARK_CONF_DIR (on the JVM's classpath) with ssl-client.xml and the
    truststore it names, made once per run; None without TLS."""
    global _spark_dir
    if not _ca:
        return None
    with _lock:
        if _spark_dir is None:
            directory = Path(tempfile.mkdtemp(prefix="hopshive-harness-tls-"))
            (directory / "ssl-client.xml").write_text(ssl_client_xml_for(truststore(Path(_ca),
                                                                                   directory / "truststore.p12")))
            _spark_dir = directory
    return str(_spark_dir)


def truststore_file() -> str | None:
    """The PKCS12 truststore with the deployment's CA (Java clients: beeline), else None."""
    directory = spark_conf_dir()
    return str(Path(directory) / "truststore.p12") if directory else None
