package io.erda.protocol;

import java.lang.foreign.MemorySegment;

/**
 * Writes one message body at {@code offset} of {@code target} and returns its length: the one shape in which both
 * sides hand a body to the code that frames and sends it (a client's request, a server's reply). Every body record
 * here has an {@code encode(MemorySegment, long)} that fits it, e.g. {@code new KeyRequest(key)::encode}.
 */
@FunctionalInterface
public interface BodyEncoder {
    BodyEncoder EMPTY = (target, offset) -> 0;

    int encode(MemorySegment target, long offset);
}
