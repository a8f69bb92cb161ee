package io.erda.fabric.shm;

/**
 * Layout of one record in a {@link Ring}. Records are 8-byte aligned and never wrap: a PAD record fills the end
 * of the buffer instead. Publication is Aeron-style: the producer writes everything else, then release-stores the
 * frame length; the consumer acquire-loads it (0 = nothing published yet), and zeroes the frame after use.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-------------------------------+-------------------------------+
 * |  frame length (release/acq.)  |             type              |
 * +-------------------------------+-------------------------------+
 * |                      sequence (64 bits)                       |
 * +-------------------------------+-------------------------------+
 * |        payload length         |     immediate data / status   |
 * +-------------------------------+-------------------------------+
 * |          sender's RNR timeout in nanoseconds (64 bits)        |
 * +---------------------------------------------------------------+
 * |                    payload (payload length)                   |
 * +---------------------------------------------------------------+
 * </pre>
 * Types: SEND (payload = message), WRITE_IMM (payload empty, payload length = bytes the WRITE wrote),
 * ACK (sequence = the message placed), NAK (status = ordinal of the sender's {@link io.erda.fabric.Status},
 * payload = UTF-8 explanation), PAD (only length and type are meaningful).
 */
final class RingRecord {
    static final int LENGTH_OFFSET = 0;
    static final int TYPE_OFFSET = 4;
    static final int SEQUENCE_OFFSET = 8;
    static final int PAYLOAD_LENGTH_OFFSET = 16;
    static final int IMM_OFFSET = 20;
    static final int RNR_TIMEOUT_OFFSET = 24;
    static final int HEADER_LENGTH = 32;
    static final int ALIGNMENT = 8;

    static final int PAD = 1;
    static final int SEND = 2;
    static final int WRITE_IMM = 3;
    static final int ACK = 4;
    static final int NAK = 5;

    private RingRecord() {
    }

    static int frameLength(int payloadLength) {
        return (HEADER_LENGTH + payloadLength + ALIGNMENT - 1) & -ALIGNMENT;
    }
}
