package io.erda.fabric;

import java.lang.foreign.MemorySegment;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * An RDMA-shaped transport instance: what {@code ibv_context} plus {@code rdma_cm} give a verbs program. Every
 * protocol of Erda is written against this interface and runs unchanged on each provider:
 * <ul>
 *   <li>{@code tcp://host:port}: a software RNIC; a NIC engine on the target's own threads executes one-sided
 *       operations; application threads only see SEND and WRITE_WITH_IMM through posted receives;</li>
 *   <li>{@code shm:///dir}: same host; the initiator maps the target's file-backed regions and accesses them
 *       directly; two-sided messages through shared-memory rings;</li>
 *   <li>{@code verbs://host:port}: a real RNIC through libibverbs.</li>
 * </ul>
 */
public interface Fabric extends AutoCloseable {

    /**
     * Largest private data on connect/accept: what fits in an InfiniBand CM REQ (56 bytes of private data through
     * rdma_cm, the smallest of every transport, delivered zero-padded to 56) after the verbs provider's 2-byte header
     * (payload length and RNR timer, see {@code io.erda.fabric.verbs.CmPrivateData}).
     */
    int MAX_PRIVATE_DATA = 54;

    /** Opens the provider for {@code uri}'s scheme. */
    static Fabric open(URI uri) throws FabricException {
        return open(uri, Map.of());
    }

    static Fabric open(URI uri, Map<String, String> properties) throws FabricException {
        String scheme = uri.getScheme();
        if (scheme == null) {
            throw new FabricException("URI " + uri + " has no scheme; expected one of " + schemes());
        }
        for (FabricProvider provider : ServiceLoader.load(FabricProvider.class)) {
            if (provider.scheme().equalsIgnoreCase(scheme)) {
                return provider.open(properties);
            }
        }
        throw new FabricException("no fabric provider for scheme '" + scheme + "' of " + uri + "; available: " + schemes());
    }

    /** The schemes of the providers on the class path. */
    static Set<String> schemes() {
        return ServiceLoader.load(FabricProvider.class).stream().map(p -> p.get().scheme())
                .collect(Collectors.toCollection(java.util.TreeSet::new));
    }

    String scheme();

    /** Registers a segment ({@code ibv_reg_mr}). */
    MemoryRegion register(MemorySegment segment, RegisterOptions options) throws FabricException;

    /** Registers anonymous memory for local use (READ destinations, SEND sources, receive buffers). */
    default MemoryRegion registerLocal(MemorySegment segment) throws FabricException {
        return register(segment, RegisterOptions.local());
    }

    CompletionQueue createCompletionQueue(int capacity) throws FabricException;

    Endpoint createEndpoint(EndpointOptions options) throws FabricException;

    default Endpoint createEndpoint() throws FabricException {
        return createEndpoint(EndpointOptions.defaults());
    }

    /** Creates an endpoint and connects it; no receives are posted first. */
    default Endpoint connect(URI uri) throws FabricException {
        Endpoint endpoint = createEndpoint();
        endpoint.connect(uri, new byte[0]);
        return endpoint;
    }

    /** Listens on {@code uri} (tcp: host and port, port 0 picks one; shm: a directory). */
    Listener listen(URI uri) throws FabricException;

    FabricStats stats();

    /**
     * Send-queue work requests this instance's endpoints posted so far (receives not included), by the operation
     * that went to the device or engine: verbs counts a FLUSH it emulates as the READ it posts (where
     * {@link FabricCapabilities#nativeFlush} is false); a request refused before it reached the device is not counted.
     */
    java.util.Map<Opcode, Long> posted();

    /**
     * Limits and device-dependent capabilities of this instance (verbs: read from the device when it opened). Size
     * queues from them; check a capability before relying on it.
     */
    FabricCapabilities capabilities();

    /** Registered regions of this instance, for diagnostics. */
    List<MemoryRegion> regions();

    /**
     * Closes every endpoint, listener and registration of this instance. When it returns, none of the provider's
     * threads accesses registered memory any more, so the caller may free it.
     */
    @Override
    void close();
}
