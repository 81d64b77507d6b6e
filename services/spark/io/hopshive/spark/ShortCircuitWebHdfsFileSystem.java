package io.hopshive.spark;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.web.WebHdfsFileSystem;
import org.apache.hadoop.security.UserGroupInformation;

/**
 * WebHDFS with short-circuit reads, as HDFS's client reads the block files of a datanode on
 * its own host: {@code open} asks the namenode on this host (HopsHive's GETLOCALREPLICAS) for
 * the block files that hold the whole file and reads them directly, checksums checked; a
 * file that is not all here, a namenode elsewhere, a proxy user, or block files this process
 * may not read fall back to WebHDFS's OPEN.  Everything else is WebHDFS unchanged.
 *
 * <p>Use it as {@code fs.webhdfs.impl}; {@code fs.webhdfs.hopshive.short-circuit=false}
 * turns the short cut off.
 */
public class ShortCircuitWebHdfsFileSystem extends WebHdfsFileSystem {
    public static final String ENABLED = "fs.webhdfs.hopshive.short-circuit";
    private static final int TIMEOUT_MS = 10_000;

    @Override
    public FSDataInputStream open(Path file, int bufferSize) throws IOException {
        LocalReplicas local = getConf().getBoolean(ENABLED, true) ? localReplicas(file) : null;
        if (local == null) {
            return super.open(file, bufferSize);
        }
        return new FSDataInputStream(new LocalReplicasInputStream(local, () -> super.open(file, bufferSize)));
    }

    /** The namenode of this host's answer for {@code file}, or null when it cannot be used. */
    private LocalReplicas localReplicas(Path file) {
        try {
            UserGroupInformation user = UserGroupInformation.getCurrentUser();
            String namenode = localNamenode();
            if (namenode == null || user.getRealUser() != null) {
                return null;
            }
            String path = makeQualified(file).toUri().getPath();
            URL url = new URL(new URI("http", namenode, "/webhdfs/v1" + path, null, null).toASCIIString()
                    + "?op=GETLOCALREPLICAS&user.name=" + URLEncoder.encode(user.getShortUserName(), StandardCharsets.UTF_8));
            HttpURLConnection connection = (HttpURLConnection) url.openConnection();
            connection.setConnectTimeout(TIMEOUT_MS);
            connection.setReadTimeout(TIMEOUT_MS);
            try {
                if (connection.getResponseCode() != HttpURLConnection.HTTP_OK) {
                    return null;
                }
                try (InputStream answer = connection.getInputStream()) {
                    return LocalReplicas.parse(answer);
                }
            } finally {
                connection.disconnect();
            }
        } catch (IOException | URISyntaxException | RuntimeException exc) {
            return null;    // no short cut: WebHDFS reads it
        }
    }

    /** host:port of a namenode of this file system that runs on this host, or null. */
    private String localNamenode() throws IOException {
        URI uri = getUri();
        List<String> candidates = new ArrayList<>();
        if (uri.getPort() > 0) {
            candidates.add(uri.getHost() + ":" + uri.getPort());
        } else {
            String service = uri.getHost();
            for (String id : getConf().getTrimmedStrings("dfs.ha.namenodes." + service)) {
                String address = getConf().getTrimmed("dfs.namenode.http-address." + service + "." + id);
                if (address != null) {
                    candidates.add(address);
                }
            }
        }
        for (String candidate : candidates) {
            String host = candidate.substring(0, candidate.lastIndexOf(':'));
            InetAddress address = InetAddress.getByName(host);
            if (address.isLoopbackAddress() || NetworkInterface.getByInetAddress(address) != null) {
                return candidate;
            }
        }
        return null;
    }
}
