"""pyiceberg's Hive catalog on metastores that believe only delegation tokens.

pyiceberg's HiveCatalog speaks Thrift without SASL (or with Kerberos), so a metastore in
token mode refuses it.  ``TokenHiveCatalog`` opens each connection with SASL DIGEST-MD5 and
the Hive token of the user's Hadoop token file (``$HADOOP_TOKEN_FILE_LOCATION``, where
``hopshive-platform login`` points login shells), or of the urlString given as the catalog
property ``hopshive.token``; over TLS, verified with the CA file of the property
``hopshive.ca-file``, when that is set (a metastore serving TLS; Thrift cannot tell by
itself).  Everything else is pyiceberg's own::

    from pyiceberg.catalog import load_catalog
    catalog = load_catalog("hopshive", **{"py-catalog-impl": "hopshive.clients.pyiceberg.TokenHiveCatalog",
                                          "uri": "thrift://metastore:9083"})

Importing it registers ``webhdfs_io.WebHdfsFileIO`` for ``webhdfs://`` and ``swebhdfs://``
locations, so tables under the warehouse need no FileIO property.  It subclasses pyiceberg's
private ``_HiveClient`` (pyiceberg is pinned in
requirements-test.txt, where the tests check it).  The first URI is used.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlparse

from pyiceberg.catalog.hive import URI, HiveCatalog, _HiveClient
from thrift.transport import TSocket, TSSLSocket

from ..core.tls import client_context
from ..security.sasl_client import digest_md5_transport
from ..security.tokens import HIVE_KIND, Token, read_credentials_file
from .webhdfs_io import CA_FILE, TOKEN as TOKEN_PROPERTY  # importing it registers the FileIO of webhdfs://


def hive_token(url_string: str | None = None, environ=os.environ) -> Token:
    """The token to authenticate with: ``url_string``, else the Hive token of the file
    $HADOOP_TOKEN_FILE_LOCATION names."""
    if url_string:
        return Token.from_url_string(url_string)
    path = environ.get("HADOOP_TOKEN_FILE_LOCATION")
    if not path:
        raise ValueError(f"no token: set the catalog property {TOKEN_PROPERTY} or HADOOP_TOKEN_FILE_LOCATION "
                         "(hopshive-platform login writes the file)")
    found = [t for t in read_credentials_file(Path(path).read_bytes()).values() if t.kind == HIVE_KIND]
    if not found:
        raise ValueError(f"{path} holds no Hive token")
    return found[0]


class _TokenHiveClient(_HiveClient):
    def __init__(self, uri: str, token: Token, ca_file: str | None):
        self._token, self._ca_file = token, ca_file
        super().__init__(uri)

    def _init_thrift_transport(self):
        parts = urlparse(self._uri)
        socket = (TSSLSocket.TSSLSocket(parts.hostname, parts.port, ssl_context=client_context(self._ca_file))
                  if self._ca_file else TSocket.TSocket(parts.hostname, parts.port))
        return digest_md5_transport(socket, self._token.identifier, self._token.password)


class TokenHiveCatalog(HiveCatalog):
    def __init__(self, name: str, **properties: str):
        self._token = hive_token(properties.get(TOKEN_PROPERTY))
        super().__init__(name, **properties)

    def _create_hive_client(self, properties: dict[str, str]) -> _HiveClient:
        return _TokenHiveClient(properties[URI].split(",")[0].strip(), self._token, properties.get(CA_FILE))
