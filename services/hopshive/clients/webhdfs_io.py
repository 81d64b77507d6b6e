"""A pyiceberg FileIO for ``webhdfs://`` and ``swebhdfs://`` (https) locations, so Iceberg
tables live on the namespace without a JVM: pyiceberg's own FileIOs reach HDFS only through
libhdfs, and fsspec has no ``swebhdfs``.

Chosen with the catalog property ``py-io-impl=hopshive.clients.webhdfs_io.WebHdfsFileIO``,
or by nothing at all once this module is imported (``TokenHiveCatalog`` imports it): it
registers itself as pyiceberg's FileIO for both schemes.

Identity and trust, as every client of ours (``hopshive.cli.client``):

- ``hopshive.token``: a delegation token's urlString (the one the platform gives a project
  member serves the namenodes and the metastores alike); else the WebHDFS token of the
  Hadoop token file $HADOOP_TOKEN_FILE_LOCATION; else no token, and ``hopshive.user`` (or
  $HADOOP_USER_NAME, or the OS user) is sent as user.name, which only a namenode in simple
  mode believes.
- ``hopshive.ca-file``: the CA an https namenode is verified with; else $HOPSHIVE_CA_FILE or
  the deployment's CA file on this host; else $REQUESTS_CA_BUNDLE or the system's store.

Reads are ranged OPENs (``offset``/``length``) on one kept-alive ``requests.Session`` per
namenode; a read smaller than ``READ_AHEAD`` fetches that much and serves the next reads
from it (Parquet footers, Avro blocks).  Writes stream: CREATE's data request is a chunked
upload fed by ``write`` while it runs, so a file is never held in memory.

A location names its namenode by host:port, or several by a logical name (``swebhdfs://hopshive/``,
as Hadoop's HA client does): ``hopshive.namenodes`` (host:port,...) lists them, else the
Hadoop client configuration in $HADOOP_CONF_DIR does; the first that answers is used from
then on (every namenode serves the whole namespace; a call is not retried on another).
"""

from __future__ import annotations

import getpass
import os
import queue
import threading
from pathlib import Path
from types import TracebackType
from urllib.parse import unquote, urlsplit

try:
    from pyiceberg.io import SCHEMA_TO_FILE_IO, FileIO, InputFile, InputStream, OutputFile, OutputStream
    from pyiceberg.typedef import EMPTY_DICT, Properties
except ImportError as exc:      # the client extra is not installed
    raise ImportError(f"hopshive.clients.webhdfs_io needs pyiceberg ({exc}): pip install 'hopshive[iceberg]'") from exc

from ..cli.client import DfsError, RemoteError, WebHdfsClient
from ..core.tls import default_ca_file
from ..security.token_files import namenodes_of_client_conf, webhdfs_token_of

TOKEN = "hopshive.token"
USER = "hopshive.user"
CA_FILE = "hopshive.ca-file"
NAMENODES = "hopshive.namenodes"
SCHEMES = {"webhdfs": ("http", 9870), "swebhdfs": ("https", 9871)}     # Hadoop's default ports
READ_AHEAD = 1 << 20
QUEUED_WRITES = 16          # write() calls in flight before write() waits for the upload
ERRORS = {"FileNotFoundException": FileNotFoundError, "FileAlreadyExistsException": FileExistsError,
          "AccessControlException": PermissionError, "SecurityException": PermissionError}


def _os_error(exc: DfsError, location: str) -> OSError:
    """A namenode's answer as the OSError pyiceberg expects (FileNotFoundError, ...)."""
    kind = ERRORS.get(exc.exception, OSError) if isinstance(exc, RemoteError) else OSError
    return kind(f"{location}: {exc}")


