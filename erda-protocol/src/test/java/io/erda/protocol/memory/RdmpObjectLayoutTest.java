package io.erda.protocol.memory;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** RDMP-KV's object layout: where the flags are, and what a GET's READ accepts (paper §III-C). */
class RdmpObjectLayoutTest {
    private static final MemorySegment KEY = MemorySegment.ofArray("key-7".getBytes(StandardCharsets.UTF_8));
    private static final byte[] VALUE = "a value of twenty-four B".getBytes(StandardCharsets.UTF_8);

    /** An object as the server's pool holds it: header, key, value, persist flag, valid flag. */
    private static MemorySegment object(long sequence, byte persist, byte valid) {
        int k = (int) KEY.byteSize();
        MemorySegment s = MemorySegment.ofArray(new byte[(int) RdmpObjectLayout.length(k, VALUE.length)]);
        s.set(Words.INT_U, RdmpObjectLayout.SLOT_LENGTH_OFFSET, 64);
        s.set(Words.SHORT_U, RdmpObjectLayout.KEY_LENGTH_OFFSET, (short) k);
        s.set(ValueLayout.JAVA_BYTE, RdmpObjectLayout.KIND_OFFSET, RdmpObjectLayout.KIND_VALUE);
        s.set(Words.INT_U, RdmpObjectLayout.VALUE_LENGTH_OFFSET, VALUE.length);
        s.set(Words.LONG_U, RdmpObjectLayout.SEQUENCE_OFFSET, sequence);
        MemorySegment.copy(KEY, 0, s, RdmpObjectLayout.HEADER_LENGTH, k);
        MemorySegment.copy(MemorySegment.ofArray(VALUE), 0, s, RdmpObjectLayout.valueOffset(k), VALUE.length);
        s.set(ValueLayout.JAVA_BYTE, RdmpObjectLayout.persistFlagOffset(k, VALUE.length), persist);
        s.set(ValueLayout.JAVA_BYTE, RdmpObjectLayout.validFlagOffset(k, VALUE.length), valid);
        return s;
    }

    /** What a GET READs: from the sequence number through the valid flag. */
    private static MemorySegment read(MemorySegment object) {
        return object.asSlice(RdmpObjectLayout.SEQUENCE_OFFSET,
                RdmpObjectLayout.readLength((int) KEY.byteSize(), VALUE.length));
    }

    @Test
    void theFlagsFollowThePairAndTheReadCoversThemAndTheValue() {
        int k = (int) KEY.byteSize();
        assertThat(RdmpObjectLayout.length(k, VALUE.length)).isEqualTo(24 + k + VALUE.length + 2);
        assertThat(RdmpObjectLayout.persistFlagOffset(k, VALUE.length)).isEqualTo(24 + k + VALUE.length);
        assertThat(RdmpObjectLayout.valueLength(RdmpObjectLayout.length(k, VALUE.length), k)).isEqualTo(VALUE.length);
        MemorySegment r = read(object(5, (byte) 1, (byte) 1));
        assertThat(r.asSlice(RdmpObjectLayout.valueOffsetInRead(k), VALUE.length).toArray(ValueLayout.JAVA_BYTE))
                .isEqualTo(VALUE);
    }

    @Test
    void aReadIsAcceptedOnlyWithItsSequenceItsKeyAndTheValidFlag() {
        assertThat(RdmpObjectLayout.readIsValid(read(object(5, (byte) 1, (byte) 1)), 5, KEY, VALUE.length)).isTrue();
        // a PUT in progress: the valid flag is still zero
        assertThat(RdmpObjectLayout.readIsValid(read(object(5, (byte) 1, (byte) 0)), 5, KEY, VALUE.length)).isFalse();
        // the slot was retired (sequence zeroed) or reused by a newer object since the lookup
        assertThat(RdmpObjectLayout.readIsValid(read(object(0, (byte) 1, (byte) 1)), 5, KEY, VALUE.length)).isFalse();
        assertThat(RdmpObjectLayout.readIsValid(read(object(6, (byte) 1, (byte) 1)), 5, KEY, VALUE.length)).isFalse();
        MemorySegment otherKey = MemorySegment.ofArray("key-8".getBytes(StandardCharsets.UTF_8));
        assertThat(RdmpObjectLayout.readIsValid(read(object(5, (byte) 1, (byte) 1)), 5, otherKey, VALUE.length)).isFalse();
    }
}
