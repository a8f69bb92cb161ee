package io.erda.protocol;

import java.lang.foreign.MemorySegment;

import static io.erda.protocol.MessageHeader.INT;

/**
 * What a clustered primary appends to a {@link PutReply} when the key's shard has a backup (docs/ARCHITECTURE.md,
 * [cluster]): the backup server's id and the reservation the backup made for the same object. The client WRITEs the
 * object there too, and applies that server's persistence method, before the PUT returns. A PUT_REPLY body is
 * {@link PutReply#LENGTH} bytes without one and {@link PutReply#LENGTH} + {@link #LENGTH} with one.
 *
 * <pre>
 * +-------------------------------+-------------------------------+
 * |        backup server id       |        reserved (zero)        |
 * +-------------------------------+-------------------------------+
 * |        the backup's PutReply ({@link PutReply#LENGTH} bytes)           |
 * </pre>
 */
public record BackupReservation(int server, PutReply reservation) {
    public static final int SERVER_OFFSET = 0;
    public static final int RESERVATION_OFFSET = 8;
    public static final int LENGTH = RESERVATION_OFFSET + PutReply.LENGTH;

    public int encode(MemorySegment s, long offset) {
        s.set(INT, offset + SERVER_OFFSET, server);
        s.set(INT, offset + SERVER_OFFSET + 4, 0);
        reservation.encode(s, offset + RESERVATION_OFFSET);
        return LENGTH;
    }

    /** The backup part of a PUT_REPLY body of {@code bodyLength} bytes at {@code offset}, or null if it has none. */
    public static BackupReservation decodeAfterPutReply(MemorySegment s, long offset, int bodyLength) {
        if (bodyLength <= PutReply.LENGTH) {
            return null;
        }
        Body.require("PUT_REPLY with a backup reservation", PutReply.LENGTH + LENGTH, bodyLength);
        long at = offset + PutReply.LENGTH;
        int server = Body.nonNegative("backup server id", s.get(INT, at + SERVER_OFFSET), Integer.MAX_VALUE);
        return new BackupReservation(server, PutReply.decode(s, at + RESERVATION_OFFSET, PutReply.LENGTH));
    }
}