class WebHdfsFileIO(FileIO):
    def __init__(self, properties: Properties = EMPTY_DICT):
        super().__init__(properties)
        self._clients: dict[tuple[str, str], WebHdfsClient] = {}
        self._lock = threading.Lock()

    def client(self, location: str) -> tuple[WebHdfsClient, str]:
        """The client of the namenode ``location`` names (one per namenode, kept), and the
        location's path."""
        parts = urlsplit(location)
        if parts.scheme not in SCHEMES:
            raise ValueError(f"{location}: WebHdfsFileIO reads webhdfs:// and swebhdfs:// locations only")
        if not parts.hostname:
            raise ValueError(f"{location}: no namenode in the location")
        http = SCHEMES[parts.scheme][0]
        with self._lock:
            client = self._clients.get((http, parts.netloc))
            if client is None:
                client = self._connect(http, self._addresses(parts))
                self._clients[(http, parts.netloc)] = client
        return client, unquote(parts.path) or "/"

    def _addresses(self, parts) -> list[str]:
        """host:port of the namenode(s) a location's authority names."""
        if parts.port:
            return [f"{parts.hostname}:{parts.port}"]
        listed = [a.strip() for a in self.properties.get(NAMENODES, "").split(",") if a.strip()]
        if not listed and os.environ.get("HADOOP_CONF_DIR"):
            namenodes, nameservices = namenodes_of_client_conf(os.environ["HADOOP_CONF_DIR"])
            listed = namenodes if parts.hostname in nameservices else []
        return listed or [f"{parts.hostname}:{SCHEMES[parts.scheme][1]}"]

    def _connect(self, http: str, addresses: list[str]) -> WebHdfsClient:
        """A client of the first of ``addresses`` that answers (of the only one, unasked)."""
        ca_file = self.properties.get(CA_FILE) or default_ca_file(os.environ)
        clients = [WebHdfsClient(f"{http}://{a}", self._user(), self._token(a), ca_file) for a in addresses]
        for client in clients[:-1]:
            try:
                client.status("/")
                return client
            except RemoteError:
                return client
            except DfsError:
                continue
        return clients[-1]

    def _token(self, address: str) -> str | None:
        if self.properties.get(TOKEN):
            return self.properties[TOKEN]
        path = os.environ.get("HADOOP_TOKEN_FILE_LOCATION")
        found = webhdfs_token_of(Path(path).read_bytes(), address) if path else None
        return found.url_string() if found else None

    def _user(self) -> str:
        return self.properties.get(USER) or os.environ.get("HADOOP_USER_NAME") or getpass.getuser()

    def new_input(self, location: str) -> WebHdfsInputFile:
        return WebHdfsInputFile(location, *self.client(location))

    def new_output(self, location: str) -> WebHdfsOutputFile:
        return WebHdfsOutputFile(location, *self.client(location))

    def delete(self, location: str | InputFile | OutputFile) -> None:
        where = location.location if isinstance(location, (InputFile, OutputFile)) else location
        client, path = self.client(where)
        try:
            deleted = client.delete(path, recursive=False)
        except DfsError as exc:
            raise _os_error(exc, where) from None
        if not deleted:
            raise FileNotFoundError(f"Cannot delete file, does not exist: {where}")


class _File:
    def __init__(self, location: str, client: WebHdfsClient, path: str):
        self._location, self.client, self.path = location, client, path

    def _status(self) -> dict | None:
        try:
            return self.client.status(self.path)
        except DfsError as exc:
            raise _os_error(exc, self._location) from None

    def exists(self) -> bool:
        return self._status() is not None

    def __len__(self) -> int:
        status = self._status()
        if status is None:
            raise FileNotFoundError(f"Cannot get the length of {self._location}: it does not exist")
        return int(status["length"])


class WebHdfsInputFile(_File, InputFile):
    def open(self, seekable: bool = True) -> InputStream:
        status = self._status()
        if status is None:
            raise FileNotFoundError(f"Cannot open file, does not exist: {self._location}")
        if status["type"] != "FILE":
            raise IsADirectoryError(f"Cannot open {self._location}: it is a directory")
        return RangedReader(self.client, self.path, int(status["length"]), self._location)


