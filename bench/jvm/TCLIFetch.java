import java.util.Collections;

import org.apache.hive.service.rpc.thrift.TCLIService;
import org.apache.hive.service.rpc.thrift.TCloseOperationReq;
import org.apache.hive.service.rpc.thrift.TCloseSessionReq;
import org.apache.hive.service.rpc.thrift.TExecuteStatementReq;
import org.apache.hive.service.rpc.thrift.TFetchOrientation;
import org.apache.hive.service.rpc.thrift.TFetchResultsReq;
import org.apache.hive.service.rpc.thrift.TFetchResultsResp;
import org.apache.hive.service.rpc.thrift.TGetOperationStatusReq;
import org.apache.hive.service.rpc.thrift.TOpenSessionReq;
import org.apache.hive.service.rpc.thrift.TOperationHandle;
import org.apache.hive.service.rpc.thrift.TOperationState;
import org.apache.hive.service.rpc.thrift.TProtocolVersion;
import org.apache.hive.service.rpc.thrift.TSessionHandle;
import org.apache.hive.service.rpc.thrift.TStatusCode;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.transport.TSocket;

/**
 * A large fetch through TCLIService with the JVM's Thrift classes and nothing else: what a
 * HiveServer2 endpoint costs when the client is not the bottleneck (PyHive decodes in pure
 * Python; Hive JDBC 2.3 calls GetOperationStatus once per row).  NOSASL; prints one line per run:
 * "ms <execute to the last row> rows <count> finished <execute to FINISHED, the statement run>".
 *
 *   java -cp 'pyspark/jars/*:DIR' TCLIFetch HOST PORT USER PASSWORD DATABASE SQL FETCH_SIZE REPEAT
 */
public class TCLIFetch {
  public static void main(String[] args) throws Exception {
    String host = args[0], user = args[2], password = args[3], database = args[4], sql = args[5];
    int port = Integer.parseInt(args[1]), fetchSize = Integer.parseInt(args[6]), repeat = Integer.parseInt(args[7]);
    TSocket socket = new TSocket(host, port);
    socket.open();
    TCLIService.Client client = new TCLIService.Client(new TBinaryProtocol(socket));
    TOpenSessionReq open = new TOpenSessionReq(TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10);
    open.setUsername(user);
    if (!password.isEmpty()) {
      open.setPassword(password);
    }
    open.setConfiguration(Collections.singletonMap("use:database", database));
    TSessionHandle session = client.OpenSession(open).getSessionHandle();
    for (int run = 0; run < repeat; run++) {
      long start = System.nanoTime();
      TExecuteStatementReq execute = new TExecuteStatementReq(session, sql);
      execute.setRunAsync(true);
      TOperationHandle operation = client.ExecuteStatement(execute).getOperationHandle();
      awaitFinished(client, operation);
      long finished = System.nanoTime();
      long rows = 0;
      while (true) {
        TFetchResultsResp fetched = client.FetchResults(
            new TFetchResultsReq(operation, TFetchOrientation.FETCH_NEXT, fetchSize));
        if (fetched.getStatus().getStatusCode() != TStatusCode.SUCCESS_STATUS) {
          throw new IllegalStateException(fetched.getStatus().getErrorMessage());
        }
        int count = fetched.getResults().getColumns().get(0).getI64Val().getValuesSize();
        if (count == 0) {
          break;
        }
        rows += count;
      }
      System.out.printf("ms %.1f rows %d finished %.1f%n", (System.nanoTime() - start) / 1e6, rows,
          (finished - start) / 1e6);
      client.CloseOperation(new TCloseOperationReq(operation));
    }
    client.CloseSession(new TCloseSessionReq(session));
    socket.close();
  }

  private static void awaitFinished(TCLIService.Client client, TOperationHandle operation) throws Exception {
    while (true) {
      TOperationState state = client.GetOperationStatus(new TGetOperationStatusReq(operation)).getOperationState();
      if (state == TOperationState.FINISHED_STATE) {
        return;
      }
      if (state != TOperationState.INITIALIZED_STATE && state != TOperationState.PENDING_STATE
          && state != TOperationState.RUNNING_STATE) {
        throw new IllegalStateException("the statement ended " + state);
      }
    }
  }
}
