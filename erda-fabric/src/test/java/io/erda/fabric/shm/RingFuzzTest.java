package io.erda.fabric.shm;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.erda.fabric.FabricException;
import io.erda.fabric.Status;
import io.erda.protocol.testing.Fuzzing;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * docs/ARCHITECTURE.md, [bad-input]: an shm peer's ring file, as the connector maps it, and the records of the ring
 * it consumes. The input is the file from its first byte (file header, ring 0's header, ring 0's records), padded
 * with zeros to a file of two {@value #CAPACITY}-byte rings and written to a real file on /dev/shm. A bad file or
 * record throws {@link RingViolation} naming the value and the limit (mapping wraps it in a
 * {@link FabricException}); the consumer reads records in the order and with the accessors {@code ShmEndpoint}
 * uses, and never past a frame or the ring.
 */
class RingFuzzTest {
    static final int CAPACITY = 4096;
    private static Path file;
    private static SocketChannel unconnected;

    @FuzzTest
    void ringFile(byte[] data) throws IOException {
        if (file == null) {
            file = Files.createTempFile(Path.of("/dev/shm"), "erda-ring-fuzz-", ".ring");
            unconnected = SocketChannel.open();
        }
        Files.write(file, Arrays.copyOf(data, (int) Math.max(data.length, RingFile.fileLength(CAPACITY))));
        ShmConnection c = new ShmConnection(unconnected);
        try {
            c.mapRings(file, RingFile.TO_CONNECTOR);
        } catch (FabricException e) {
            assertThat(e.getCause()).isInstanceOf(RingViolation.class);
            Fuzzing.rejected(e);
            return;
        }
        try {
            consumeAll(c.inbound);
        } catch (RingViolation e) {
            Fuzzing.rejected(e);
        } finally {
            c.unmapRings();
        }
    }

    /** What ShmEndpoint.handle reads of each record, until the ring is empty. */
    private static void consumeAll(Ring ring) {
        long consumed = 0;
        int frame;
        while ((frame = ring.headFrame()) != 0) {
            assertThat(frame % RingRecord.ALIGNMENT).isZero();
            switch (ring.headType()) {
                case RingRecord.NAK -> {
                    assertThat(ring.headStatus()).isNotNull();
                    assertThat(ring.headPayload().byteSize()).isLessThanOrEqualTo(frame - RingRecord.HEADER_LENGTH);
                    new String(ring.headPayload().toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
                }
                case RingRecord.SEND -> {
                    assertThat(ring.headPayload().byteSize()).isLessThanOrEqualTo(frame - RingRecord.HEADER_LENGTH);
                    ring.headPayload().toArray(ValueLayout.JAVA_BYTE);
                    ring.headSequence();
                    ring.headRnrTimeoutNanos();
                }
                case RingRecord.WRITE_IMM -> assertThat(ring.headPayloadLength()).isNotNegative();
                case RingRecord.ACK, RingRecord.PAD -> ring.headSequence();
                default -> throw new AssertionError("headFrame let type " + ring.headType() + " through");
            }
            ring.consumeHead(frame);
            consumed += frame;
            assertThat(consumed).isLessThanOrEqualTo(CAPACITY); // records never wrap; the data after the end is zero
        }
    }

    @AfterAll
    static void removeFile() throws IOException {
        if (file != null) {
            Files.deleteIfExists(file);
            unconnected.close();
        }
    }

    // ---------------------------------------------------------------- seed corpus: files the producer wrote

    static Map<String, byte[]> seeds() {
        Map<String, byte[]> seeds = new LinkedHashMap<>();
        seeds.put("empty", written(ring -> { }));
        seeds.put("send-ack-nak-write-imm", written(ring -> {
            offer(ring, RingRecord.SEND, 1, 0, "a message");
            offer(ring, RingRecord.ACK, 7, 0, null);
            offer(ring, RingRecord.NAK, 8, Status.RNR_RETRY_EXCEEDED.ordinal(), "no receive posted");
            ring.offer(RingRecord.WRITE_IMM, 2, 42, 1_000_000, null, 0, 4096);
        }));
        return seeds;
    }

    private static void offer(Ring ring, int type, long sequence, int imm, String payload) {
        MemorySegment bytes = payload == null ? null : MemorySegment.ofArray(payload.getBytes(StandardCharsets.UTF_8));
        assertThat(ring.offer(type, sequence, imm, 1_000_000, bytes, 0, bytes == null ? 0 : (int) bytes.byteSize())).isTrue();
    }

    /** A formatted ring file with what {@code producer} offered into ring 0, cut after its last nonzero byte. */
    private static byte[] written(java.util.function.Consumer<Ring> producer) {
        MemorySegment file = MemorySegment.ofArray(new long[(int) RingFile.fileLength(CAPACITY) / 8]);
        RingFile.format(file, CAPACITY);
        producer.accept(RingFile.ring(file, RingFile.TO_CONNECTOR, CAPACITY));
        byte[] bytes = file.toArray(ValueLayout.JAVA_BYTE);
        int end = bytes.length;
        while (bytes[end - 1] == 0) {
            end--;
        }
        return Arrays.copyOf(bytes, end);
    }

    @Test
    void seedCorpusIsWhatTheProducerWrites() {
        Fuzzing.seedCorpus(RingFuzzTest.class, "ringFile", seeds());
    }
}
