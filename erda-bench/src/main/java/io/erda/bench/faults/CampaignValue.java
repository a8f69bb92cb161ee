package io.erda.bench.faults;

import io.erda.history.HistoryRecorder;
import io.erda.history.Operation;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

/**
 * The keys and values a fault campaign writes: every value names its writer, key and sequence number and carries
 * bytes derived from them, so a GET proves by itself which PUT wrote what it returned, or that no PUT wrote it whole.
 *
 * <pre>
 * 0  magic 'CAMP' (u32)   4  writer (u32)   8  key index (u32)   12  value length (u32)   16  sequence (u64)
 * 24 payload: pseudo-random bytes seeded by writer, key and sequence
 * </pre>
 * A value cut short, mixed from two versions or damaged anywhere fails {@link #check}; one of another key is foreign.
 */
final class CampaignValue {
    static final int HEADER = 24;
    /** What a history records for a GET that returned bytes no PUT wrote whole: no sequence number is negative. */
    static final long TORN = -1;
    private static final int MAGIC = 0x504D4143; // "CAMP" little-endian

    private CampaignValue() {
    }

    /** The key of writer {@code writer}'s {@code index}-th key. */
    static byte[] key(int writer, int index) {
        return ("w" + writer + "k" + index).getBytes(StandardCharsets.US_ASCII);
    }

    static byte[] encode(int writer, int index, long seq, int length) {
        if (length < HEADER) {
            throw new IllegalArgumentException("value length " + length + " is below the header's " + HEADER);
        }
        byte[] v = new byte[length];
        payload(writer, index, seq).nextBytes(v);
        ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN).putInt(MAGIC).putInt(writer).putInt(index).putInt(length)
                .putLong(seq);
        return v;
    }

    /** A checked GET result: the sequence number it proves, or why it proves none. */
    record Check(long seq, String problem) {
        boolean ok() {
            return problem == null;
        }
    }

    /** Checks that {@code value}, read under writer {@code writer}'s key {@code index}, is one PUT's value, whole. */
    static Check check(int writer, int index, byte[] value) {
        if (value.length < HEADER) {
            return new Check(-1, "torn: " + value.length + " bytes, below the " + HEADER + "-byte header");
        }
        ByteBuffer b = ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN);
        int magic = b.getInt();
        int w = b.getInt();
        int k = b.getInt();
        int length = b.getInt();
        long seq = b.getLong();
        if (magic != MAGIC) {
            return new Check(-1, "torn: magic " + Integer.toHexString(magic));
        }
        if (w != writer || k != index) {
            return new Check(seq, "foreign: value of writer " + w + " key " + k);
        }
        if (length != value.length) {
            return new Check(seq, "torn: " + value.length + " bytes where seq " + seq + " wrote " + length);
        }
        byte[] expected = encode(writer, index, seq, length);
        for (int i = HEADER; i < length; i++) {
            if (expected[i] != value[i]) {
                return new Check(seq, "torn: byte " + i + " of " + length + " differs from seq " + seq + "'s");
            }
        }
        return new Check(seq, null);
    }

    /**
     * What a history records for {@code value}, read under writer {@code writer}'s key {@code index}: its sequence
     * number, {@link Operation#ABSENT} for nothing, or {@link #TORN} (noting why, so the report can say).
     */
    static long historyValue(int writer, int index, byte[] value, HistoryRecorder history, int process) {
        if (value == null) {
            return Operation.ABSENT;
        }
        Check check = check(writer, index, value);
        if (check.ok()) {
            return check.seq();
        }
        history.note(process, CampaignVerdict.TORN + " w" + writer + "k" + index + " " + check.problem());
        return TORN;
    }

    private static SplittableRandom payload(int writer, int index, long seq) {
        return new SplittableRandom(((long) writer << 40) ^ ((long) index << 20) ^ seq * 0x9E3779B97F4A7C15L);
    }
}
