/**
 * The remote-memory format: the bytes server and client share in registered memory, which clients READ and WRITE
 * one-sided, so both must agree on them bit for bit. One descriptor class each with its bit diagram:
 * {@link ObjectLayout} (a log object, CRC32C written last) with its view {@link ObjectFlyweight} and verdict
 * {@link ObjectCheck}, {@link HashEntryLayout} (a 16-byte hash entry) with {@link HashEntryFlyweight},
 * {@link AtomicWord} (tag and the offsets of the current and previous versions), {@link LogAddress} (head and chain
 * offset in 8-byte units) and {@link RingSlotLayout} (a Read After Write slot). Where they lie: {@link TableGeometry}
 * (the byte ranges of buckets, windows and stripe version words of {@code table.pm}) and {@link LogGeometry} (a head's
 * chain of regions cut into segments). How a key finds its place: {@link KeyHash} (XXH3-64 of the key bytes, and from
 * it the home bucket from the low bits, the fingerprint from the high 32 bits, the head and the shard from
 * multiplicative mixes) and {@link Key} (a key with its hash computed once, equal by content). A client's checks on a
 * window it READ: {@link NeighbourhoodWindow}. {@link Words} is the little-endian word access of every on-PM format.
 *
 * <p>Rules: take offsets, lengths and bit positions from the constants and helpers here, never hard-code them; derive
 * buckets, fingerprints, heads and shards only through {@link KeyHash} (changing a derivation moves stored keys, so
 * existing stores and clients of another build would no longer find them); {@code Key.of} checks the key length
 * (1..65535) before hashing. Only {@link ObjectCheck#VALID} is trusted: {@code validate} checks marker, lengths against
 * the bytes available, CRC and key, and never throws on garbage; the nonzero type byte keeps zeroed memory from
 * validating ([recycled-memory]). The word's second slot is what lets a reader or the server fall back from a torn
 * object to the previous version ([last-complete-version]). Offset 0 means "no version". A reader trusts a miss only
 * once {@code NeighbourhoodWindow.missConfirmed} holds ([moves-vs-readers]). The classes hold no state:
 * {@code AtomicWord} computes words that the table stores, and {@code encode} fills whatever segment it is given. How
 * the server keeps these bytes (mapped PM files, the hopscotch table, the logs) is erda-core's, not this package's.
 *
 * <p>Depends on hash4j (XXH3) and the JDK only; not on {@code io.erda.protocol} (the wire messages), which does not
 * depend on it either.
 */
package io.erda.protocol.memory;
