// Hive 2.3's own metastore client (the one Spark's built-in Hive client wraps), configured
// as a job with a delegation token is: hive.metastore.sasl.enabled and the token signature,
// the token read by Hadoop's UGI from $HADOOP_TOKEN_FILE_LOCATION.
//
//   java -cp "$PYSPARK/jars/*:classes" MetastoreTokenClient thrift://HOST:PORT SIGNATURE ACTION...
//
// Actions: databases | table:DB.NAME.  Prints one line per
// action ("databases [a, b]", "table db.t owner=x"); a failure prints
// "ERROR <exception class>: <message>" and exits 1.
import java.util.Arrays;

import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.HiveMetaStoreClient;
import org.apache.hadoop.hive.metastore.api.Table;

public class MetastoreTokenClient {
    public static void main(String[] args) {
        HiveConf conf = new HiveConf();
        conf.setVar(HiveConf.ConfVars.METASTOREURIS, args[0]);
        conf.setBoolVar(HiveConf.ConfVars.METASTORE_USE_THRIFT_SASL, true);
        conf.setVar(HiveConf.ConfVars.METASTORE_TOKEN_SIGNATURE, args[1]);
        conf.setIntVar(HiveConf.ConfVars.METASTORETHRIFTCONNECTIONRETRIES, 1);
        conf.setTimeVar(HiveConf.ConfVars.METASTORE_CLIENT_CONNECT_RETRY_DELAY, 0, java.util.concurrent.TimeUnit.SECONDS);
        HiveMetaStoreClient client = null;
        try {
            client = new HiveMetaStoreClient(conf);
            for (String action : Arrays.copyOfRange(args, 2, args.length)) {
                if (action.equals("databases")) {
                    System.out.println("databases " + client.getAllDatabases());
                } else if (action.startsWith("table:")) {
                    String[] name = action.substring(6).split("\\.", 2);
                    Table table = client.getTable(name[0], name[1]);
                    System.out.println("table " + table.getDbName() + "." + table.getTableName()
                                       + " owner=" + table.getOwner());
                } else {
                    throw new IllegalArgumentException("unknown action " + action);
                }
            }
        } catch (Throwable error) {
            Throwable cause = error;
            while (cause.getCause() != null && !(cause instanceof org.apache.thrift.TException)) {
                cause = cause.getCause();
            }
            System.out.println("ERROR " + cause.getClass().getName() + ": " + cause.getMessage());
            System.out.flush();
            System.exit(1);
        } finally {
            if (client != null) {
                client.close();
            }
        }
    }
}
