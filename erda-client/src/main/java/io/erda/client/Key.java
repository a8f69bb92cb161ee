package io.erda.client;

import io.erda.core.hash.KeyHash;
import io.erda.core.layout.ObjectLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** A key with its hash, computed once per call (keys are small: one copy to hash a segment key is cheap). */
record Key(MemorySegment bytes, long hash) {

    /** Checks the length before anything is sent: {@code key length 70000 outside [1, 65535]}. */
    static Key of(MemorySegment bytes) {
        ObjectLayout.checkKeyLength((int) Math.min(bytes.byteSize(), Integer.MAX_VALUE)); // no wrap for huge segments
        byte[] array = bytes.heapBase().orElse(null) instanceof byte[] b && bytes.address() == 0 && b.length == bytes.byteSize()
                ? b : bytes.toArray(ValueLayout.JAVA_BYTE);
        return new Key(bytes, KeyHash.hash(array));
    }

    int length() {
        return (int) bytes.byteSize();
    }
}
