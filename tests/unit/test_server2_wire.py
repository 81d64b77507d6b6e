"""server2's hand-written FetchResults replies (wire.py), read back by Thrift's generated
client: the bytes around the encoded columns, and the processor that writes them."""

from __future__ import annotations

from impala_thrift_gen.TCLIService import TCLIService
from impala_thrift_gen.TCLIService import ttypes as t
from thrift.protocol.TBinaryProtocol import TBinaryProtocol, TBinaryProtocolAccelerated
from thrift.Thrift import TMessageType
from thrift.transport import TTransport

from hopshive.server2.rowsets import list_columns
from hopshive.server2.wire import Fetched, Processor, encode_columns, fetch_reply
from tests.support.tcli import decoded_reply

SCHEMA = [("a", "int", "INT_TYPE"), ("s", "string", "STRING_TYPE")]


def test_a_reply_carries_its_columns_and_whether_more_rows_follow():
    encoded = encode_columns(list_columns(SCHEMA, [[1, None, 3], ["x", "y", None]]))
    reply = decoded_reply(fetch_reply(Fetched(encoded, 2, True)))
    assert reply.status.statusCode == t.TStatusCode.SUCCESS_STATUS and reply.hasMoreRows is True
    assert reply.results == t.TRowSet(startRowOffset=0, rows=[], columnCount=2,
                                      columns=list_columns(SCHEMA, [[1, None, 3], ["x", "y", None]]))


def test_a_reply_of_no_columns_and_no_more_rows():
    reply = decoded_reply(fetch_reply(Fetched(b"", 0, False)))
    assert reply.hasMoreRows is False and reply.results.columns == [] and reply.results.columnCount == 0


class _Handler:
    """Answers FetchResults as server2's handler does: Fetched rows, or a response with an error."""

    def __init__(self, response):
        self.response = response

    def FetchResults(self, req):
        return self.response


def _round_trip(response, seqid: int = 7) -> t.TFetchResultsResp:
    """A FetchResults call from the generated client, processed, and its reply read back."""
    request = TTransport.TMemoryBuffer()
    client = TCLIService.Client(TBinaryProtocol(request))
    client._seqid = seqid
    client.send_FetchResults(t.TFetchResultsReq(operationHandle=t.TOperationHandle(
        operationId=t.THandleIdentifier(b"g" * 16, b"s" * 16), operationType=0, hasResultSet=True),
        orientation=0, maxRows=10))
    reply = TTransport.TMemoryBuffer()
    Processor(_Handler(response)).process(TBinaryProtocol(TTransport.TMemoryBuffer(request.getvalue())),
                                          TBinaryProtocol(reply))
    reader = TCLIService.Client(TBinaryProtocol(TTransport.TMemoryBuffer(reply.getvalue())))
    return reader.recv_FetchResults()


def test_the_processor_writes_fetched_rows_as_a_reply_to_the_call():
    encoded = encode_columns(list_columns(SCHEMA, [[5], ["five"]]))
    response = _round_trip(Fetched(encoded, 2, False))
    assert response.hasMoreRows is False
    assert response.results.columns == list_columns(SCHEMA, [[5], ["five"]])


def test_the_processor_writes_a_failed_fetch_as_generated():
    failed = t.TFetchResultsResp(status=t.TStatus(statusCode=t.TStatusCode.ERROR_STATUS, sqlState="HY010",
                                                  errorMessage="no such operation"))
    assert _round_trip(failed) == failed


def test_an_unknown_call_with_a_binary_handle_is_answered_unknown_method():
    """impyla closes operations with Impala's CloseImpalaOperation first; the handle's bytes
    must not end the connection."""
    from impala._thrift_gen.ImpalaService.ImpalaHiveServer2Service import Client, TCloseImpalaOperationReq
    from thrift.Thrift import TApplicationException
    request = TTransport.TMemoryBuffer()
    handle = t.TOperationHandle(t.THandleIdentifier(b"\x8f" * 16, b"\xff" * 16), 0, True)
    Client(TBinaryProtocol(request)).send_CloseImpalaOperation(TCloseImpalaOperationReq(operationHandle=handle))
    reply = TTransport.TMemoryBuffer()
    Processor(None).process(TBinaryProtocolAccelerated(TTransport.TMemoryBuffer(request.getvalue())),
                            TBinaryProtocolAccelerated(reply))
    answer = TBinaryProtocol(TTransport.TMemoryBuffer(reply.getvalue()))
    assert answer.readMessageBegin()[:2] == ("CloseImpalaOperation", TMessageType.EXCEPTION)
    error = TApplicationException()
    error.read(answer)
    assert error.type == TApplicationException.UNKNOWN_METHOD
