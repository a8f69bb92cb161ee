package io.erda.client;

import io.erda.protocol.HerdPut;
import io.erda.protocol.KeyRequest;
import io.erda.protocol.MessageHeader;
import io.erda.protocol.MessageType;
import io.erda.protocol.PutRequest;
import io.erda.protocol.RawReserveReply;
import io.erda.protocol.RdmpCommitRequest;
import io.erda.protocol.WireStatus;
import io.erda.protocol.memory.Key;
import io.erda.protocol.memory.RdmpObjectLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;

/**
 * RDMP-KV's three protocols (Li et al., RDMP-KV §III), chosen by {@link ClientOptions#protocol()}:
 * <ul>
 *   <li>{@link ClientOptions.Protocol#HERD RDMA-HERD}: a PUT sends key and value in one request (HERD_PUT) and the
 *   server stages them into PM; a GET is answered with the value (two-sided).</li>
 *   <li>{@link ClientOptions.Protocol#RDMP_SA RDMP-SA}: a PUT asks for an object (RDMP_ALLOC: the server allocates,
 *   zeroes the flags persistently, logs and indexes it), WRITEs the value there, then asks the server to flush it and
 *   set the flags (RDMP_COMMIT); values below the server's threshold ({@code rdmp_sa_threshold} in its STATS, read
 *   at connect) go the HERD way.</li>
 *   <li>{@link ClientOptions.Protocol#RDMP_CC RDMP-CC}: the same RDMP_ALLOC and WRITE, then a one-sided FLUSH (the
 *   provider's, which is a READ where the device has none: {@link #nativeFlush}), the persist flag WRITEn and
 *   flushed, and the valid flag WRITEn; no server CPU after the metadata phase.</li>
 * </ul>
 * GET of RDMP-SA and RDMP-CC: RDMP_LOOKUP returns the newest object's address, one READ fetches sequence number, key,
 * value and flags; a zero valid flag (a PUT in progress), another sequence number or key (the slot was reused) means
 * ask again ({@link ClientStats#getRetries()}), up to the operation timeout. A DELETE is a HERD_PUT with the delete
 * flag on all three. Pooling, threading and failures: {@link PooledClient}.
 */
public final class RdmpClient extends PooledClient {
    /** A PUT whose object is rolled back before it is complete (it outlived its lease) fails after this many tries. */
    static final int MAX_ATTEMPTS = 4;

    private final ClientOptions.Protocol protocol;
    /** RDMP-SA: values shorter than this go the HERD way; -1 for the other two. */
    private int saThreshold = -1;
    private boolean nativeFlush;

    private RdmpClient(ClientOptions options) {
        super(options);
        this.protocol = options.protocol();
    }

