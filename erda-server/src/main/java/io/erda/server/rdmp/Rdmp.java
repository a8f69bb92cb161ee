package io.erda.server.rdmp;

import io.erda.core.pm.WriteLatencyModel;
import io.erda.fabric.Fabric;
import io.erda.server.request.ErdaProtocolHandler;
import io.erda.server.request.Protocol;
import io.erda.server.request.ReceiveBuffers;
import java.nio.file.Path;
import java.util.function.ObjLongConsumer;

/**
 * RDMP-KV's three protocols as the server hosts them beside Erda's and the baselines': one {@link RdmpPool} in the
 * store's directory, and the {@link Protocol}s the server registers ({@link #herd}, {@link #serverAssisted},
 * {@link #clientCentric}). The pool is a store of its own: keys written through these protocols are read through
 * them, not through Erda's.
 */
public final class Rdmp implements AutoCloseable {
    private final Fabric fabric;
    private final RdmpPool pool;
    private final RdmpConfig config;

    private Rdmp(Fabric fabric, RdmpPool pool, RdmpConfig config) {
        this.fabric = fabric;
        this.pool = pool;
        this.config = config;
    }

    /** Opens (or creates) the pool in {@code directory} and recovers it; pending versions are rolled back after two leases. */
    public static Rdmp open(Path directory, RdmpConfig config, WriteLatencyModel latency, Fabric fabric, long leaseNanos) {
        return new Rdmp(fabric, RdmpPool.open(directory, config.poolBytes(), latency, fabric, leaseNanos), config);
    }

    /** RDMA-HERD ({@code ConnectData.PROTOCOL_HERD}). */
    public Protocol herd(ErdaProtocolHandler common) {
        return protocol(common, RdmpProtocol.HERD);
    }

    /** RDMP-SA ({@code ConnectData.PROTOCOL_RDMP_SA}). */
    public Protocol serverAssisted(ErdaProtocolHandler common) {
        return protocol(common, RdmpProtocol.SA);
    }

    /** RDMP-CC ({@code ConnectData.PROTOCOL_RDMP_CC}). */
    public Protocol clientCentric(ErdaProtocolHandler common) {
        return protocol(common, RdmpProtocol.CC);
    }

    private Protocol protocol(ErdaProtocolHandler common, RdmpProtocol protocol) {
        int size = protocol.maxMessageLength();
        return new Protocol(() -> ReceiveBuffers.dram(fabric, size), protocol.replySize(), false,
                (connection, buffers) -> new RdmpProtocolHandler(common, pool, protocol));
    }

    /** Bytes the pool took: the server's own stores plus clients' WRITEs. */
    public long bytesWritten() {
        return pool.bytesWritten();
    }

    /** The part of {@link #bytesWritten} that clients wrote one-sided. */
    public long remoteBytesWritten() {
        return pool.remoteBytesWritten();
    }

    /**
     * The STATS lines of RDMP-KV, in reply order. {@code rdmp_sa_threshold} is also how an RDMP-SA client learns the
     * threshold; {@code rdmp_cc_flush} says how an RDMP-CC client's one-sided durability is executed on this fabric:
     * {@code flush} (the device's own) or {@code read} (a READ of the range, where the device has no FLUSH).
     */
    public void stats(ObjLongConsumer<String> line) {
        line.accept("rdmp_keys", pool.keys());
        line.accept("rdmp_pending", pool.pending());
        line.accept("rdmp_rolled_back", pool.rolledBack());
        line.accept("rdmp_recovered", pool.recovered());
        line.accept("rdmp_recovery_rolled_back", pool.recoveryRolledBack());
        line.accept("rdmp_pool_carved", pool.carvedBytes());
        line.accept("rdmp_pool_bytes", pool.poolBytes());
        line.accept("rdmp_sa_threshold", config.saThresholdBytes());
        line.accept("rdmp_cc_native_flush", fabric.capabilities().nativeFlush() ? 1 : 0);
    }

    @Override
    public void close() {
        pool.close();
    }
}
