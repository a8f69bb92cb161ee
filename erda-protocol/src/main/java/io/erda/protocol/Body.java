package io.erda.protocol;

import java.lang.foreign.MemorySegment;

/** Bounds checks shared by the body decoders: every read of a received body goes through them first. */
final class Body {
    private Body() {
    }

    static void require(String what, long needed, int bodyLength) {
        if (needed > bodyLength) {
            throw new WireFormatException(what + " needs " + needed + " bytes but the body has " + bodyLength);
        }
    }

    static int nonNegative(String field, int value, int limit) {
        if (value < 0 || value > limit) {
            throw new WireFormatException(field + " " + Integer.toUnsignedString(value) + " exceeds " + limit);
        }
        return value;
    }

    static MemorySegment slice(MemorySegment s, long offset, int length) {
        return s.asSlice(offset, length);
    }
}
