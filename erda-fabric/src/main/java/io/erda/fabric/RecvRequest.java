package io.erda.fabric;

import java.util.Objects;

/**
 * A posted receive buffer ({@code ibv_recv_wr} with one scatter/gather element). The buffer lives in caller
 * registered memory with {@link Access#LOCAL_WRITE}, so a server may place its receive buffers in PM (the
 * taxonomy's PM-RQWRB).
 */
public record RecvRequest(long wrId, MemoryRegion local, long localOffset, int length) {
    public RecvRequest {
        Objects.requireNonNull(local, "local");
        if (length < 0 || localOffset < 0) {
            throw new IllegalArgumentException("receive buffer offset " + localOffset + " length " + length + " must be >= 0");
        }
    }
}
