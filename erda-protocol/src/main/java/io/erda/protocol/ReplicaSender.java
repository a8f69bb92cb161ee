package io.erda.protocol;

/**
 * Who forwards a replica reservation ({@link PutRequest}): the primary's ZooKeeper session (the one the shard map
 * names it under) and a 16-byte tag, an HMAC over the request keyed by the cluster's secret, or zero for a cluster
 * without one (docs/ARCHITECTURE.md, [cluster], "Security"). A backup accepts the reservation only when the session is
 * its shard's current primary's and, with a secret, the tag is right: a deposed primary is refused by the first, a
 * process without the secret by the second.
 */
public record ReplicaSender(long session, long tagHigh, long tagLow) {
    /** Bytes after the key of a replica reservation. */
    public static final int LENGTH = 24;
}
