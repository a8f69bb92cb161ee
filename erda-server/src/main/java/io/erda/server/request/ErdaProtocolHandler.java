package io.erda.server.request;

import io.erda.cleaner.CleaningReport;
import io.erda.fabric.MemoryRegion;
import io.erda.protocol.BackupReservation;
import io.erda.protocol.BlockRequest;
import io.erda.protocol.BodyEncoder;
import io.erda.protocol.CleanRequest;
import io.erda.protocol.ConnectData;
import io.erda.protocol.ErrorReply;
import io.erda.protocol.FlushRequest;
import io.erda.protocol.GetReply;
import io.erda.protocol.HeadArray;
import io.erda.protocol.KeyRequest;
import io.erda.protocol.MessageType;
import io.erda.protocol.PersistenceMethod;
import io.erda.protocol.PutMode;
import io.erda.protocol.PutReply;
import io.erda.protocol.PutRequest;
import io.erda.protocol.RepairHintReply;
import io.erda.protocol.StoreInfo;
import io.erda.protocol.WireStatus;
import io.erda.protocol.memory.Key;
import io.erda.protocol.memory.ObjectLayout;
import io.erda.protocol.memory.TableGeometry;
import io.erda.server.store.RegionRegistry;
import io.erda.server.store.RequestException;
import io.erda.server.store.Store;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/** The Erda protocol (paper §3.3): reservations for one-sided WRITEs, plus the two-sided fallbacks. */
public final class ErdaProtocolHandler implements ProtocolHandler {
    private static final Logger LOG = Logger.getLogger(ErdaProtocolHandler.class.getName());
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final Store store;
    private final RegionRegistry registry;
    private final PersistenceMethod persistence;
    private final int maxMessageLength;
    private final Supplier<String> stats;
    private final Cleaner cleaner;
    private final Replication replication;

    /** The admin CLEAN: cleans one head and returns the run's report. */
    @FunctionalInterface
    public interface Cleaner {
        CleaningReport clean(int head) throws InterruptedException;
    }

    public ErdaProtocolHandler(Store store, RegionRegistry registry, PersistenceMethod persistence,
                               int maxMessageLength, Supplier<String> stats, Cleaner cleaner,
                               Replication replication) {
        this.cleaner = cleaner;
        this.replication = replication;
        this.store = store;
        this.registry = registry;
        this.persistence = persistence;
        this.maxMessageLength = maxMessageLength;
        this.stats = stats;
    }

    @Override
    public void handle(Request request, Replies replies) {
        MemorySegment s = request.message();
        long body = Request.BODY_OFFSET;
        switch (request.type()) {
            case HELLO -> {
                StoreInfo info = storeInfo();
                replies.reply(MessageType.HELLO_REPLY, WireStatus.OK, info.encodedLength(), info::encode);
            }
            case PUT -> {
                requireKeyLength(s, body + PutRequest.KEY_LENGTH_OFFSET, request.bodyLength(), PutRequest.KEY_OFFSET);
                PutRequest put = PutRequest.decode(s, body, request.bodyLength(), ObjectLayout.MAX_KEY_LENGTH,
                        Integer.MAX_VALUE);
                Replication.Backup backup = replication.backupFor(Key.of(put.key()), put);
                if (backup == null) {
                    PutReply reply = reserve(put);
                    replies.reply(MessageType.PUT_REPLY, WireStatus.OK, PutReply.LENGTH, reply::encode);
                } else {
                    putReplicated(put, backup, replies);
                }
            }
            case GET -> {
                replyValue(replies, store.get(key(request)));
            }
            case FLUSH -> {
                FlushRequest flush = FlushRequest.decode(s, body, request.bodyLength());
                store.flush(flush.head(), flush.chainOffset(), flush.length());
                replies.reply(MessageType.FLUSH_REPLY, WireStatus.OK, 0, BodyEncoder.EMPTY);
            }
            case HEADS -> {
                HeadArray heads = registry.headArray();
                replies.reply(MessageType.HEADS_REPLY, WireStatus.OK, heads.encodedLength(), heads::encode);
            }
            case REPAIR_HINT -> {
                RepairHintReply reply = new RepairHintReply(store.repairHint(key(request)));
                replies.reply(MessageType.REPAIR_HINT_REPLY, WireStatus.OK, RepairHintReply.LENGTH, reply::encode);
            }
            case STATS -> {
                byte[] text = stats.get().getBytes(StandardCharsets.UTF_8);
                replies.reply(MessageType.STATS_REPLY, WireStatus.OK, text.length, (t, o) -> {
                    MemorySegment.copy(text, 0, t, ValueLayout.JAVA_BYTE, o, text.length);
                    return text.length;
                });
            }
            case CLEAN -> clean(CleanRequest.decode(s, body, request.bodyLength()).head(), replies);
            case BLOCK -> {
                BlockRequest block = BlockRequest.decode(s, body, request.bodyLength());
                if (block.returned() != BlockRequest.NONE) {
                    store.returnBlock(block.head(), block.returned());
                }
                PutReply reply = reply(store.grantBlock(block.head(), block.minLength()));
                replies.reply(MessageType.BLOCK_REPLY, WireStatus.OK, PutReply.LENGTH, reply::encode);
            }
            case BLOCK_RETURN -> {
                FlushRequest block = FlushRequest.decode(s, body, request.bodyLength());
                store.returnBlock(block.head(), block.chainOffset());
                replies.reply(MessageType.BLOCK_RETURN_REPLY, WireStatus.OK, 0, BodyEncoder.EMPTY);
            }
            default -> throw new RequestException((request.type().code() & 1) == 0 ? WireStatus.BAD_REQUEST
                    : WireStatus.UNSUPPORTED, "message type " + request.type() + " (" + request.type().code()
                    + ") is not a request of the erda protocol");
        }
    }

