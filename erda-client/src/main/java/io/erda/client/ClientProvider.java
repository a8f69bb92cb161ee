package io.erda.client;

/**
 * A client for URIs no fabric serves, found through {@link java.util.ServiceLoader} by {@link KeyValueClient#connect}:
 * erda-cluster-client provides {@code zk://host:port/path}, a sharded, replicated store whose map lives in ZooKeeper
 * (docs/ARCHITECTURE.md, [cluster]), so every caller of {@code KeyValueClient.connect} (erda-cli, the YCSB binding)
 * takes that URI when erda-cluster-client is on the class path.
 */
public interface ClientProvider {
    /** The URI scheme this provider serves, such as "zk". */
    String scheme();

    KeyValueClient connect(ClientOptions options);

    /** The provider on the class path that serves {@code scheme}, or null. */
    static ClientProvider forScheme(String scheme) {
        for (ClientProvider provider : java.util.ServiceLoader.load(ClientProvider.class)) {
            if (provider.scheme().equalsIgnoreCase(scheme)) {
                return provider;
            }
        }
        return null;
    }
}
