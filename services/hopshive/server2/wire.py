"""FetchResults replies written from columns already encoded, not from Python objects.

A fetch's columns are encoded once, where the rows are (the engine: Arrow columns by
arrow_columns.py, other rows by Thrift's own encoder here), and travel to the client as
bytes: server2 adds the few bytes around them (``fetch_reply``) and the processor writes
them.  Building a TColumn of Python values and encoding it again cost server2 ~2 ms per
10,000 rows, most of its CPU in a large fetch.

The layout is Thrift's binary protocol (what TBinaryProtocol and its C accelerator write):
a field is ``[type:1][id:2]`` then its value, a struct ends with a 0 byte, a list is
``[element type:1][count:4]`` then its elements, all big-endian.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from impala_thrift_gen.TCLIService import TCLIService
from impala_thrift_gen.TCLIService import ttypes as t
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.transport import TTransport

STOP = b"\x00"


def field(kind: int, field_id: int) -> bytes:
    return struct.pack(">bh", kind, field_id)


def list_header(element: int, count: int) -> bytes:
    return struct.pack(">bi", element, count)


def encode_columns(columns: list[t.TColumn]) -> bytes:
    """TColumn objects as the elements of TRowSet.columns (Thrift's encoder)."""
    buffer = TTransport.TMemoryBuffer()
    protocol = TBinaryProtocolAccelerated(buffer)
    for column in columns:
        column.write(protocol)
    return buffer.getvalue()


@dataclass(frozen=True)
class Fetched:
    """A successful FetchResults: ``columns`` encoded (encode_columns, arrow_columns)."""

    columns: bytes
    column_count: int
    has_more_rows: bool


def fetch_reply(fetched: Fetched) -> bytes:
    """FetchResults_result{success: TFetchResultsResp{status: SUCCESS, hasMoreRows,
    results: TRowSet{startRowOffset: 0, rows: [], columns, columnCount}}}."""
    status = field(TType.STRUCT, 1) + field(TType.I32, 1) + struct.pack(">i", t.TStatusCode.SUCCESS_STATUS) + STOP
    more = field(TType.BOOL, 2) + (b"\x01" if fetched.has_more_rows else b"\x00")
    rowset = (field(TType.STRUCT, 3) + field(TType.I64, 1) + struct.pack(">q", 0)
              + field(TType.LIST, 2) + list_header(TType.STRUCT, 0)
              + field(TType.LIST, 3) + list_header(TType.STRUCT, fetched.column_count) + fetched.columns
              + field(TType.I32, 5) + struct.pack(">i", fetched.column_count) + STOP)
    return field(TType.STRUCT, 0) + status + more + rowset + STOP + STOP


def skip(protocol, kind: int) -> None:
    """Skip a value of type ``kind``, strings as bytes: Thrift's own ``skip`` decodes them as
    UTF-8 and fails on a binary handle id."""
    if kind == TType.STRING:
        protocol.readBinary()
    elif kind == TType.STRUCT:
        protocol.readStructBegin()
        while (member := protocol.readFieldBegin()[1]) != TType.STOP:
            skip(protocol, member)
            protocol.readFieldEnd()
        protocol.readStructEnd()
    elif kind == TType.MAP:
        key, value, size = protocol.readMapBegin()
        for _ in range(size):
            skip(protocol, key)
            skip(protocol, value)
        protocol.readMapEnd()
    elif kind in (TType.LIST, TType.SET):
        element, size = protocol.readListBegin()
        for _ in range(size):
            skip(protocol, element)
        protocol.readListEnd()
    else:
        protocol.skip(kind)


class Processor(TCLIService.Processor):
    """TCLIService's processor, with FetchResults replies written from ``Fetched`` bytes;
    every other reply (and a failed fetch, a TFetchResultsResp with its error) as generated.
    A call it does not know is answered UNKNOWN_METHOD, and the connection lives on: impyla
    tries Impala's CloseImpalaOperation and the pre-Hive-0.13 GetLog first, and falls back on
    that answer (HiveServer2's, whose service has neither)."""

    def __init__(self, handler):
        super().__init__(handler)
        self._processMap["FetchResults"] = Processor.process_FetchResults     # it maps to the base's
        del self._processMap["GetLog"]

    def process(self, iprot, oprot):
        name, _, seqid = iprot.readMessageBegin()
        if name in self._processMap:
            self._processMap[name](self, seqid, iprot, oprot)
            return True
        skip(iprot, TType.STRUCT)
        iprot.readMessageEnd()
        oprot.writeMessageBegin(name, TMessageType.EXCEPTION, seqid)
        TApplicationException(TApplicationException.UNKNOWN_METHOD, f"Unknown function {name}").write(oprot)
        oprot.writeMessageEnd()
        oprot.trans.flush()
        return None

    def process_FetchResults(self, seqid, iprot, oprot):
        args = TCLIService.FetchResults_args()
        args.read(iprot)
        iprot.readMessageEnd()
        response = self._handler.FetchResults(args.req)     # errors are already its status
        oprot.writeMessageBegin("FetchResults", TMessageType.REPLY, seqid)
        if isinstance(response, Fetched):
            oprot.trans.write(fetch_reply(response))
        else:
            TCLIService.FetchResults_result(success=response).write(oprot)
        oprot.writeMessageEnd()
        oprot.trans.flush()
