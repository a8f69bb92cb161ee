package io.erda.remotelog;

/**
 * What a requester's completion of a posted request (WRITE, WRITE_WITH_IMM, SEND) says (paper §3.2, last
 * paragraphs): on InfiniBand and RoCE the responder's RNIC received the request; on iWARP only that it left for the
 * requester's reliable transport (TCP, SCTP), so it may not have reached the responder at all, and WSP needs a Flush
 * as MHP does. A non-posted request's completion (FLUSH, READ, atomics) carries the responder's answer on both.
 */
public enum Transport {
    /** InfiniBand and RoCE; also tcp and shm, which complete a request once the responder executed it. */
    INFINIBAND,
    /** iWARP (siw, and iWARP RNICs): a posted request's completion says nothing of the responder. */
    IWARP;

    /** Whether a posted request's completion means that the responder's RNIC received it. */
    public boolean completionMeansReceived() {
        return this == INFINIBAND;
    }

    public static Transport parse(String name) {
        return switch (name.trim().toLowerCase()) {
            case "infiniband", "ib", "roce" -> INFINIBAND;
            case "iwarp" -> IWARP;
            default -> throw new IllegalArgumentException("transport '" + name + "' is neither infiniband (also roce)"
                    + " nor iwarp");
        };
    }
}