    /** Connects with {@code options}' protocol, which must be one of RDMP-KV's three. */
    public static RdmpClient connect(ClientOptions options) {
        ClientOptions.Protocol p = options.protocol();
        if (p != ClientOptions.Protocol.HERD && p != ClientOptions.Protocol.RDMP_SA && p != ClientOptions.Protocol.RDMP_CC) {
            throw new IllegalArgumentException("protocol " + p.option() + " is not one of RDMP-KV's: herd, rdmp-sa, rdmp-cc");
        }
        RdmpClient client = connected(new RdmpClient(options));
        try {
            Map<String, String> stats = client.serverStats();
            client.nativeFlush = "1".equals(stats.get("rdmp_cc_native_flush"));
            if (p == ClientOptions.Protocol.RDMP_SA) {
                String threshold = stats.get("rdmp_sa_threshold");
                if (threshold == null) {
                    throw new ErdaException(WireStatus.INTERNAL, "server states no rdmp_sa_threshold in its STATS");
                }
                client.saThreshold = Integer.parseInt(threshold);
            }
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
        return client;
    }

    /** RDMP-SA's threshold as the server stated it (values shorter go in the request); -1 for HERD and RDMP-CC. */
    public int saThreshold() {
        return saThreshold;
    }

    /**
     * Whether RDMP-CC's one-sided durability is the device's own FLUSH (true) or a READ of the range (false), as the
     * server's fabric capability says ({@code FabricCapabilities.nativeFlush}).
     */
    public boolean nativeFlush() {
        return nativeFlush;
    }

    @Override
    MemorySegment read(ClientConnection c, Key key) {
        if (protocol == ClientOptions.Protocol.HERD) {
            stats.twoSidedGets.increment();
            return c.getTwoSided(key);
        }
        int keyLength = key.length();
        long giveUp = System.nanoTime() + options().operationTimeout().toNanos();
        while (true) {
            RawReserveReply object = c.call(MessageType.RDMP_LOOKUP, new KeyRequest(key.bytes())::encode, reply ->
                    reply.status() == WireStatus.NOT_FOUND ? null : RawReserveReply.decode(
                            reply.expect(MessageType.RDMP_LOOKUP_REPLY).body(), 0, (int) reply.body().byteSize()));
            if (object == null) {
                return null;
            }
            int valueLength = RdmpObjectLayout.valueLength(object.objectLength(), keyLength);
            int length = RdmpObjectLayout.readLength(keyLength, valueLength);
            c.reads.ensure(length);
            c.read(0, length, object.address() + RdmpObjectLayout.SEQUENCE_OFFSET, object.rkey());
            stats.oneSidedReads.increment();
            MemorySegment read = c.reads.segment().asSlice(0, length);
            if (RdmpObjectLayout.readIsValid(read, object.position(), key.bytes(), valueLength)) {
                return read.asSlice(RdmpObjectLayout.valueOffsetInRead(keyLength), valueLength);
            }
            // paper §III-C: a zero valid flag is a PUT in progress; ask the server again
            stats.getRetries.increment();
            if (System.nanoTime() - giveUp > 0) {
                throw new ErdaException(WireStatus.INTERNAL, "GET of " + key + " found no valid object within "
                        + options().operationTimeout().toMillis() + " ms (sequence " + object.position() + ")");
            }
            Thread.onSpinWait();
        }
    }

    @Override
    void write(ClientConnection c, Key key, MemorySegment value) {
        boolean delete = value == null;
        int valueLength = (int) checkPairLimits(c, key, delete ? 0 : value.byteSize());
        if (delete || protocol == ClientOptions.Protocol.HERD
                || protocol == ClientOptions.Protocol.RDMP_SA && valueLength < saThreshold) {
            c.ensureRequestCapacity(MessageHeader.LENGTH + HerdPut.encodedLength(key.length(), valueLength));
            c.call(MessageType.HERD_PUT, (s, o) -> HerdPut.encode(s, o, key.bytes(), value),
                    r -> r.expect(MessageType.HERD_PUT_REPLY));
            return;
        }
        c.writes.ensure(valueLength);
        MemorySegment.copy(value, 0, c.writes.segment(), 0, valueLength);
        long objectLength = RdmpObjectLayout.length(key.length(), valueLength);
        PutRequest request = new PutRequest(false, valueLength, key.bytes());
        for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
            long start = System.nanoTime();
            RawReserveReply object = c.call(MessageType.RDMP_ALLOC, request::encode, r -> RawReserveReply.decode(
                    r.expect(MessageType.RDMP_ALLOC_REPLY).body(), 0, (int) r.body().byteSize()));
            if (object.objectLength() != objectLength) {
                throw new ErdaException(WireStatus.INTERNAL, "server allocated an object of " + object.objectLength()
                        + " bytes for one of " + objectLength);
            }
            long valueAddress = object.address() + RdmpObjectLayout.valueOffset(key.length());
            if (valueLength > 0) {
                c.sync().write(c.writes.region(), 0, valueLength, valueAddress, object.rkey());
            }
            if (protocol == ClientOptions.Protocol.RDMP_SA ? commitByServer(c, object) : commitOneSided(c, key, object,
                    valueLength, valueAddress, start)) {
                return;
            }
            stats.putRetries.increment();
        }
        throw new ErdaException(WireStatus.INTERNAL, "PUT of a " + objectLength + "-byte RDMP object was rolled back"
                + " before it completed " + MAX_ATTEMPTS + " times");
    }

    /** RDMP-SA: the server flushes and sets the flags; false if it rolled the object back first (lease). */
    private static boolean commitByServer(ClientConnection c, RawReserveReply object) {
        try {
            c.call(MessageType.RDMP_COMMIT, new RdmpCommitRequest(object.position(), object.address())::encode,
                    r -> r.expect(MessageType.RDMP_COMMIT_REPLY));
            return true;
        } catch (ErdaException e) {
            if (e.status() == WireStatus.NOT_FOUND) {
                return false;
            }
            throw e;
        }
    }

    /**
     * RDMP-CC: the value made durable one-sided, then the persist flag WRITEn and made durable, then the valid flag
     * (paper §III-C: a valid flag set before the persist flag is durable would let a GET see a value a crash loses).
     * False, writing no flag, when the lease ran out first: the server may have rolled the object back.
     */
    private boolean commitOneSided(ClientConnection c, Key key, RawReserveReply object, int valueLength,
                                   long valueAddress, long start) {
        if (valueLength > 0) {
            c.sync().flush(valueAddress, valueLength, object.rkey());
        }
        if (System.nanoTime() - start > object.leaseNanos()) {
            return false;
        }
        long persistFlag = object.address() + RdmpObjectLayout.persistFlagOffset(key.length(), valueLength);
        c.entries.segment().set(ValueLayout.JAVA_BYTE, 0, RdmpObjectLayout.FLAG_SET);
        c.sync().write(c.entries.region(), 0, 1, persistFlag, object.rkey());
        c.sync().flush(persistFlag, 1, object.rkey());
        c.sync().write(c.entries.region(), 0, 1, persistFlag + 1, object.rkey());
        return true;
    }
}
