package io.erda.bench.ycsb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;

class RecordEncodingTest {

    @Test
    void everyFieldComesBackAsWritten() {
        Map<String, ByteIterator> record = new LinkedHashMap<>();
        Random random = new Random(7);
        Map<String, byte[]> expected = new HashMap<>();
        for (int i = 0; i < 10; i++) {
            byte[] value = new byte[random.nextInt(5000)];
            random.nextBytes(value);
            expected.put("field" + i, value);
            record.put("field" + i, new ByteArrayByteIterator(value));
        }
        Map<String, ByteIterator> decoded = new HashMap<>();
        RecordEncoding.decode(RecordEncoding.encode(record), null, decoded);
        assertThat(decoded).hasSize(10);
        expected.forEach((name, value) -> assertThat(decoded.get(name).toArray()).isEqualTo(value));
    }

    @Test
    void readOfSomeFieldsReturnsOnlyThose() {
        Map<String, ByteIterator> record = new LinkedHashMap<>();
        record.put("field0", new ByteArrayByteIterator("zero".getBytes(StandardCharsets.UTF_8)));
        record.put("field1", new ByteArrayByteIterator("one".getBytes(StandardCharsets.UTF_8)));
        Map<String, ByteIterator> decoded = new HashMap<>();
        RecordEncoding.decode(RecordEncoding.encode(record), Set.of("field1"), decoded);
        assertThat(decoded).containsOnlyKeys("field1");
        assertThat(decoded.get("field1").toString()).isEqualTo("one");
    }

    @Test
    void oneFieldRecordIsTheValueSizePlusNineOrTenBytes() {
        assertThat(encodedSize(16)).isEqualTo(25);
        assertThat(encodedSize(127)).isEqualTo(136);
        assertThat(encodedSize(1024)).isEqualTo(1034);
        assertThat(encodedSize(4096)).isEqualTo(4106);
    }

    @Test
    void truncatedRecordIsRejectedWithItsOffset() {
        byte[] whole = RecordEncoding.encode(Map.of("field0", new ByteArrayByteIterator(new byte[300])));
        byte[] cut = Arrays.copyOf(whole, 200);
        assertThatThrownBy(() -> RecordEncoding.decode(cut, null, new HashMap<>()))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("length 300 at offset 10 runs past the end of a 200-byte record");
    }

    @Test
    void trailingBytesAreRejected() {
        byte[] whole = RecordEncoding.encode(Map.of("f", new ByteArrayByteIterator(new byte[3])));
        byte[] longer = Arrays.copyOf(whole, whole.length + 2);
        assertThatThrownBy(() -> RecordEncoding.decode(longer, null, new HashMap<>()))
            .hasMessageContaining("has 2 bytes after its 1 fields");
    }

    private static int encodedSize(int valueSize) {
        return RecordEncoding.encode(Map.of("field0", new ByteArrayByteIterator(new byte[valueSize]))).length;
    }
}
