package io.erda.fabric;

/**
 * What a fabric instance did, for measurements.
 *
 * @param engineCpuNanos   CPU time of the provider's own threads in this process (the software NIC engine of tcp,
 *                         the ring pollers of shm); application threads are not included, nor the application's
 *                         work the tcp engine runs for a completion queue's idle consumer (estimated, sampled)
 * @param oneSidedExecuted one-sided operations executed against this process's memory by its engine (0 where the
 *                         initiator executes them, as in shm)
 * @param bytesReadByPeers bytes peers READ from this process's regions (where the provider can see it)
 * @param bytesWrittenByPeers bytes peers wrote into this process's regions (where the provider can see it)
 */
public record FabricStats(long engineCpuNanos, long oneSidedExecuted, long bytesReadByPeers, long bytesWrittenByPeers) {
    public static final FabricStats ZERO = new FabricStats(0, 0, 0, 0);
}
