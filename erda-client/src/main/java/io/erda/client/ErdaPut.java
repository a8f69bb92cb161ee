package io.erda.client;

import io.erda.fabric.FabricException;

import io.erda.protocol.BackupReservation;
import io.erda.protocol.FlushRequest;
import io.erda.protocol.MessageType;
import io.erda.protocol.PutMode;
import io.erda.protocol.PutReply;
import io.erda.protocol.PutRequest;
import io.erda.protocol.WireStatus;
import io.erda.protocol.memory.Key;
import io.erda.protocol.memory.LogAddress;
import io.erda.protocol.memory.ObjectLayout;
import java.lang.foreign.MemorySegment;

/**
 * The Erda PUT and DELETE (paper §3.3, Fig. 7; docs/ARCHITECTURE.md, [persistence] and [leases]), on one connection:
 * encode the object into registered memory (the only copy of the caller's bytes), SEND the reservation request,
 * WRITE the object one-sided to the address the server reserved, apply the server's persistence method, and if
 * the whole took longer than the lease, confirm by re-reading the entry ({@link RemoteTable#currentAndUnchanged})
 * and PUT again if the object is no longer current. PUTs to a head being cleaned stay one-sided (paper §4.4 lets
 * them go two-sided; here the server places the reservation, in the chain the cleaner fills once it replicates, so
 * the WRITE lands where the cleaner expects).
 */
final class ErdaPut {
    /** A PUT whose writes keep outliving the lease fails after this many attempts rather than loop forever. */
    static final int MAX_ATTEMPTS = 4;

    private final ClientStats stats;
    private final RemoteTable table;
    private final BackupWrites backups;

    private final OneSidedPut oneSided;

    ErdaPut(ClientStats stats, RemoteTable table, BackupWrites backups, ObjectReader objects) {
        this.stats = stats;
        this.table = table;
        this.backups = backups;
        this.oneSided = new OneSidedPut(stats, table, objects);
    }

    /** One-sided mode: gives back the blocks of heads whose state changed since they were leased. */
    void returnStaleBlocks(ClientConnection c) {
        oneSided.returnBlocks(c, false);
    }

    /** One-sided mode: gives back every block the connection holds (it is closing). */
    void returnAllBlocks(ClientConnection c) {
        oneSided.returnBlocks(c, true);
    }

    /** A PUT_REPLY: the reservation here, and the backup's when the server is a clustered primary ([cluster]). */
    private record Reserved(PutReply reply, BackupReservation backup) {
    }

    /** Stores {@code value} under {@code key}, or a tombstone when {@code value} is null. */
    void put(ClientConnection c, Key key, MemorySegment value) {
        boolean delete = value == null;
        int valueLength = delete ? 0 : checkValueLength(c, key, value.byteSize());
        checkRequestLength(c, key);
        long objectLength = ObjectLayout.length(key.length(), valueLength);
        c.writes.ensure(objectLength);
        ObjectLayout.encode(c.writes.segment(), 0, key.bytes(), delete ? MemorySegment.NULL : value, delete);
        PutRequest request = new PutRequest(delete, valueLength, key.bytes());
        if (c.view().info().putMode() == PutMode.ONE_SIDED) {
            // updates are the client's CAS; only a key without an entry goes to the server, which inserts it
            oneSided.put(c, key, delete, objectLength, () -> reserve(c, key, request, delete, objectLength));
            return;
        }
        reserve(c, key, request, delete, objectLength);
    }

