package io.erda.bench.backend;

import java.io.IOException;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;

/**
 * A store the benchmarks can drive, found with {@link java.util.ServiceLoader}: which protocols it speaks, how to
 * start its server and how to connect to it. The Erda store registers one for {@code erda}, {@code redo-log} and
 * {@code read-after-write}; tests register stand-ins on their own class path only.
 */
public interface StoreBackend {

    /** The protocol names this backend serves, e.g. {@code erda}. */
    Set<String> protocols();

    /**
     * Why {@code protocol} cannot be benchmarked in this build (e.g. its client is not written yet), or empty if it
     * can. The driver skips such protocols and says why.
     */
    default Optional<String> unavailable(String protocol) {
        return Optional.empty();
    }

    /** Starts a server for {@code protocol}; fails (never hangs) within {@link ServerSettings#startTimeout()}. */
    StoreServer start(String protocol, ServerSettings settings) throws IOException;

    /**
     * Connects to a server at {@code uri} speaking {@code protocol}. {@code properties} are the binding's
     * ({@code erda.*}), passed on for client options.
     */
    StoreClient connect(String protocol, String uri, Properties properties) throws IOException;
}
