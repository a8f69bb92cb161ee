package io.erda.protocol.memory;

import com.dynatrace.hash4j.hashing.ByteAccess;
import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import java.lang.foreign.MemorySegment;

/**
 * Key hashing shared by clients and server, which must agree bit for bit: XXH3-64 of the key bytes,
 * then named derivations. The home bucket uses the low bits (capacity is a power of two), the
 * fingerprint the high 32 bits, and the head a multiplicative mix of the whole hash, so the three
 * are not trivially correlated.
 */
public final class KeyHash {
    private static final Hasher64 XXH3 = Hashing.xxh3_64();
    private static final ByteAccess<MemorySegment> SEGMENT = ByteAccess.forMemorySegment(MemorySegment.class);
    private static final long GOLDEN = 0x9E37_79B9_7F4A_7C15L;
    /** Another odd multiplier (MurmurHash3's fmix64 constant), so shard and head are not the same mix. */
    private static final long SHARD_MIX = 0xC4CE_B9FE_1A85_EC53L;

    private KeyHash() {
    }

    /** 64-bit XXH3 of the key. */
    public static long hash(byte[] key) {
        return XXH3.hashBytesToLong(key);
    }

    /** 64-bit XXH3 of the key in {@code key}, read where it lies (heap or native), nothing copied or allocated. */
    public static long hash(MemorySegment key) {
        return XXH3.hashBytesToLong(key, 0, key.byteSize(), SEGMENT);
    }

    /** 64-bit XXH3 of {@code key[offset, offset+length)}. */
    public static long hash(byte[] key, int offset, int length) {
        return XXH3.hashBytesToLong(key, offset, length);
    }

    /** Home bucket in a table of {@code capacity} buckets (a power of two). */
    public static long homeBucket(long hash, long capacity) {
        if (Long.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("capacity " + capacity + " is not a power of two");
        }
        return hash & (capacity - 1);
    }

    /** Fingerprint stored in the hash entry. */
    public static int fingerprint(long hash) {
        return (int) (hash >>> 32);
    }

    /** Head owning the key, in {@code [0, heads)}. */
    public static int headId(long hash, int heads) {
        if (heads <= 0) {
            throw new IllegalArgumentException("head count " + heads + " is not positive");
        }
        return (int) Long.remainderUnsigned(hash * GOLDEN >>> 16, heads);
    }

    /**
     * Shard owning the key among {@code shards} (a power of two) servers' worth of key space: the top bits of a
     * multiplicative mix, so a server's keys still spread over all its home buckets (low bits) and heads
     * (docs/ARCHITECTURE.md, [cluster]).
     */
    public static int shard(long hash, int shards) {
        if (shards <= 0 || Integer.bitCount(shards) != 1) {
            throw new IllegalArgumentException("shard count " + shards + " is not a positive power of two");
        }
        return shards == 1 ? 0 : (int) ((hash * SHARD_MIX) >>> (64 - Integer.numberOfTrailingZeros(shards)));
    }
}
