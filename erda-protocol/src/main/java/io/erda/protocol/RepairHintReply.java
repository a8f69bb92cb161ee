package io.erda.protocol;

import java.lang.foreign.MemorySegment;

import static io.erda.protocol.MessageHeader.INT;

/**
 * Body of {@link MessageType#REPAIR_HINT_REPLY}: what the server did about a client's "this key's newest object
 * looks torn" hint. The hint itself ({@link MessageType#REPAIR_HINT}) is a {@link KeyRequest}. A hint is only a
 * hint (docs/ARCHITECTURE.md, [leases]): the server rolls back only a reservation whose lease has expired.
 *
 * <pre>
 * +---------------------------------------------------------------+
 * |                     outcome ({@link Outcome})                 |
 * +---------------------------------------------------------------+
 * |                        reserved (zero)                        |
 * +---------------------------------------------------------------+
 * </pre>
 */
public record RepairHintReply(Outcome outcome) {
    public static final int OUTCOME_OFFSET = 0;
    public static final int LENGTH = 8;

    /** What the server found and did. */
    public enum Outcome {
        /** The newest version is complete: nothing to repair. */
        COMPLETE,
        /** The newest version is incomplete but its lease is still running: left alone. */
        LEASE_RUNNING,
        /** The newest version was incomplete: the entry now names the last complete version. */
        ROLLED_BACK,
        /** No complete version exists: the entry was removed (the key was never durably written). */
        REMOVED,
        /** The key has no entry. */
        NOT_FOUND
    }

    public int encode(MemorySegment s, long offset) {
        s.set(INT, offset + OUTCOME_OFFSET, outcome.ordinal());
        s.set(INT, offset + 4, 0);
        return LENGTH;
    }

    public static RepairHintReply decode(MemorySegment s, long offset, int bodyLength) {
        Body.require("REPAIR_HINT_REPLY", LENGTH, bodyLength);
        int code = Body.nonNegative("repair outcome", s.get(INT, offset + OUTCOME_OFFSET), Outcome.values().length - 1);
        return new RepairHintReply(Outcome.values()[code]);
    }
}
