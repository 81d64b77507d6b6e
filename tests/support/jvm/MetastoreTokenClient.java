// Hive 2.3's own metastore client (the one Spark's built-in Hive client wraps), configured
// as a job with a delegation token is: hive.metastore.sasl.enabled and the token signature,
// the token read by Hadoop's UGI from $HADOOP_TOKEN_FILE_LOCATION.
//
//   java -cp "$PYSPARK/jars/*:classes" MetastoreTokenClient thrift://HOST:PORT SIGNATURE ACTION...
//
// Actions: databases | table:DB.NAME | token:OWNER:RENEWER (get_delegation_token, the answer
// decoded by Hadoop's Token and Hive's DelegationTokenIdentifier) | renew:OWNER:RENEWER (get,
// then renew it) | cancel:OWNER:RENEWER (get, cancel, renew again: must fail).  Prints one line per
// action ("databases [a, b]", "table db.t owner=x"); a failure prints
// "ERROR <exception class>: <message>" and exits 1.
//
// -Dhopshive.sasl=false turns SASL off; -Dhopshive.truststore=FILE (PKCS12, password in
// -Dhopshive.truststore.password) turns hive.metastore.use.SSL on.  Hive 2.3 does one or the
// other: with SASL on, its HiveMetaStoreClient.open() never looks at the SSL settings.
// -Dhopshive.protection=integrity|privacy sets hadoop.rpc.protection: the SASL qop (auth-int,
// auth-conf) Hadoop's SaslPropertiesResolver hands the metastore client.
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.util.Arrays;

import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.HiveMetaStoreClient;
import org.apache.hadoop.hive.metastore.api.Table;
import org.apache.hadoop.hive.thrift.DelegationTokenIdentifier;
import org.apache.hadoop.security.token.Token;

public class MetastoreTokenClient {
    static String describe(String urlString) throws java.io.IOException {
        Token<DelegationTokenIdentifier> token = new Token<>();
        token.decodeFromUrlString(urlString);
        DelegationTokenIdentifier id = new DelegationTokenIdentifier();
        id.readFields(new DataInputStream(new ByteArrayInputStream(token.getIdentifier())));
        return "kind=" + token.getKind() + " service=" + token.getService() + " owner=" + id.getOwner()
            + " renewer=" + id.getRenewer() + " realUser=" + id.getRealUser()
            + " lifetime=" + (id.getMaxDate() - id.getIssueDate()) / 86_400_000 + "d";
    }

    public static void main(String[] args) {
        HiveConf conf = new HiveConf();
        conf.setVar(HiveConf.ConfVars.METASTOREURIS, args[0]);
        conf.setBoolVar(HiveConf.ConfVars.METASTORE_USE_THRIFT_SASL,
                        !"false".equals(System.getProperty("hopshive.sasl")));
        if (System.getProperty("hopshive.truststore") != null) {
            conf.setBoolVar(HiveConf.ConfVars.HIVE_METASTORE_USE_SSL, true);
            conf.setVar(HiveConf.ConfVars.HIVE_METASTORE_SSL_TRUSTSTORE_PATH, System.getProperty("hopshive.truststore"));
            conf.setVar(HiveConf.ConfVars.HIVE_METASTORE_SSL_TRUSTSTORE_PASSWORD,
                        System.getProperty("hopshive.truststore.password", ""));
        }
        if (System.getProperty("hopshive.protection") != null) {
            conf.set("hadoop.rpc.protection", System.getProperty("hopshive.protection"));
        }
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
                } else if (action.startsWith("token:")) {
                    String[] who = action.substring(6).split(":", 2);
                    System.out.println("token " + describe(client.getDelegationToken(who[0], who[1])));
                } else if (action.startsWith("renew:")) {
                    String[] who = action.substring(6).split(":", 2);
                    long expires = client.renewDelegationToken(client.getDelegationToken(who[0], who[1]));
                    System.out.println("renewed for " + (expires - System.currentTimeMillis()) / 3_600_000 + " h");
                } else if (action.startsWith("cancel:")) {
                    String[] who = action.substring(7).split(":", 2);
                    String token = client.getDelegationToken(who[0], who[1]);
                    client.cancelDelegationToken(token);
                    System.out.println("cancelled");
                    client.renewDelegationToken(token);
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
