"""Reading what server2 writes by hand (server2/wire.py) back with Thrift's own decoder."""

from __future__ import annotations

from impala_thrift_gen.TCLIService import TCLIService
from impala_thrift_gen.TCLIService import ttypes as t
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.transport import TTransport


def decoded_columns(encoded: bytes, count: int) -> list[t.TColumn]:
    """``count`` TColumns from the encoded elements of a TRowSet's columns; all bytes used."""
    buffer = TTransport.TMemoryBuffer(encoded)
    protocol = TBinaryProtocol(buffer)
    columns = []
    for _ in range(count):
        column = t.TColumn()
        column.read(protocol)
        columns.append(column)
    assert buffer.cstringio_buf.read() == b"", "bytes left after the columns"
    return columns


def decoded_reply(reply: bytes) -> t.TFetchResultsResp:
    """A FetchResults_result as written by wire.fetch_reply; all bytes used."""
    buffer = TTransport.TMemoryBuffer(reply)
    result = TCLIService.FetchResults_result()
    result.read(TBinaryProtocol(buffer))
    assert buffer.cstringio_buf.read() == b"", "bytes left after the reply"
    return result.success
