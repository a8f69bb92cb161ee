package io.erda.cluster.client;

import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * A cluster's ZooKeeper address, {@code zk://host:port[,host:port...]/path}, and the znodes under the path
 * ([cluster]): {@code /servers/ID} (ephemeral, data: the server's fabric URI and, on a second line
 * {@code store HEX}, its store's identity, erda-cluster's {@code StoreIdentity}, and, on a third, {@code alive HOST:PORT},
 * where the other members watch its process end, erda-cluster's {@code LivenessPort}), {@code /map} ({@link ShardMap}) and
 * {@code /coordinator} (the leader latch whose leader writes the map).
 */
public final class Zk {
    public static final String SERVERS = "/servers";
    public static final String MAP = "/map";
    public static final String COORDINATOR = "/coordinator";
    /**
     * Members' leases (erda-cluster's {@code MemberLease}): {@code /leases/ID}, ephemeral, rewritten every quarter
     * lease.
     */
    public static final String LEASES = "/leases";
    static final int CONNECT_TIMEOUT_MILLIS = 10_000;
    private static final String STORE = "store ";
    private static final String ALIVE = "alive ";

    private Zk() {
    }

    /** A started Curator client of {@code uri}'s ensemble, namespaced to its path, connected (or failing naming it). */
    public static CuratorFramework connect(URI uri, int sessionTimeoutMillis) {
        return connect(uri, sessionTimeoutMillis, null);
    }

    /**
     * {@link #connect(URI, int)} as a member holding the cluster's {@code secret} (null: none, an open cluster): it
     * authenticates with ZooKeeper's digest scheme, and every node it creates is writable only with the secret and
     * readable by anyone ({@link ZkSecret}).
     */
    public static CuratorFramework connect(URI uri, int sessionTimeoutMillis, ZkSecret secret) {
        if (!"zk".equalsIgnoreCase(uri.getScheme()) || uri.getRawAuthority() == null) {
            throw new IllegalArgumentException("cluster URI " + uri + " is not zk://host:port/path");
        }
        String path = uri.getPath() == null || uri.getPath().isEmpty() || uri.getPath().equals("/") ? "/erda" : uri.getPath();
        CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder().connectString(uri.getRawAuthority())
                .namespace(path.substring(1).replaceAll("/+$", "")).sessionTimeoutMs(sessionTimeoutMillis)
                .connectionTimeoutMs(Math.min(CONNECT_TIMEOUT_MILLIS, sessionTimeoutMillis))
                .retryPolicy(new ExponentialBackoffRetry(50, 10, 1000));
        if (secret != null) {
            builder.authorization(ZkSecret.SCHEME, secret.credentials()).aclProvider(secret.aclProvider());
        }
        CuratorFramework zk = builder.build();
        zk.start();
        try {
            if (!zk.blockUntilConnected(CONNECT_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)) {
                zk.close();
                throw new IllegalStateException("no ZooKeeper at " + uri.getRawAuthority() + " within "
                        + CONNECT_TIMEOUT_MILLIS + " ms");
            }
        } catch (InterruptedException e) {
            zk.close();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted connecting to " + uri, e);
        }
        return zk;
    }

    public static String lease(int id) {
        return LEASES + "/" + id;
    }

    public static String server(int id) {
        return SERVERS + "/" + id;
    }

    /** The data of a server's registration {@code /servers/ID}. */
    public static byte[] registration(URI uri, String store) {
        return (uri + "\n" + STORE + store + "\n").getBytes(StandardCharsets.UTF_8);
    }

    /** The data of a server's registration {@code /servers/ID} whose process can be watched at {@code alive}. */
    public static byte[] registration(URI uri, String store, InetSocketAddress alive) {
        return (uri + "\n" + STORE + store + "\n" + ALIVE + alive.getAddress().getHostAddress() + ":" + alive.getPort()
                + "\n").getBytes(StandardCharsets.UTF_8);
    }

    /** The address of the liveness port in a registration's data, or null if it names none (or names it badly). */
    public static InetSocketAddress alive(byte[] registration) {
        for (String line : new String(registration, StandardCharsets.UTF_8).split("\n")) {
            if (line.startsWith(ALIVE)) {
                String address = line.substring(ALIVE.length()).strip();
                int colon = address.lastIndexOf(':');
                try {
                    return colon < 0 ? null : new InetSocketAddress(
                            java.net.InetAddress.ofLiteral(address.substring(0, colon)),
                            Integer.parseInt(address.substring(colon + 1)));
                } catch (IllegalArgumentException bad) {
                    return null;
                }
            }
        }
        return null;
    }

    /** The fabric URI in a registration's data. */
    public static URI uri(byte[] registration) {
        String text = new String(registration, StandardCharsets.UTF_8);
        int end = text.indexOf('\n');
        return URI.create(end < 0 ? text : text.substring(0, end));
    }

    /** The store identity in a registration's data; fails naming the data if it has none. */
    public static String store(byte[] registration) {
        String[] lines = new String(registration, StandardCharsets.UTF_8).split("\n");
        if (lines.length < 2 || !lines[1].startsWith(STORE)) {
            throw new IllegalArgumentException("registration '" + String.join("\\n", lines) + "' has no '" + STORE
                    + "HEX' line (a server of an older version?)");
        }
        return lines[1].substring(STORE.length()).strip();
    }
}
