package io.erda.fabric.shm;

import static io.erda.fabric.shm.RingRecord.HEADER_LENGTH;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * One direction of a connection: a single-producer single-consumer ring of {@link RingRecord}s in shared memory.
 * A flyweight over the mapped ring; the producer and the consumer each keep their position privately, and only
 * the consumer's is shared (so the producer knows what space is free). The producer side is used under its
 * endpoint's lock (the "single producer" may be different threads, one at a time); the consumer side by one thread at
 * a time, holding the poller's consuming lock (the poller thread or an inline poller, see {@link Poller}).
 */
final class Ring {
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private final MemorySegment header;
    private final MemorySegment data;
    private final int capacity;
    private final int mask;
    private long producerPosition;
    private long consumerPosition;

    Ring(MemorySegment header, MemorySegment data) {
        this.header = header;
        this.data = data;
        this.capacity = (int) data.byteSize();
        this.mask = capacity - 1;
    }

    /** Largest payload a record can carry. */
    int maxPayload() {
        return capacity - HEADER_LENGTH;
    }

    // ---- producer

    /**
     * Publishes a record; false if the consumer has not freed enough space yet (try again later). The payload is
     * {@code payloadLength} bytes of {@code source} from {@code sourceOffset}, or none if {@code source} is null.
     */
    boolean offer(int type, long sequence, int imm, long rnrTimeoutNanos, MemorySegment source, long sourceOffset,
                  int payloadLength) {
        int frame = RingRecord.frameLength(source == null ? 0 : payloadLength);
        long consumed = (long) LONG.getAcquire(header, (long) RingFile.CONSUMER_POSITION_OFFSET);
        int index = (int) (producerPosition & mask);
        int toEnd = capacity - index;
        if (frame > toEnd) {
            if (producerPosition + toEnd - consumed > capacity) {
                return false;
            }
            data.set(ValueLayout.JAVA_INT, index + RingRecord.TYPE_OFFSET, RingRecord.PAD);
            INT.setRelease(data, (long) index + RingRecord.LENGTH_OFFSET, toEnd);
            producerPosition += toEnd;
            index = 0;
        }
        if (producerPosition + frame - consumed > capacity) {
            return false;
        }
        data.set(ValueLayout.JAVA_INT, index + RingRecord.TYPE_OFFSET, type);
        data.set(ValueLayout.JAVA_LONG, index + RingRecord.SEQUENCE_OFFSET, sequence);
        data.set(ValueLayout.JAVA_INT, index + RingRecord.PAYLOAD_LENGTH_OFFSET, payloadLength);
        data.set(ValueLayout.JAVA_INT, index + RingRecord.IMM_OFFSET, imm);
        data.set(ValueLayout.JAVA_LONG, index + RingRecord.RNR_TIMEOUT_OFFSET, rnrTimeoutNanos);
        if (source != null && payloadLength > 0) {
            MemorySegment.copy(source, sourceOffset, data, index + HEADER_LENGTH, payloadLength);
        }
        INT.setRelease(data, (long) index + RingRecord.LENGTH_OFFSET, frame);
        producerPosition += frame;
        return true;
    }

    /**
     * After a record was published: true if the consumer announced it is asleep and this call is the one that
     * takes the announcement (so one doorbell per sleep, however many records follow). See {@link #claim}.
     */
    boolean claimConsumerWakeup() {
        return claim(RingFile.CONSUMER_ASLEEP_OFFSET);
    }

    /** After {@link #offer} failed: the producer will wait for space; it must try once more before it waits. */
    void announceFull() {
        announce(RingFile.PRODUCER_WAITING_OFFSET);
    }

    void cancelFull() {
        cancel(RingFile.PRODUCER_WAITING_OFFSET);
    }

    // ---- consumer: announce sleep (then re-check), free space (then wake a waiting producer)

    /** The consumer is about to block; it must look at the ring once more afterwards before it does. */
    void announceSleep() {
        announce(RingFile.CONSUMER_ASLEEP_OFFSET);
    }

    /** The consumer is awake again (a producer may have cleared the word already). */
    void cancelSleep() {
        cancel(RingFile.CONSUMER_ASLEEP_OFFSET);
    }

    /** After records were consumed: true if the producer waits for space and this call takes its announcement. */
    boolean claimProducerWakeup() {
        return claim(RingFile.PRODUCER_WAITING_OFFSET);
    }

    // ---- the lost-wakeup protocol on one word of the ring header (RingFile)

    private void announce(int word) {
        INT.setVolatile(header, (long) word, 1);
        VarHandle.fullFence();
    }

    private void cancel(int word) {
        INT.setRelease(header, (long) word, 0);
    }

    /**
     * The other side's half: after its own store (a record published, space freed) a full fence, then the word.
     * With the fence in {@link #announce} at least one side sees the other's store: the announcer finds the
     * record or the space when it looks once more, or this finds the word set. The compare-and-set makes one
     * caller the waker per announcement.
     */
    private boolean claim(int word) {
        VarHandle.fullFence();
        return (int) INT.getVolatile(header, (long) word) != 0 && INT.compareAndSet(header, (long) word, 1, 0);
    }

    // ---- consumer: look at the record at the head, then consume it

    /** Frame length of the record at the head, or 0 if none is published. */
    int headFrame() {
        return (int) INT.getAcquire(data, (long) (consumerPosition & mask) + RingRecord.LENGTH_OFFSET);
    }

    private long head() {
        return consumerPosition & mask;
    }

    int headType() {
        return data.get(ValueLayout.JAVA_INT, head() + RingRecord.TYPE_OFFSET);
    }

    long headSequence() {
        return data.get(ValueLayout.JAVA_LONG, head() + RingRecord.SEQUENCE_OFFSET);
    }

    int headPayloadLength() {
        return data.get(ValueLayout.JAVA_INT, head() + RingRecord.PAYLOAD_LENGTH_OFFSET);
    }

    int headImm() {
        return data.get(ValueLayout.JAVA_INT, head() + RingRecord.IMM_OFFSET);
    }

    long headRnrTimeoutNanos() {
        return data.get(ValueLayout.JAVA_LONG, head() + RingRecord.RNR_TIMEOUT_OFFSET);
    }

    /** The head record's payload (valid until {@link #consumeHead}). */
    MemorySegment headPayload() {
        return data.asSlice(head() + HEADER_LENGTH, headPayloadLength());
    }

    /** Zeroes the head record (so a later record can never meet a stale length word) and frees its space. */
    void consumeHead(int frame) {
        data.asSlice(head(), frame).fill((byte) 0);
        consumerPosition += frame;
        LONG.setRelease(header, (long) RingFile.CONSUMER_POSITION_OFFSET, consumerPosition);
    }
}
