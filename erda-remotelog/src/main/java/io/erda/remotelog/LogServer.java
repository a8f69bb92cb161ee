package io.erda.remotelog;

import io.erda.fabric.Completion;
import io.erda.fabric.Endpoint;
import io.erda.fabric.Fabric;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.Opcode;
import io.erda.fabric.RecvRequest;
import io.erda.fabric.SyncEndpoint;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The REMOTELOG responder: owns the log (registered for remote writes) and the receive buffers, and on its one thread
 * does what a method asks of the responder's CPU (Tables 2 and 3, the {@code Rsp} steps): write back a range and
 * acknowledge, copy a record (and the tail pointer) from a message into the log, with or without writing the copies
 * back, or nothing at all but recycle the receive buffer. It tells the attached {@link ResponderMemory} of every
 * receive completion, store and write-back, so that a power failure keeps what these made durable.
 *
 * <p>Messages that need no answer (a Send the requester does not wait on, a WriteImm that only notifies) are handled
 * lazily, in batches, as the paper's responder applies its log "asynchronously" (§4.1) and recovery applies what PM
 * receive buffers still hold; a power failure can then find a message received but not yet applied.
 *
 * <p>A write-back is {@code MemorySegment.force} of the range (msync of the mapped file; a cache-line write-back on a
 * DAX mapping), so its cost is real where the log is; on a device-DAX log, which FileChannel did not map, a fence.
 * Receive buffers are reposted in the order they were consumed, so the k-th message lands in buffer k mod
 * {@link #RECEIVE_BUFFERS}, as the requester predicts.
 */
public final class LogServer implements AutoCloseable {
    /** Receive buffers posted at once: what a requester that sends without waiting for an answer may run ahead. */
    public static final int RECEIVE_BUFFERS = 128;
    /** Messages that need no answer handled together (see {@link #handle(Completion)}). */
    public static final int LAZY_BATCH = 16;
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final Endpoint endpoint;
    private final LogLayout layout;
    private final MemoryRegion log;
    private final MemoryRegion receiveBuffers;
    private final int slotSize;
    private final MemoryRegion ackBuffer;
    private final SyncEndpoint replies;
    private final AtomicReference<ResponderMemory> memory = new AtomicReference<>();
    private final Thread thread;
    private volatile boolean stop;
    private volatile Throwable failure;
    private long receiveOrdinal;
    private final List<Received> deferred = new ArrayList<>();

    /**
     * @param endpoint        the accepted endpoint, whose receives {@link #postReceives} posted before the accept
     * @param log             the registered log, {@code layout.byteSize()} long
     */
    LogServer(Endpoint endpoint, LogLayout layout, MemoryRegion log, MemoryRegion receiveBuffers, Arena arena) {
        this.endpoint = endpoint;
        this.layout = layout;
        this.log = log;
        this.receiveBuffers = receiveBuffers;
        this.slotSize = Message.slotSize(layout.recordSize());
        this.ackBuffer = endpoint.fabric().registerLocal(arena.allocate(8, 8));
        this.replies = new SyncEndpoint(endpoint);
        this.thread = Thread.ofPlatform().name("remotelog-server").daemon().start(this::serve);
    }

    /** Receive buffers for {@link #RECEIVE_BUFFERS} messages of records of {@code recordSize} bytes. */
    static MemoryRegion receiveBuffers(Fabric fabric, int recordSize, Arena arena) {
        return fabric.registerLocal(arena.allocate((long) Message.slotSize(recordSize) * RECEIVE_BUFFERS, 64));
    }

    /** Posts every receive buffer on {@code endpoint} in slot order: before it is accepted. */
    static void postReceives(Endpoint endpoint, MemoryRegion receiveBuffers, int recordSize) {
        int slot = Message.slotSize(recordSize);
        for (int i = 0; i < RECEIVE_BUFFERS; i++) {
            endpoint.postRecv(new RecvRequest(i, receiveBuffers, (long) i * slot, slot));
        }
    }

    /** From now on tell {@code m} (null: nobody) what the responder's CPU does. */
    public void attach(ResponderMemory m) {
        memory.set(m);
    }

    /** The live log (what the fabric and this server wrote). */
    public MemorySegment log() {
        return log.segment();
    }

    /** CPU time of the server's thread so far. */
    public long cpuNanos() {
        return THREADS.getThreadCpuTime(thread.threadId());
    }

    /** Replaces the live log by {@code image} (after recovery): only while no request is in flight. */
    public void restore(byte[] image) {
        MemorySegment.copy(MemorySegment.ofArray(image), 0, log.segment(), 0, image.length);
    }

    /** The failure that stopped the server thread, or null. */
    public Throwable failure() {
        return failure;
    }

    private void serve() {
        try {
            while (!stop) {
                Completion c = endpoint.recvQueue().take(50, TimeUnit.MILLISECONDS);
                if (c == null) {
                    continue;
                }
                if (!c.isSuccess()) {
                    if (!stop && !c.peerClosed()) {
                        failure = new IllegalStateException("receive failed: " + c);
                    }
                    return;
                }
                handle(c);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException | Error e) {
            failure = e;
        }
    }

    /**
     * A message that needs no answer waits, as on a responder whose CPU is busy elsewhere: the batch is handled when
     * it is {@link #LAZY_BATCH} long or a message that needs an answer arrives (first, in order). Its buffer is
     * reposted only once it was handled, so no message is overwritten before its record is in the log.
     */
    private void handle(Completion c) {
        long ordinal = ++receiveOrdinal;
        long expected = (ordinal - 1) % RECEIVE_BUFFERS;
        if (c.wrId() != expected) {
            throw new IllegalStateException("message " + ordinal + " landed in receive buffer " + c.wrId()
                    + ", not " + expected + ": receives are not consumed in the order they were posted");
        }
        if (needsAnswer(c)) {
            handleDeferred();
            handle(c, ordinal);
        } else {
            deferred.add(new Received(c, ordinal));
            if (deferred.size() >= LAZY_BATCH) {
                handleDeferred();
            }
        }
    }

    private record Received(Completion completion, long ordinal) {
    }

    private void handleDeferred() {
        for (Received r : deferred) {
            handle(r.completion(), r.ordinal());
        }
        deferred.clear();
    }

    private boolean needsAnswer(Completion c) {
        if (c.opcode() == Opcode.RECV_WITH_IMM) {
            return Message.immKind(c.immData()) != Message.IMM_NOTIFY;
        }
        MemorySegment buffers = receiveBuffers.segment();
        long at = c.wrId() * slotSize;
        return Message.kind(buffers, at) != Message.APPLY || (Message.flags(buffers, at) & Message.FLAG_ACK) != 0;
    }

    private void handle(Completion c, long ordinal) {
        ResponderMemory m = memory.get();
        if (m != null) {
            m.delivered(ordinal);
        }
        long at = c.wrId() * slotSize;
        if (c.opcode() == Opcode.RECV_WITH_IMM) {
            int kind = Message.immKind(c.immData());
            if (kind == Message.IMM_FLUSH_RECORD) {
                writeBack(m, layout.recordOffset(Message.immPosition(c.immData())), layout.recordSize());
                acknowledge();
            } else if (kind == Message.IMM_FLUSH_TAIL) {
                writeBack(m, LogLayout.TAIL_OFFSET, LogLayout.TAIL_LENGTH);
                acknowledge();
            }
        } else {
            MemorySegment buffers = receiveBuffers.segment();
            if (!Message.intact(buffers, at, slotSize)) {
                throw new IllegalStateException("message " + ordinal + " in receive buffer " + c.wrId()
                        + " is not intact (kind " + Message.kind(buffers, at) + ")");
            }
            switch (Message.kind(buffers, at)) {
                case Message.FLUSH_RANGE -> {
                    writeBack(m, Message.where(buffers, at), Message.length(buffers, at));
                    acknowledge();
                }
                case Message.APPLY -> apply(m, buffers, at);
                default -> acknowledge(); // SYNC
            }
        }
        endpoint.postRecv(new RecvRequest(c.wrId(), receiveBuffers, at, slotSize));
    }

    /** Copies the record, then the tail pointer, into the log; paper §3.3: a written back before b where asked. */
    private void apply(ResponderMemory m, MemorySegment buffers, long at) {
        int flags = Message.flags(buffers, at);
        long position = Message.where(buffers, at);
        long recordAt = layout.recordOffset(position);
        int length = layout.recordSize();
        MemorySegment.copy(buffers, at + Message.HEADER_LENGTH, log.segment(), recordAt, length);
        if (m != null) {
            m.stored(recordAt, log.segment().asSlice(recordAt, length).toArray(ValueLayout.JAVA_BYTE));
        }
        if ((flags & Message.FLAG_FLUSH) != 0) {
            writeBack(m, recordAt, length);
        }
        if ((flags & Message.FLAG_TAIL) != 0) {
            long tail = Message.tail(buffers, at);
            layout.setTail(log.segment(), tail);
            if (m != null) {
                m.stored(LogLayout.TAIL_OFFSET, log.segment().asSlice(LogLayout.TAIL_OFFSET, LogLayout.TAIL_LENGTH)
                        .toArray(ValueLayout.JAVA_BYTE));
            }
            if ((flags & Message.FLAG_FLUSH) != 0) {
                writeBack(m, LogLayout.TAIL_OFFSET, LogLayout.TAIL_LENGTH);
            }
        }
        if ((flags & Message.FLAG_ACK) != 0) {
            acknowledge();
        }
    }

    private void writeBack(ResponderMemory m, long offset, long length) {
        if (log.segment().isMapped()) {
            log.segment().asSlice(offset, length).force();
        } else {
            VarHandle.fullFence(); // a device-DAX log: no write-back the JDK offers reaches it (RemoteLog#mapDevice)
        }
        if (m != null) {
            m.flushed(offset, length);
        }
    }

    private void acknowledge() {
        replies.send(ackBuffer, 0, 8);
    }

    @Override
    public void close() {
        stop = true;
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        replies.close();
    }
}
