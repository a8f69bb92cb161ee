package io.erda.fabric.shm;

import static io.erda.fabric.shm.RingRecord.HEADER_LENGTH;

import io.erda.fabric.Status;
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
    private static final Status[] STATUSES = Status.values();

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

    /**
     * Frame length of the record at the head, or 0 if none is published. A published record is checked before
     * anything else of it is read ([bad-input]): frame length 8-aligned, inside the ring from the head and at
     * least a header long (a PAD: at least its length and type), a known type, a payload length that fits the
     * frame (a WRITE_IMM's, the bytes its WRITE wrote, only non-negative), a NAK's status a known one. Anything
     * else throws {@link RingViolation} naming the value and the limit; the caller fails the endpoint.
     */
    int headFrame() {
        long index = head();
        int frame = (int) INT.getAcquire(data, index + RingRecord.LENGTH_OFFSET);
        if (frame == 0) {
            return 0;
        }
        long room = capacity - index;
        if (frame < RingRecord.ALIGNMENT || frame > room || frame % RingRecord.ALIGNMENT != 0) {
            throw new RingViolation("record at ring index " + index + " has frame length " + frame + ", expected a multiple of "
                    + RingRecord.ALIGNMENT + " between " + RingRecord.ALIGNMENT + " and the " + room + " bytes to the ring's end");
        }
        int type = headType();
        if (type == RingRecord.PAD) {
            return frame;
        }
        if (type < RingRecord.PAD || type > RingRecord.NAK) {
            throw new RingViolation("record at ring index " + index + " has unknown type " + type + ", expected "
                    + RingRecord.PAD + " to " + RingRecord.NAK);
        }
        if (frame < HEADER_LENGTH) {
            throw new RingViolation("record of type " + type + " at ring index " + index + " has frame length " + frame
                    + ", shorter than its " + HEADER_LENGTH + "-byte header");
        }
        int payload = headPayloadLength();
        int limit = type == RingRecord.WRITE_IMM ? Integer.MAX_VALUE : frame - HEADER_LENGTH;
        if (payload < 0 || payload > limit) {
            throw new RingViolation("record of type " + type + " at ring index " + index + " has payload length " + payload
                    + ", expected 0 to " + limit);
        }
        if (type == RingRecord.NAK && (headImm() < 0 || headImm() >= STATUSES.length)) {
            throw new RingViolation("NAK at ring index " + index + " has status " + headImm() + ", expected 0 to "
                    + (STATUSES.length - 1));
        }
        return frame;
    }

    /** The status a NAK at the head carries (checked by {@link #headFrame}). */
    Status headStatus() {
        return STATUSES[headImm()];
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
