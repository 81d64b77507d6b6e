import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.security.cert.X509Certificate;
import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;

import org.apache.hadoop.hive.ql.exec.UDF;

/**
 * What a hostile member's UDF tries from inside its engine (harness/test_server2.py): read a
 * local file ("file:PATH") or call a URL ("http(s)://..."), ignoring TLS certificates as an
 * attacker would.  Answers "READ <bytes read>", "HTTP <status>" or "FAILED <exception>".
 */
public class EscapeProbe extends UDF {
    public String evaluate(String target) {
        try {
            if (target.startsWith("file:")) {
                return "READ " + Files.readAllBytes(Paths.get(target.substring(5))).length;
            }
            HttpURLConnection connection = (HttpURLConnection) new URL(target).openConnection();
            if (connection instanceof HttpsURLConnection) {
                SSLContext context = SSLContext.getInstance("TLS");
                context.init(null, new TrustManager[] {new TrustingManager()}, null);
                ((HttpsURLConnection) connection).setSSLSocketFactory(context.getSocketFactory());
                ((HttpsURLConnection) connection).setHostnameVerifier((host, session) -> true);
            }
            connection.setConnectTimeout(10_000);
            connection.setReadTimeout(10_000);
            return "HTTP " + connection.getResponseCode();
        } catch (Exception exc) {
            return "FAILED " + exc;
        }
    }

    private static final class TrustingManager implements X509TrustManager {
        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) { }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) { }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }
}
