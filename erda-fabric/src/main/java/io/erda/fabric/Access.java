package io.erda.fabric;

import java.util.EnumSet;
import java.util.Set;

/**
 * Access rights of a registered memory region, as in {@code ibv_access_flags}.
 * Local read access is implied for every registration, as in verbs.
 */
public enum Access {
    /** The local NIC may write into the region (destination of READ, RECV, atomics' result). */
    LOCAL_WRITE,
    /** Peers may READ the region one-sided. */
    REMOTE_READ,
    /** Peers may WRITE (and WRITE_WITH_IMM) into the region one-sided. */
    REMOTE_WRITE,
    /** Peers may CAS / FETCH_ADD 8-byte aligned words of the region. */
    REMOTE_ATOMIC;

    /** Local buffers: the destination of READs, RECVs and atomics. */
    public static Set<Access> local() {
        return EnumSet.of(LOCAL_WRITE);
    }

    /** Every right: what a server gives its PM regions. */
    public static Set<Access> all() {
        return EnumSet.allOf(Access.class);
    }
}
