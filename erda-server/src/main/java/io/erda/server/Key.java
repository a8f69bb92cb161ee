package io.erda.server;

import io.erda.core.hash.KeyHash;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/** A key copied out of a message or the log, with value equality (map key of pending reservations). */
record Key(byte[] bytes, long hash) {
    static Key of(MemorySegment key) {
        byte[] copy = key.toArray(ValueLayout.JAVA_BYTE);
        return new Key(copy, KeyHash.hash(copy));
    }

    MemorySegment segment() {
        return MemorySegment.ofArray(bytes);
    }

    int head(int heads) {
        return KeyHash.headId(hash, heads);
    }

    int fingerprint() {
        return KeyHash.fingerprint(hash);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Key k && Arrays.equals(bytes, k.bytes);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(hash);
    }

    @Override
    public String toString() {
        return "Key[" + bytes.length + " bytes]";
    }
}
