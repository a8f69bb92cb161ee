package io.erda.server.rdmp;

/**
 * How RDMP-KV's protocols are set up on a server.
 *
 * @param poolBytes          bytes of the PM object pool ({@code rdmp-pool.pm}); an existing pool keeps its size and
 *                           another one is refused naming both
 * @param saThresholdBytes   RDMP-SA sends values shorter than this the RDMA-HERD way, in the request (RDMP-KV
 *                           §III-E: 16 KB); 0 sends every value one-sided
 */
public record RdmpConfig(long poolBytes, int saThresholdBytes) {
    /**
     * 64 MiB: every server opens (and registers) the pool, whether or not an RDMP client ever comes, and on verbs a
     * registration pins its memory; a benchmark of large values gives a larger one ({@code --rdmp-pool-size}).
     */
    public static final long DEFAULT_POOL_BYTES = 64L << 20;
    public static final int DEFAULT_SA_THRESHOLD = 16 << 10;
    public static final RdmpConfig DEFAULTS = new RdmpConfig(DEFAULT_POOL_BYTES, DEFAULT_SA_THRESHOLD);

    public RdmpConfig {
        if (poolBytes < RdmpPool.MAX_SLOT) {
            throw new IllegalArgumentException("RDMP pool of " + poolBytes + " bytes is below its largest slot of "
                    + RdmpPool.MAX_SLOT + " bytes");
        }
        int inline = RdmpProtocol.SA.maxValueLength();
        if (saThresholdBytes < 0 || saThresholdBytes > inline) {
            throw new IllegalArgumentException("RDMP-SA threshold " + saThresholdBytes + " bytes outside [0, " + inline
                    + "] (the largest value a request carries)");
        }
    }

    public RdmpConfig withSaThreshold(int bytes) {
        return new RdmpConfig(poolBytes, bytes);
    }

    public RdmpConfig withPoolBytes(long bytes) {
        return new RdmpConfig(bytes, saThresholdBytes);
    }
}
