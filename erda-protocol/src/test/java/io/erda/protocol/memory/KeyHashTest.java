package io.erda.protocol.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Clients and server must hash a key bit for bit alike wherever its bytes lie: a heap array, a native receive buffer,
 * a slice at an odd offset. {@link KeyHash#hash(MemorySegment)} reads them in place; it must agree with the array form.
 */
class KeyHashTest {
    @Test
    void theEmptyKeyHashesToXxh3sPublishedValue() {
        assertThat(KeyHash.hash(new byte[0])).isEqualTo(0x2D06800538D394C2L); // XXH3_64bits("", seed 0)
        assertThat(KeyHash.hash(MemorySegment.ofArray(new byte[0]))).isEqualTo(0x2D06800538D394C2L);
    }

    /** Lengths across XXH3's size classes (0-3, 4-8, 9-16, 17-128, 129-240, longer) and native slices at odd offsets. */
    @Test
    void aKeyHashesAlikeFromAnArrayAHeapSegmentAndNativeMemory() {
        SplittableRandom random = new SplittableRandom(25);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment nativeBuffer = arena.allocate(70_000);
            for (int length : new int[] {0, 1, 3, 4, 8, 9, 16, 17, 64, 128, 129, 200, 240, 241, 1024, 4096, 65_535}) {
                byte[] key = new byte[length];
                random.nextBytes(key);
                long expected = KeyHash.hash(key);
                long offset = 1 + random.nextInt(7);
                MemorySegment inNative = nativeBuffer.asSlice(offset, length);
                MemorySegment.copy(key, 0, inNative, ValueLayout.JAVA_BYTE, 0, length);
                byte[] padded = new byte[length + 5];
                System.arraycopy(key, 0, padded, 3, length);

                assertThat(KeyHash.hash(MemorySegment.ofArray(key))).as("heap segment, %d bytes", length).isEqualTo(expected);
                assertThat(KeyHash.hash(inNative)).as("native slice, %d bytes", length).isEqualTo(expected);
                assertThat(KeyHash.hash(MemorySegment.ofArray(padded).asSlice(3, length))).as("heap slice, %d bytes", length)
                        .isEqualTo(expected);
                assertThat(KeyHash.hash(padded, 3, length)).isEqualTo(expected);
            }
        }
    }

    @Test
    void aKeyOverNativeMemoryEqualsItsHeapCopyAndOutlivesItsBuffer() {
        Key copy;
        Key inPlace;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = arena.allocate(32);
            buffer.setString(0, "user:42");
            MemorySegment bytes = buffer.asSlice(0, 7);
            inPlace = Key.of(bytes);
            copy = Key.copyOf(bytes);
            assertThat(copy).isEqualTo(inPlace).hasSameHashCodeAs(inPlace);
            assertThat(copy.hash()).isEqualTo(KeyHash.hash("user:42".getBytes(java.nio.charset.StandardCharsets.US_ASCII)));
        }
        assertThat(copy.bytes().isNative()).isFalse();
        assertThat(new String(copy.bytes().toArray(ValueLayout.JAVA_BYTE), java.nio.charset.StandardCharsets.US_ASCII))
                .isEqualTo("user:42");
    }

    @Test
    void aKeyLongerThanTheLimitIsRefusedNamingItsLength() {
        MemorySegment tooLong = MemorySegment.ofArray(new byte[ObjectLayout.MAX_KEY_LENGTH + 1]);
        assertThatThrownBy(() -> Key.of(tooLong)).hasMessageContaining(Integer.toString(ObjectLayout.MAX_KEY_LENGTH + 1));
    }
}
