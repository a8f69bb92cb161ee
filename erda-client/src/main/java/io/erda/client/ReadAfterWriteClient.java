package io.erda.client;

import io.erda.protocol.MessageType;
import io.erda.protocol.PutRequest;
import io.erda.protocol.RawReserveReply;
import io.erda.protocol.WireStatus;
import io.erda.protocol.memory.Key;
import io.erda.protocol.memory.ObjectLayout;
import io.erda.protocol.memory.RingSlotLayout;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * The Read After Write baseline (paper §5.1): a PUT asks for a slot of the server's PM ring (RAW_RESERVE, two-sided),
 * WRITEs the slot there one-sided ({@link RingSlotLayout}: the reserved position and a CRC in front of the
 * {@link ObjectLayout} object) and READs it back to force it; it is
 * durable when that READ completes, and the server's poller applies it asynchronously. A DELETE writes a tombstone
 * the same way. GETs are two-sided ({@link BaselineClient}). Pooling, threading
 * and failures: {@link PooledClient}.
 */
public final class ReadAfterWriteClient extends BaselineClient {
    /** A PUT whose WRITE keeps outliving the slot's lease fails after this many reservations. */
    static final int MAX_ATTEMPTS = 4;

    private ReadAfterWriteClient(ClientOptions options) {
        super(options);
    }

    public static ReadAfterWriteClient connect(ClientOptions options) {
        return connected(new ReadAfterWriteClient(options.withProtocol(ClientOptions.Protocol.READ_AFTER_WRITE)));
    }

    @Override
    void write(ClientConnection c, Key key, MemorySegment value) {
        boolean delete = value == null;
        int valueLength = (int) checkPairLimits(c, key, delete ? 0 : value.byteSize());
        long objectLength = ObjectLayout.length(key.length(), valueLength);
        int slotLength = RingSlotLayout.HEADER_LENGTH + (int) objectLength;
        c.writes.ensure(slotLength);
        ObjectLayout.encode(c.writes.segment(), RingSlotLayout.HEADER_LENGTH, key.bytes(),
                delete ? MemorySegment.NULL : value, delete);
        PutRequest request = new PutRequest(delete, valueLength, key.bytes());
        long[] tookMillis = null; // only for the error: a PUT within its lease allocates nothing more
        long leaseMillis = 0;
        for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
            long start = System.nanoTime();
            RawReserveReply slot = c.call(MessageType.RAW_RESERVE, request::encode, r -> RawReserveReply.decode(
                    r.expect(MessageType.RAW_RESERVE_REPLY).body(), 0, (int) r.body().byteSize()));
            if (slot.objectLength() != objectLength) {
                throw new ErdaException(WireStatus.INTERNAL, "server reserved " + slot.objectLength()
                        + " bytes for an object of " + objectLength);
            }
            RingSlotLayout.seal(c.writes.segment(), 0, slot.position(), objectLength);
            c.sync().write(c.writes.region(), 0, slotLength, slot.address(), slot.rkey());
            // the scheme's forcing READ (a FLUSH, emulated by a READ where the provider has none)
            c.sync().flush(slot.address(), slotLength, slot.rkey());
            long took = System.nanoTime() - start;
            if (took <= slot.leaseNanos()) {
                return;
            }
            if (tookMillis == null) {
                tookMillis = new long[MAX_ATTEMPTS];
            }
            tookMillis[attempt - 1] = TimeUnit.NANOSECONDS.toMillis(took);
            leaseMillis = TimeUnit.NANOSECONDS.toMillis(slot.leaseNanos());
            // slower than the lease: the poller may have recycled the slot unapplied, so write it again
            stats.putRetries.increment();
        }
        throw new ErdaException(WireStatus.INTERNAL, "PUT of a " + objectLength + "-byte object outlived its ring slot's"
                + " lease of " + leaseMillis + " ms " + MAX_ATTEMPTS + " times (from its"
                + " reservation to its forcing READ: " + Arrays.toString(tookMillis) + " ms); the server's --lease-ms"
                + " bounds how long a client may take");
    }
}