class WebHdfsOutputFile(_File, OutputFile):
    def to_input_file(self) -> WebHdfsInputFile:
        return WebHdfsInputFile(self._location, self.client, self.path)

    def create(self, overwrite: bool = False) -> OutputStream:
        if not overwrite and self.exists():
            raise FileExistsError(f"Cannot create file, already exists: {self._location}")
        return StreamingWriter(self.client, self.path, overwrite, self._location)


class RangedReader(InputStream):
    """A seekable stream of one file of known length: each read not served by the
    read-ahead buffer is one ranged OPEN."""

    def __init__(self, client: WebHdfsClient, path: str, length: int, location: str):
        self.client, self.path, self.length, self.location = client, path, length, location
        self.position = 0
        self.buffer, self.buffer_start = b"", 0
        self.closed = False

    def read(self, size: int = -1) -> bytes:
        if self.closed:
            raise ValueError(f"{self.location}: read from a closed stream")
        size = self.length - self.position if size is None or size < 0 else min(size, self.length - self.position)
        if size <= 0:
            return b""
        offset = self.position - self.buffer_start
        if not 0 <= offset or offset + size > len(self.buffer):
            try:
                self.buffer = self.client.read_range(self.path, self.position, max(size, READ_AHEAD))
            except DfsError as exc:
                raise _os_error(exc, self.location) from None
            self.buffer_start, offset = self.position, 0
        data = self.buffer[offset:offset + size]
        self.position += len(data)
        return data

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self.position, os.SEEK_END: self.length}[whence]
        if base + offset < 0:
            raise ValueError(f"{self.location}: seek to a negative position")
        self.position = base + offset
        return self.position

    def tell(self) -> int:
        return self.position

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def close(self) -> None:
        self.closed, self.buffer = True, b""

    def __enter__(self) -> RangedReader:
        return self

    def __exit__(self, exctype: type[BaseException] | None, excinst: BaseException | None,
                 exctb: TracebackType | None) -> None:
        self.close()


class StreamingWriter(OutputStream):
    """CREATE's upload runs in a thread, its body the chunks ``write`` hands over; ``close``
    ends the body and waits for the namenode's answer (and raises its error)."""

    def __init__(self, client: WebHdfsClient, path: str, overwrite: bool, location: str):
        self.location = location
        self.chunks: queue.Queue[bytes | None] = queue.Queue(QUEUED_WRITES)
        self.written = 0
        self.error: BaseException | None = None
        self.closed = False
        self.upload = threading.Thread(target=self._upload, args=(client, path, overwrite), daemon=True,
                                       name="webhdfs-create")
        self.upload.start()

    def _body(self):
        while (chunk := self.chunks.get()) is not None:
            yield chunk

    def _upload(self, client: WebHdfsClient, path: str, overwrite: bool) -> None:
        try:
            client.create_from(path, self._body(), overwrite)
        except BaseException as exc:        # noqa: BLE001 -- handed to the writer's thread in close()
            self.error = exc
            while self.chunks.get() is not None:    # let write() and close() finish
                pass

    def write(self, b: bytes) -> int:
        if self.closed:
            raise ValueError(f"{self.location}: write to a closed stream")
        if self.error is None and len(b):
            self.chunks.put(bytes(b))
            self.written += len(b)
        return len(b)

    def tell(self) -> int:
        return self.written

    def writable(self) -> bool:
        return True

    def flush(self) -> None:
        """Nothing to do: every write is already on its way."""

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.chunks.put(None)
        self.upload.join()
        if isinstance(self.error, DfsError):
            raise _os_error(self.error, self.location)
        if self.error is not None:
            raise OSError(f"{self.location}: {self.error}") from self.error

    def __enter__(self) -> StreamingWriter:
        return self

    def __exit__(self, exctype: type[BaseException] | None, excinst: BaseException | None,
                 exctb: TracebackType | None) -> None:
        self.close()


for _scheme in SCHEMES:
    SCHEMA_TO_FILE_IO.setdefault(_scheme, [f"{__name__}.{WebHdfsFileIO.__name__}"])
