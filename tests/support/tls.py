"""A private CA for component tests, made with the openssl command (as an operator would):
a CA certificate, a server certificate for 127.0.0.1 and localhost signed by it, and the
CA as a PKCS12 truststore made by Java's keytool for Hadoop's and Hive's Java clients.
The harness makes the truststore of a deployment's CA with the same helpers."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

TRUSTSTORE_PASSWORD = "changeit-test"


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)


@dataclass(frozen=True)
class TestCA:
    ca_file: Path
    cert_file: Path
    key_file: Path
    truststore: Path

    def server_settings(self) -> dict:
        """The TLS keys of a service section (namenode, metastore, platform, server2)."""
        return {"tls_cert_file": str(self.cert_file), "tls_key_file": str(self.key_file)}


def make_ca(directory: Path, names: tuple[str, ...] = ("DNS:localhost", "IP:127.0.0.1")) -> TestCA:
    """CA key and certificate, and a server key and certificate (SANs ``names``) signed by it."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, ca_cert = directory / "ca.key", directory / "ca.pem"
    key, csr, cert = directory / "server.key", directory / "server.csr", directory / "server.pem"
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(ca_key), "-out", str(ca_cert),
             "-days", "2", "-subj", "/CN=HopsHive test CA", "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(csr),
             "-subj", "/CN=localhost")
    extensions = directory / "server.ext"
    extensions.write_text(f"subjectAltName={','.join(names)}\nextendedKeyUsage=serverAuth\n"
                          "basicConstraints=CA:FALSE\n")
    _openssl("x509", "-req", "-in", str(csr), "-CA", str(ca_cert), "-CAkey", str(ca_key), "-CAcreateserial",
             "-out", str(cert), "-days", "2", "-sha256", "-extfile", str(extensions))
    return TestCA(ca_cert, cert, key, truststore(ca_cert, directory / "truststore.p12"))


def truststore(ca_file: Path, path: Path) -> Path:
    """A PKCS12 truststore holding the CA certificate ``ca_file``, made by keytool (as
    roles/spark makes the deployment's)."""
    subprocess.run(["keytool", "-importcert", "-noprompt", "-alias", "hopshive-ca", "-file", str(ca_file),
                    "-keystore", str(path), "-storetype", "PKCS12", "-storepass", TRUSTSTORE_PASSWORD],
                   check=True, capture_output=True, timeout=120)
    return path


def ssl_client_xml(ca: TestCA) -> str:
    """Hadoop's ssl-client.xml: the truststore that WebHdfsFileSystem (swebhdfs://) checks with."""
    return ssl_client_xml_for(ca.truststore)


def ssl_client_xml_for(store: Path) -> str:
    """ssl-client.xml naming the truststore ``store`` (made by ``truststore``)."""
    properties = {"ssl.client.truststore.location": str(store),
                  "ssl.client.truststore.password": TRUSTSTORE_PASSWORD,
                  "ssl.client.truststore.type": "pkcs12"}
    body = "".join(f"<property><name>{k}</name><value>{v}</value></property>" for k, v in properties.items())
    return f"<?xml version=\"1.0\"?><configuration>{body}</configuration>\n"
