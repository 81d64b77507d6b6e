"""Reads one call, runs the handler, writes the reply.

Unlike the generated ``Processor``: methods the handler does not implement answer
TApplicationException(UNKNOWN_METHOD) -- and unknown *oneway* calls (Spark's fb303
``shutdown`` when it drops a client) are read and dropped without a reply, which is all a
oneway caller accepts.  Errors are placed by ``errors.place_error`` (one mapping for all
methods).  Handler methods take the session first, then the call's arguments by name.
"""

from __future__ import annotations

import logging
import time

from thrift.protocol.TProtocol import TProtocolBase
from thrift.Thrift import TApplicationException, TMessageType, TType

from .bindings import Method, idl_methods
from .errors import place_error

log = logging.getLogger(__name__)


class Processor:
    def __init__(self, handler):
        self.handler = handler
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
            self._write(oprot, name, TMessageType.EXCEPTION, seqid, TApplicationException(
                TApplicationException.UNKNOWN_METHOD, f"Invalid method name: '{name}'"))
            return
        method, function = entry
        args = method.args()
        args.read(iprot)
        iprot.readMessageEnd()
        started = time.monotonic()
        if method.result is None or kind == TMessageType.ONEWAY:
            try:
                function(session, **{n: getattr(args, n) for n in method.arg_names})
            except Exception:
                log.exception("oneway call failed", extra={"method": name})
            return
        result = method.result()
        reply_kind, reply = TMessageType.REPLY, result
        try:
            value = function(session, **{n: getattr(args, n) for n in method.arg_names})
            if hasattr(result, "success"):
                result.success = value
        except Exception as exc:  # noqa: BLE001 -- every error becomes a reply, never a dropped call
            failure = place_error(name, result, exc)
            if failure is not None:
                reply_kind, reply = TMessageType.EXCEPTION, failure
            log.debug("call failed", extra={"method": name, "error": str(exc)})
        self._write(oprot, name, reply_kind, seqid, reply)
        session.calls += 1
        log.debug("call", extra={"method": name, "ms": round((time.monotonic() - started) * 1000, 2)})

    @staticmethod
    def _write(oprot: TProtocolBase, name: str, kind: int, seqid: int, body) -> None:
        oprot.writeMessageBegin(name, kind, seqid)
        body.write(oprot)
        oprot.writeMessageEnd()
        oprot.trans.flush()
