package io.erda.protocol.memory;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A key with its XXH3 hash, computed once: what a client routes and compares by, and what the server's maps of
 * pending writes are keyed by (equality is by content, so keys from different buffers meet).
 *
 * <p>{@link #of} wraps the caller's bytes for the duration of one call (never copied: the hash reads them where they
 * lie); {@link #copyOf} takes a heap copy for keys that outlive the buffer they arrived in (a receive slot, the
 * log).
 */
public record Key(MemorySegment bytes, long hash) {

    /** The caller's key, not copied: valid while the caller keeps it unchanged. Checks the length first. */
    public static Key of(MemorySegment bytes) {
        ObjectLayout.checkKeyLength((int) Math.min(bytes.byteSize(), Integer.MAX_VALUE)); // no wrap for huge segments
        return new Key(bytes, KeyHash.hash(bytes));
    }

    /** A heap copy of {@code bytes}, independent of the memory they came from. */
    public static Key copyOf(MemorySegment bytes) {
        byte[] copy = new byte[Math.toIntExact(bytes.byteSize())];
        MemorySegment.copy(bytes, ValueLayout.JAVA_BYTE, 0, copy, 0, copy.length); // no segment wraps the array for it
        return new Key(MemorySegment.ofArray(copy), KeyHash.hash(copy));
    }

    public int length() {
        return (int) bytes.byteSize();
    }

    /** The head that owns the key among {@code heads}. */
    public int head(int heads) {
        return KeyHash.headId(hash, heads);
    }

    /** The fingerprint its hash entry carries. */
    public int fingerprint() {
        return KeyHash.fingerprint(hash);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Key k && hash == k.hash && bytes.mismatch(k.bytes) == -1;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(hash);
    }

    @Override
    public String toString() {
        return "Key[" + bytes.byteSize() + " bytes]";
    }
}
