"""The Thrift1 wire: the ``Hbase.thrift`` IDL that happybase ships, loaded with thriftpy2
(the same file the client speaks, so the two cannot drift); framed-less binary protocol on
a buffered transport (happybase's default); one thread per connection.

Errors are mapped here and only here: a library error becomes the IDL exception the call
declares (AlreadyExists, IllegalArgument, else IOError), or a TApplicationException when the
call declares none -- the connection stays usable either way.  Anything unexpected is
logged with its traceback and answered as IOError("internal error: ...").
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from importlib import resources

import thriftpy2
from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.thrift import TApplicationException, TProcessor
from thriftpy2.transport import TBufferedTransportFactory, TSocket, TTransportException

from ..core.service import accepted
from .exceptions import HBaseError, IllegalArgument, TableExists

log = logging.getLogger("hopshive.hbase")


def load_idl():
    """The IDL module (structs, exceptions, the ``Hbase`` service)."""
    path = resources.files("happybase") / "Hbase.thrift"
    return thriftpy2.load(str(path), module_name="hopshive_hbase_thrift")


class ErrorMapping:
    """Wraps a handler: every call's library errors become the IDL's exceptions; each
    answered call is passed to ``observe(method, outcome, seconds)`` when given (metrics)."""

    def __init__(self, handler, api, observe=None):
        self._handler = handler
        self._api = api
        self._observe = observe
        self._declared = {name: {spec[2] for key, spec in getattr(api.Hbase, f"{name}_result").thrift_spec.items()
                                 if spec[1] != "success"}
                          for name in api.Hbase.thrift_services}

    def __getattr__(self, name):
        method = getattr(self._handler, name)
        declared = self._declared.get(name, set())
        def call(*args, **kwargs):
            started, outcome = time.perf_counter(), "ok"
            try:
                return method(*args, **kwargs)
            except HBaseError as exc:
                outcome = "error"
                raise self._translate(exc, declared) from None
            except Exception as exc:  # noqa: BLE001 -- a bug must not kill the connection
                outcome = "internal"
                log.exception("internal error", extra={"call": name})
                raise self._translate(HBaseError(f"internal error: {exc!r}"), declared) from None
            finally:
                if self._observe is not None:
                    self._observe(name, outcome, time.perf_counter() - started)

        call.__name__ = name
        return call

    def _translate(self, exc: HBaseError, declared: set) -> Exception:
        api = self._api
        if isinstance(exc, TableExists) and api.AlreadyExists in declared:
            return api.AlreadyExists(message=str(exc))
        if isinstance(exc, IllegalArgument) and api.IllegalArgument in declared:
            return api.IllegalArgument(message=str(exc))
        if api.IOError in declared:
            return api.IOError(message=f"{type(exc).__name__}: {exc}")
        return TApplicationException(TApplicationException.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")


class ThriftServer:
    """Accept loop with one thread per connection; ``stop`` closes the listener and lets
    calls in progress finish."""

    def __init__(self, sock: socket.socket, handler, api, read_timeout: float = 600.0, observe=None):
        self.sock = sock
        self.processor = TProcessor(api.Hbase, ErrorMapping(handler, api, observe))
        self.read_timeout = read_timeout
        self.stopping = threading.Event()
        self._threads: set[threading.Thread] = set()
        self._proto = TBinaryProtocolFactory()
        self._trans = TBufferedTransportFactory()

    def serve(self) -> None:
        for client, peer in accepted(self.sock, self.stopping):
            client.settimeout(self.read_timeout)
            # a response larger than the transport's buffer goes out in several writes: without
            # NODELAY the last one waits for the client's delayed ACK (~40 ms per call)
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            thread = threading.Thread(target=self._connection, args=(client, peer), daemon=True)
            self._threads.add(thread)
            thread.start()

    def _connection(self, client: socket.socket, peer) -> None:
        transport = self._trans.get_transport(TSocket(sock=client))
        protocol = self._proto.get_protocol(transport)
        try:
            while not self.stopping.is_set():
                self.processor.process(protocol, protocol)
        except TTransportException:
            pass
        except (OSError, EOFError):
            pass
        except Exception:  # noqa: BLE001 -- a malformed message closes this connection only
            log.warning("connection closed after a protocol error", extra={"peer": str(peer)}, exc_info=True)
        finally:
            transport.close()
            self._threads.discard(threading.current_thread())

    def stop(self, grace: float) -> None:
        self.stopping.set()
        try:
            self.sock.close()
        except OSError:
            pass
        for thread in list(self._threads):
            thread.join(grace)
