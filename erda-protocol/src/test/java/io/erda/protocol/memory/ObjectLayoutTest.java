package io.erda.protocol.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ObjectLayoutTest {
    private static MemorySegment bytes(String s) {
        return MemorySegment.ofArray(s.getBytes(StandardCharsets.UTF_8));
    }

    private static MemorySegment encoded(String key, String value, boolean tombstone) {
        MemorySegment buffer = MemorySegment.ofArray(new byte[256]);
        long length = ObjectLayout.encode(buffer, 0, bytes(key), bytes(value), tombstone);
        return buffer.asSlice(0, length);
    }

    @Test
    void encodedObjectValidatesAndReadsBack() {
        MemorySegment object = encoded("user:1", "hello world", false);
        assertThat(object.byteSize() % 8).isZero();
        assertThat(ObjectLayout.validate(object, 0, object.byteSize(), bytes("user:1"))).isEqualTo(ObjectCheck.VALID);
        ObjectFlyweight view = new ObjectFlyweight().wrap(object, 0);
        assertThat(view.isTombstone()).isFalse();
        assertThat(new String(view.value().toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8)).isEqualTo("hello world");
        assertThat(view.totalLength()).isEqualTo(object.byteSize());
    }

    @Test
    void tombstoneHasNoValueAndValidates() {
        MemorySegment object = encoded("gone", "", true);
        assertThat(object.byteSize()).isEqualTo(16);
        assertThat(ObjectLayout.validate(object, 0, 16, bytes("gone"))).isEqualTo(ObjectCheck.VALID);
        assertThat(new ObjectFlyweight().wrap(object, 0).isTombstone()).isTrue();
    }

    @Test
    void allZeroAreaNeverValidatesAtAnyOffsetOrLength() {
        MemorySegment zeros = MemorySegment.ofArray(new byte[4096]);
        for (long offset = 0; offset < 4096; offset += 8) {
            assertThat(ObjectLayout.validate(zeros, offset, 4096 - offset, null)).isNotEqualTo(ObjectCheck.VALID);
        }
    }

    @Test
    void everySingleBitFlipFailsTheCheck() {
        for (String[] kv : new String[][] {{"k", ""}, {"user:42", "value with some bytes"}, {"a-longer-key-0123456789", "v"}}) {
            for (boolean tombstone : new boolean[] {false, true}) {
                MemorySegment object = encoded(kv[0], tombstone ? "" : kv[1], tombstone);
                for (long bit = 0; bit < object.byteSize() * 8; bit++) {
                    byte original = object.get(ValueLayout.JAVA_BYTE, bit / 8);
                    object.set(ValueLayout.JAVA_BYTE, bit / 8, (byte) (original ^ (1 << (bit % 8))));
                    assertThat(ObjectLayout.validate(object, 0, object.byteSize(), bytes(kv[0])))
                            .as("key %s bit %d", kv[0], bit).isNotEqualTo(ObjectCheck.VALID);
                    object.set(ValueLayout.JAVA_BYTE, bit / 8, original);
                }
                assertThat(ObjectLayout.validate(object, 0, object.byteSize(), bytes(kv[0]))).isEqualTo(ObjectCheck.VALID);
            }
        }
    }

    @Test
    void wrongKeyIsReportedAsMismatch() {
        MemorySegment object = encoded("alpha", "v", false);
        assertThat(ObjectLayout.validate(object, 0, object.byteSize(), bytes("alphb"))).isEqualTo(ObjectCheck.KEY_MISMATCH);
        assertThat(ObjectLayout.validate(object, 0, object.byteSize(), bytes("alph"))).isEqualTo(ObjectCheck.KEY_MISMATCH);
    }

    @Test
    void objectLongerThanAvailableBytesIsTruncatedNotRead() {
        MemorySegment object = encoded("key", "0123456789abcdef", false);
        assertThat(ObjectLayout.validate(object, 0, object.byteSize() - 8, bytes("key"))).isEqualTo(ObjectCheck.TRUNCATED);
        assertThat(ObjectLayout.validate(object, 0, 11, null)).isEqualTo(ObjectCheck.TRUNCATED);
    }

    @Test
    void randomGarbageNeverThrowsAndNeverValidates() {
        Random random = new Random(7);
        byte[] garbage = new byte[512];
        MemorySegment segment = MemorySegment.ofArray(garbage);
        for (int round = 0; round < 20_000; round++) {
            random.nextBytes(garbage);
            garbage[0] = random.nextBoolean() ? ObjectLayout.TYPE_OBJECT : ObjectLayout.TYPE_TOMBSTONE;
            garbage[1] = 0;
            long offset = random.nextInt(64) * 8L;
            assertThat(ObjectLayout.validate(segment, offset, random.nextInt(600), null)).isNotEqualTo(ObjectCheck.VALID);
        }
    }

    @Test
    void oversizedKeyIsRejectedNamingItsLength() {
        assertThatThrownBy(() -> ObjectLayout.length(70_000, 1)).hasMessage("key length 70000 outside [1, 65535]");
    }
}
