package io.erda.protocol;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

/** Body of {@link MessageType#ERROR}: a UTF-8 message naming the values involved, at most {@link #MAX_LENGTH} bytes. */
public final class ErrorReply {
    public static final int MAX_LENGTH = 1024;

    private ErrorReply() {
    }

    public static int encode(MemorySegment s, long offset, String message) {
        byte[] bytes = message.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(bytes.length, MAX_LENGTH);
        MemorySegment.copy(bytes, 0, s, ValueLayout.JAVA_BYTE, offset, n);
        return n;
    }

    public static String decode(MemorySegment s, long offset, int bodyLength) {
        int n = Math.min(bodyLength, MAX_LENGTH);
        return new String(s.asSlice(offset, n).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
    }
}