    /**
     * The reservation PUT (paper §3.3): the server reserves and flips (in one-sided mode it only inserts, and answers
     * PUBLISH_BY_CAS for a key that exists), the client WRITEs and persists, and confirms the entry if it outlived the
     * lease.
     */
    private void reserve(ClientConnection c, Key key, PutRequest request, boolean delete, long objectLength) {
        for (int attempt = 1; ; attempt++) {
            long start = System.nanoTime();
            Reserved reserved;
            try {
                reserved = c.call(MessageType.PUT, request::encode, r -> {
                    MemorySegment body = r.expect(MessageType.PUT_REPLY).body();
                    int length = (int) body.byteSize();
                    return new Reserved(PutReply.decode(body, 0, length),
                            BackupReservation.decodeAfterPutReply(body, 0, length));
                });
            } catch (ErdaException e) {
                if (delete && e.status() == WireStatus.NOT_FOUND) {
                    return; // deleting a missing key
                }
                throw e;
            }
            PutReply reply = reserved.reply();
            BackupReservation backup = reserved.backup();
            if (reply.objectLength() != objectLength
                    || backup != null && backup.reservation().objectLength() != objectLength) {
                throw new ErdaException(WireStatus.INTERNAL, "server reserved " + reply.objectLength()
                        + " bytes for an object of " + objectLength);
            }
            int generation = c.view().generation(reply.head()); // the call processed every HEAD_STATE sent before the reply
            try {
                if (backup == null) {
                    c.sync().write(c.writes.region(), 0, (int) objectLength, reply.address(), reply.rkey());
                } else {
                    writeBoth(c, reply, backup, objectLength);
                }
                persist(c, reply);
            } catch (WriteOutcomeUnknownException e) {
                throw e;
            } catch (FabricException e) {
                // the object may already be visible (or on the backup, which a promotion makes visible): not retried
                throw new WriteOutcomeUnknownException((delete ? "DELETE" : "PUT") + " failed after its WRITE began, so "
                        + "it may have taken effect: " + e.getMessage(), e);
            }
            if (System.nanoTime() - start <= reply.leaseNanos()) {
                return;
            }
            if (backup != null) {
                // the entry re-read below is the primary's; the backup may have rolled back: PUT both again
                stats.putRetries.increment();
                if (attempt == MAX_ATTEMPTS) {
                    throw new ErdaException(WireStatus.INTERNAL, "replicated PUT of a " + objectLength + "-byte object "
                            + "outlived its " + reply.leaseNanos() / 1_000_000 + " ms lease " + attempt + " times");
                }
                continue;
            }
            stats.leaseConfirmations.increment();
            long units = LogAddress.unitsForBytes(reply.chainOffset());
            if (table.currentAndUnchanged(c, key, reply.head(), units, generation)) {
                return;
            }
            if (attempt == MAX_ATTEMPTS) {
                throw new ErdaException(WireStatus.INTERNAL, "PUT of a " + objectLength + "-byte object outlived its "
                        + reply.leaseNanos() / 1_000_000 + " ms lease and was rolled back " + attempt + " times");
            }
            stats.putRetries.increment();
        }
    }

    /**
     * [cluster]: the backup's WRITE (with its persistence method) first, then the primary's. GETs read the primary, and
     * an object there is visible as soon as it lands, before the PUT returns; written in this order, a value any GET
     * saw is on the backup too, so a promotion cannot take back a value a reader has seen. (Overlapping the two WRITEs
     * saved a round trip, but a PUT whose backup WRITE failed left its value visible on the primary only: the nemesis
     * read it there, then the older value from the promoted backup.) If the backup's WRITE fails, nothing is written
     * to the primary, whose reservation is left to its lease.
     */
    private void writeBoth(ClientConnection c, PutReply reply, BackupReservation backup, long objectLength) {
        backups.write(backup.server(), backup.reservation(), c.writes.segment().asSlice(0, objectLength));
        c.sync().startWrite(c.writes.region(), 0, (int) objectLength, reply.address(), reply.rkey()).await();
    }

    /** Makes the WRITE persistent the way the server advertised (docs/ARCHITECTURE.md, [persistence]). */
    static void persist(ClientConnection c, PutReply reply) {
        switch (c.view().info().persistence()) {
            case WSP -> { }
            // a FLUSH (emulated by a READ where the provider has none) completes after every earlier WRITE
            case READ_AFTER_WRITE -> c.sync().flush(reply.address(), reply.objectLength(), reply.rkey());
            case SERVER_FLUSH -> c.call(MessageType.FLUSH,
                    new FlushRequest(reply.head(), reply.chainOffset(), reply.objectLength())::encode,
                    r -> r.expect(MessageType.FLUSH_REPLY));
        }
    }

    /** The value limit: what fits a segment after the object header and key, and what the server accepts. */
    private static int checkValueLength(ClientConnection c, Key key, long valueLength) {
        StoreView view = c.view();
        long fits = view.maxObjectLength() - ObjectLayout.HEADER_LENGTH - key.length();
        long limit = Math.min(fits, view.info().maxValueLength());
        if (valueLength > limit) {
            throw new IllegalArgumentException("value length " + valueLength + " exceeds the limit " + limit
                    + " for a " + key.length() + "-byte key (segment " + view.info().segmentSize() + " bytes minus "
                    + (view.info().segmentSize() - view.maxObjectLength()) + "-byte segment header, "
                    + ObjectLayout.HEADER_LENGTH + "-byte object header and key; server maximum "
                    + view.info().maxValueLength() + ")");
        }
        return (int) valueLength;
    }

    private static void checkRequestLength(ClientConnection c, Key key) {
        int limit = Math.min(c.maxRequestBody() - PutRequest.KEY_OFFSET, c.view().info().maxKeyLength());
        if (key.length() > limit) {
            throw new IllegalArgumentException("key length " + key.length() + " exceeds the limit " + limit
                    + " of this server");
        }
    }
}