    private PutReply reserve(PutRequest put) {
        return reply(store.reserve(put.key(), put.valueLength(), put.delete()));
    }

    /** Where a reservation or block lies, as a client addresses it, and its lease. */
    private PutReply reply(Store.Reserved r) {
        MemoryRegion region = registry.region(r.head(), r.regionIndex());
        return new PutReply(r.head(), r.objectLength(), r.chainOffset(), region.address() + r.offsetInRegion(),
                region.rkey(), store.leaseNanos());
    }

    /**
     * [cluster]: reserve here, then the same object on the backup, as one task of the shard's ordered executor so both
     * servers see the key's PUTs in one order; the reply, carrying both reservations, goes out from that task (the
     * client has this one request outstanding, so the reply slot stays its own, as for CLEAN). The receive buffer is
     * reposted when this returns: the key is copied first. If the backup fails, the local reservation is left to its
     * lease (no client WRITEs it) and the client is told to try again.
     */
    private void putReplicated(PutRequest put, Replication.Backup backup, Replies replies) {
        MemorySegment key = MemorySegment.ofArray(put.key().toArray(ValueLayout.JAVA_BYTE));
        PutRequest own = new PutRequest(put.delete(), put.valueLength(), key);
        backup.ordered().execute(() -> {
            try {
                backup.prepare(own); // may refuse: then nothing is reserved on either server
                PutReply local = reserve(own);
                PutReply remote = backup.reserve(own); // the replica reservation: the cluster adds its assignment
                if (remote == null) { // a DELETE of a key the backup never had: nothing to delete there
                    replies.reply(MessageType.PUT_REPLY, WireStatus.OK, PutReply.LENGTH, local::encode);
                    return;
                }
                BackupReservation b = new BackupReservation(backup.server(), remote);
                replies.reply(MessageType.PUT_REPLY, WireStatus.OK, PutReply.LENGTH + BackupReservation.LENGTH,
                        (t, o) -> local.encode(t, o) + b.encode(t, o + PutReply.LENGTH));
            } catch (RequestException e) {
                replyError(replies, e.status(), e.getMessage());
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "replicated PUT failed", e);
                replyError(replies, WireStatus.INTERNAL, "replicated PUT failed: " + e);
            }
        });
    }

    private static void replyError(Replies replies, WireStatus status, String message) {
        try {
            replies.reply(MessageType.ERROR, status, ErrorReply.MAX_LENGTH, (t, o) -> ErrorReply.encode(t, o, message));
        } catch (RuntimeException gone) {
            LOG.log(Level.FINE, "error reply not sent", gone); // the client went away
        }
    }

    /**
     * A cleaning run takes as long as its head is large: it runs on a thread of its own and replies when done, so the
     * workers go on serving (the head's clients need them while it is two-sided). The client has this one request
     * outstanding, so the reply slot stays its own meanwhile. A platform thread, not a virtual one: the run's CPU is
     * charged to server_cpu_ns and cleaner_cpu_ns like a background run's, and the JVM measures no virtual thread's.
     */
    private void clean(int head, Replies replies) {
        int heads = store.directory().heads().size();
        if (head < 0 || head >= heads) {
            throw new RequestException(WireStatus.UNKNOWN_ADDRESS, "head " + head + " outside [0, " + heads + ")");
        }
        Thread.ofPlatform().daemon().name("erda-clean-request-" + head).start(() -> {
            byte[] text;
            WireStatus status = WireStatus.OK;
            try {
                text = CleanReply.text(cleaner.clean(head)).getBytes(StandardCharsets.UTF_8);
            } catch (InterruptedException e) {
                status = WireStatus.INTERNAL;
                text = ("cleaning of head " + head + " interrupted (server closing)").getBytes(StandardCharsets.UTF_8);
            } catch (RuntimeException e) {
                status = e instanceof IllegalStateException ? WireStatus.UNSUPPORTED : WireStatus.INTERNAL;
                text = ("cleaning of head " + head + " failed: " + e.getMessage()).getBytes(StandardCharsets.UTF_8);
            }
            byte[] body = text;
            try {
                if (status == WireStatus.OK) {
                    replies.reply(MessageType.CLEAN_REPLY, status, body.length, (t, o) -> {
                        MemorySegment.copy(body, 0, t, ValueLayout.JAVA_BYTE, o, body.length);
                        return body.length;
                    });
                } else {
                    replyError(replies, status, new String(body, StandardCharsets.UTF_8));
                }
            } catch (RuntimeException gone) {
                LOG.log(Level.FINE, "CLEAN reply for head " + head + " not sent", gone); // the client went away
            }
        });
    }

    /** GET_REPLY with the value, or NOT_FOUND and no body for null. */
    public static void replyValue(Replies replies, byte[] value) {
        replyValue(replies, value == null ? null : MemorySegment.ofArray(value));
    }

    /** A GET_REPLY carrying {@code value}, or NOT_FOUND for null. */
    public static void replyValue(Replies replies, MemorySegment value) {
        if (value == null) {
            replies.reply(MessageType.GET_REPLY, WireStatus.NOT_FOUND, 0, BodyEncoder.EMPTY);
        } else {
            GetReply reply = new GetReply(value);
            replies.reply(MessageType.GET_REPLY, WireStatus.OK, GetReply.VALUE_OFFSET + (int) value.byteSize(),
                    reply::encode);
        }
    }

    public static MemorySegment key(Request request) {
        requireKeyLength(request.message(), Request.BODY_OFFSET + KeyRequest.KEY_LENGTH_OFFSET, request.bodyLength(),
                KeyRequest.KEY_OFFSET);
        return KeyRequest.decode(request.message(), Request.BODY_OFFSET, request.bodyLength(),
                ObjectLayout.MAX_KEY_LENGTH).key();
    }

    /** KEY_TOO_LONG for a key length field over the limit, before the body decoder calls it malformed. */
    public static void requireKeyLength(MemorySegment s, long fieldOffset, int bodyLength, int fixedPart) {
        if (bodyLength >= fixedPart) {
            long keyLength = Integer.toUnsignedLong(s.get(INT, fieldOffset));
            if (keyLength > ObjectLayout.MAX_KEY_LENGTH) {
                throw new RequestException(WireStatus.KEY_TOO_LONG, "key length " + keyLength + " exceeds "
                        + ObjectLayout.MAX_KEY_LENGTH);
            }
        }
    }

    public StoreInfo storeInfo() {
        TableGeometry table = store.directory().table().geometry();
        var log = store.directory().geometry().log();
        return new StoreInfo(persistence, registry.configuration(),
                store.oneSided() ? PutMode.ONE_SIDED : PutMode.RESERVE, ConnectData.PROTOCOL_ERDA,
                store.directory().heads().size(),
                table.neighbourhood(), table.stripeSize(), table.bucketCount(), log.regionSize(), log.segmentSize(),
                store.leaseNanos(), ObjectLayout.MAX_KEY_LENGTH, store.maxValueLength(), maxMessageLength,
                registry.tableDescriptor(), registry.stripesDescriptor(), registry.headArray());
    }
}
