"""Reads one call, runs the handler, writes the reply.

Unlike the generated ``Processor``: methods the handler does not implement answer
TApplicationException(UNKNOWN_METHOD) -- and unknown *oneway* calls (Spark's fb303
``shutdown`` when it drops a client) are read and dropped without a reply, which is all a
oneway caller accepts.  Errors are placed by ``errors.place_error`` (one mapping for all
methods).  Handler methods take the session first, then the call's arguments by name.
Every call served is counted here (``metrics.CallMetrics``), whichever method it is.
"""

from __future__ import annotations

import logging
import time

from thrift.protocol.TProtocol import TProtocolBase
from thrift.Thrift import TApplicationException, TMessageType, TType

from ..metrics import CallMetrics
from .bindings import Method, idl_methods
from .errors import place_error

log = logging.getLogger(__name__)


class Processor:
    def __init__(self, handler, metrics: CallMetrics):
        self.handler = handler
        self.metrics = metrics
        self.methods: dict[str, tuple[Method, object]] = {}
        for name, method in idl_methods().items():
            function = getattr(handler, name, None)
            if callable(function):
                self.methods[name] = (method, function)

    def process(self, iprot: TProtocolBase, oprot: TProtocolBase, session) -> None:
        """Handle one message; transport and protocol errors propagate (the caller closes
        the connection)."""
        name, kind, seqid = iprot.readMessageBegin()
        entry = self.methods.get(name)
        if entry is None:
            iprot.skip(TType.STRUCT)
            iprot.readMessageEnd()
            if kind == TMessageType.ONEWAY:
                log.debug("dropped unknown oneway call", extra={"method": name})
                return
            self._encode(oprot, name, TMessageType.EXCEPTION, seqid, TApplicationException(
                TApplicationException.UNKNOWN_METHOD, f"Invalid method name: '{name}'"))
            oprot.trans.flush()
            return
        method, function = entry
        args = method.args()
        args.read(iprot)
        iprot.readMessageEnd()
        started = time.monotonic()
        if method.result is None or kind == TMessageType.ONEWAY:
            error = None
            try:
                function(session, **{n: getattr(args, n) for n in method.arg_names})
            except Exception as exc:  # noqa: BLE001 -- nobody waits for a oneway call's outcome
                error = type(exc).__name__
                log.exception("oneway call failed", extra={"method": name})
            self.metrics.observe(name, time.monotonic() - started, error=error)
            return
        result = method.result()
        reply_kind, reply, value, error = TMessageType.REPLY, result, None, None
        try:
            value = function(session, **{n: getattr(args, n) for n in method.arg_names})
            if hasattr(result, "success"):
                result.success = value
        except Exception as exc:  # noqa: BLE001 -- every error becomes a reply, never a dropped call
            placed = place_error(name, result, exc)
            if isinstance(placed, TApplicationException):
                reply_kind, reply = TMessageType.EXCEPTION, placed
            error = type(placed).__name__
            log.debug("call failed", extra={"method": name, "error": str(exc)})
        self._encode(oprot, name, reply_kind, seqid, reply)
        seconds = time.monotonic() - started
        session.calls += 1
        # Counted before the reply leaves: a client that scrapes /metrics after its answer
        # must find the call there.
        self.metrics.observe(name, seconds, value, error)
        oprot.trans.flush()
        log.debug("call", extra={"method": name, "ms": round(seconds * 1000, 2)})

    @staticmethod
    def _encode(oprot: TProtocolBase, name: str, kind: int, seqid: int, body) -> None:
        """Write the message into the transport's buffer (sent by ``flush``)."""
        oprot.writeMessageBegin(name, kind, seqid)
        body.write(oprot)
        oprot.writeMessageEnd()
