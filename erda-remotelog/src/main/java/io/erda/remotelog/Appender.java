package io.erda.remotelog;

import io.erda.fabric.Completion;
import io.erda.fabric.CompletionQueue;
import io.erda.fabric.Endpoint;
import io.erda.fabric.FabricCapabilities;
import io.erda.fabric.FabricException;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.Opcode;
import io.erda.fabric.RecvRequest;
import io.erda.fabric.RemoteRegion;
import io.erda.fabric.WorkRequest;
import io.erda.remotelog.ResponderMemory.Area;
import io.erda.remotelog.ResponderMemory.Kind;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The REMOTELOG requester: appends record {@code position} with a {@link Method}, its operations over one endpoint
 * exactly as the method's row lists them (pipelined where the row does not wait for a completion, every request
 * signalled), and tells the attached {@link ResponderMemory} of each request when it posts it and when it takes its
 * completion: the wire the model hears (its class comment says why hearing late is safe).
 *
 * <p>FLUSH is the fabric's: the device's own where {@link FabricCapabilities#nativeFlush}, otherwise the provider's
 * READ (the paper's emulation, §3.4). Write_atomic needs {@link FabricCapabilities#atomicWrite}; without it {@link
 * Method#WRITE_FLUSH_ATOMIC_FLUSH} runs as {@link Method#WRITE_FLUSH_WAIT_TWICE}, the waiting the paper prescribes
 * when no non-posted write is available ({@link #substitute}).
 */
public final class Appender implements AutoCloseable {
    private static final int ACK_BUFFERS = 8;
    private static final Duration WAIT = Duration.ofSeconds(30);

    private final Endpoint endpoint;
    private final LogLayout layout;
    private final RemoteRegion log;
    private final FabricCapabilities capabilities;
    private final MemoryRegion local;
    private final long recordAt;
    private final long tailAt;
    private final long messageAt;
    private final long acksAt;
    private final int slotSize;
    private volatile ResponderMemory memory;
    private long wrIds;
    private long receiveOrdinal;
    private long ackIds;

    Appender(Endpoint endpoint, LogLayout layout, RemoteRegion log, Arena arena) {
        this.endpoint = endpoint;
        this.layout = layout;
        this.log = log;
        this.capabilities = endpoint.fabric().capabilities();
        this.slotSize = Message.slotSize(layout.recordSize());
        this.recordAt = 0;
        this.tailAt = layout.recordSize();
        this.messageAt = tailAt + 64;
        this.acksAt = messageAt + slotSize;
        this.local = endpoint.fabric().registerLocal(arena.allocate(acksAt + 8L * ACK_BUFFERS, 64));
    }

    /** From now on tell {@code m} (null: nobody) what goes over the wire. */
    public void attach(ResponderMemory m) {
        memory = m;
    }

    /** What {@code method} runs as on this fabric: itself, or the named emulation where the device lacks an opcode. */
    public Method substitute(Method method) {
        return method == Method.WRITE_FLUSH_ATOMIC_FLUSH && !capabilities.atomicWrite()
                ? Method.WRITE_FLUSH_WAIT_TWICE : method;
    }

    /**
     * Appends the record of {@code sequence} at {@code position} (compound methods: then the tail pointer {@code
     * position + 1}) and returns once the method says it is durable: true if the attached memory still had power
     * then, so the append counts as acknowledged.
     */
    public boolean append(Method method, long position, long sequence) {
        MemorySegment buf = local.segment();
        layout.encode(buf, recordAt, sequence, position);
        buf.set(LogLayout.longLayout(), tailAt, position + 1);
        long rec = layout.recordOffset(position);
        switch (substitute(method)) {
            case WRITE_SEND_FLUSH -> {
                expectAck();
                write(rec);
                send(Message.FLUSH_RANGE, 0, rec, layout.recordSize());
                complete(2);
                awaitAck();
            }
            case WRITEIMM_SERVER_FLUSH -> {
                expectAck();
                writeImm(rec, Message.imm(Message.IMM_FLUSH_RECORD, position));
                complete(1);
                awaitAck();
            }
            case SEND_COPY_FLUSH -> sendApplyAcked(Message.FLAG_FLUSH | Message.FLAG_ACK, position);
            case WRITE_FLUSH -> {
                write(rec);
                flush(rec, layout.recordSize());
                complete(2);
            }
            case WRITEIMM_FLUSH -> {
                writeImm(rec, Message.imm(Message.IMM_NOTIFY, position));
                flush(rec, layout.recordSize());
                complete(2);
            }
            case SEND_COPY -> sendApplyAcked(Message.FLAG_ACK, position);
            case SEND_FLUSH -> {
                send(Message.APPLY, Message.FLAG_FLUSH, position, layout.recordSize());
                flush(rec, layout.recordSize());
                complete(2);
            }
            case SEND -> {
                send(Message.APPLY, Message.FLAG_FLUSH, position, layout.recordSize());
                complete(1);
            }
            case WRITE -> {
                write(rec);
                complete(1);
            }
            case WRITEIMM -> {
                writeImm(rec, Message.imm(Message.IMM_NOTIFY, position));
                complete(1);
            }
            case WRITE_SEND_FLUSH_TWICE -> {
                expectAck();
                write(rec);
                send(Message.FLUSH_RANGE, 0, rec, layout.recordSize());
                complete(2);
                awaitAck();
                expectAck();
                writeTail();
                send(Message.FLUSH_RANGE, 0, LogLayout.TAIL_OFFSET, LogLayout.TAIL_LENGTH);
                complete(2);
                awaitAck();
            }
            case WRITEIMM_SERVER_FLUSH_TWICE -> {
                expectAck();
                writeImm(rec, Message.imm(Message.IMM_FLUSH_RECORD, position));
                complete(1);
                awaitAck();
                expectAck();
                writeImmTail(Message.imm(Message.IMM_FLUSH_TAIL, position));
                complete(1);
                awaitAck();
            }
            case SEND_AB_COPY_FLUSH -> sendApplyAcked(Message.FLAG_FLUSH | Message.FLAG_ACK | Message.FLAG_TAIL,
                    position);
            case WRITE_WRITE_FLUSH -> {
                write(rec);
                writeTail();
                flush(rec, layout.recordSize());
                complete(3);
            }
            case WRITEIMM_WRITEIMM_FLUSH -> {
                writeImm(rec, Message.imm(Message.IMM_NOTIFY, position));
                writeImmTail(Message.imm(Message.IMM_NOTIFY, position));
                flush(rec, layout.recordSize());
                complete(3);
            }
            case SEND_AB_COPY -> sendApplyAcked(Message.FLAG_ACK | Message.FLAG_TAIL, position);
            case SEND_AB_FLUSH -> {
                send(Message.APPLY, Message.FLAG_FLUSH | Message.FLAG_TAIL, position, layout.recordSize());
                flush(rec, layout.recordSize());
                complete(2);
            }
            case SEND_AB -> {
                send(Message.APPLY, Message.FLAG_FLUSH | Message.FLAG_TAIL, position, layout.recordSize());
                complete(1);
            }
            case WRITE_WRITE -> {
                write(rec);
                writeTail();
                complete(2);
            }
            case WRITEIMM_WRITEIMM -> {
                writeImm(rec, Message.imm(Message.IMM_NOTIFY, position));
                writeImmTail(Message.imm(Message.IMM_NOTIFY, position));
                complete(2);
            }
            case WRITE_FLUSH_ATOMIC_FLUSH -> {
                write(rec);
                flush(rec, layout.recordSize());
                atomicWriteTail(position + 1);
                flush(LogLayout.TAIL_OFFSET, LogLayout.TAIL_LENGTH);
                complete(4);
            }
            case WRITEIMM_FLUSH_WAIT_TWICE -> {
                writeImm(rec, Message.imm(Message.IMM_NOTIFY, position));
                flush(rec, layout.recordSize());
                complete(2);
                writeImmTail(Message.imm(Message.IMM_NOTIFY, position));
                flush(LogLayout.TAIL_OFFSET, LogLayout.TAIL_LENGTH);
                complete(2);
            }
            case WRITE_FLUSH_WAIT_TWICE -> {
                write(rec);
                flush(rec, layout.recordSize());
                complete(2);
                writeTail();
                flush(LogLayout.TAIL_OFFSET, LogLayout.TAIL_LENGTH);
                complete(2);
            }
            case WRITE_FLUSH_WRITE_FLUSH -> {
                write(rec);
                flush(rec, layout.recordSize());
                writeTail();
                flush(LogLayout.TAIL_OFFSET, LogLayout.TAIL_LENGTH);
                complete(4);
            }
        }
        ResponderMemory m = memory;
        return m == null || m.acknowledge();
    }

    /** A SYNC message and its acknowledgement: once it returns, the responder has handled every earlier message. */
    public void sync() {
        expectAck();
        send(Message.SYNC, 0, 0, 0);
        complete(1);
        awaitAck();
    }

    private void sendApplyAcked(int flags, long position) {
        expectAck();
        send(Message.APPLY, flags, position, layout.recordSize());
        complete(1);
        awaitAck();
    }

    private void write(long recordOffset) {
        long id = tell(Kind.POSTED, Area.LOG, recordOffset, recordAt, layout.recordSize(), 0);
        endpoint.post(WorkRequest.write(id, local, recordAt, layout.recordSize(), log.address() + recordOffset,
                log.rkey()));
    }

    private void writeTail() {
        long id = tell(Kind.POSTED, Area.LOG, LogLayout.TAIL_OFFSET, tailAt, LogLayout.TAIL_LENGTH, 0);
        endpoint.post(WorkRequest.write(id, local, tailAt, LogLayout.TAIL_LENGTH, log.address(), log.rkey()));
    }

    private void writeImm(long recordOffset, int imm) {
        long id = tell(Kind.POSTED, Area.LOG, recordOffset, recordAt, layout.recordSize(), ++receiveOrdinal);
        endpoint.post(WorkRequest.writeWithImm(id, local, recordAt, layout.recordSize(), log.address() + recordOffset,
                log.rkey(), imm));
    }

    private void writeImmTail(int imm) {
        long id = tell(Kind.POSTED, Area.LOG, LogLayout.TAIL_OFFSET, tailAt, LogLayout.TAIL_LENGTH, ++receiveOrdinal);
        endpoint.post(WorkRequest.writeWithImm(id, local, tailAt, LogLayout.TAIL_LENGTH, log.address(), log.rkey(),
                imm));
    }

    private void atomicWriteTail(long tail) {
        long id = tell(Kind.ATOMIC_WRITE, Area.LOG, LogLayout.TAIL_OFFSET, tailAt, LogLayout.TAIL_LENGTH, 0);
        endpoint.post(WorkRequest.atomicWrite(id, log.address() + LogLayout.TAIL_OFFSET, log.rkey(), tail));
    }

    private void flush(long offset, int length) {
        long id = tell(Kind.FLUSH, Area.LOG, offset, 0, 0, 0);
        endpoint.post(WorkRequest.flush(id, log.address() + offset, length, log.rkey()));
    }

    /** A SEND of one message; {@code where} and {@code length} as {@link Message} says for {@code kind}. */
    private void send(int kind, int flags, long where, int length) {
        MemorySegment buf = local.segment();
        MemorySegment record = kind == Message.APPLY ? buf.asSlice(recordAt, layout.recordSize()) : null;
        int bytes = Message.encode(buf, messageAt, kind, flags, where, length, record,
                buf.get(LogLayout.longLayout(), tailAt));
        long slot = receiveOrdinal % LogServer.RECEIVE_BUFFERS;
        long id = tell(Kind.POSTED, Area.RECEIVE_BUFFERS, slot * slotSize, messageAt, bytes, ++receiveOrdinal);
        endpoint.post(WorkRequest.send(id, local, messageAt, bytes));
    }

    /** Tells the memory of a request about to be posted (the bytes it carries); returns its work request id. */
    private long tell(Kind kind, Area area, long offset, long localOffset, int length, long ordinal) {
        ResponderMemory m = memory;
        if (m == null) {
            return ++wrIds;
        }
        byte[] bytes = local.segment().asSlice(localOffset, length).toArray(ValueLayout.JAVA_BYTE);
        return m.posted(kind, area, offset, bytes, ordinal);
    }

    /** Takes {@code n} send completions, in order, telling the memory of each. */
    private void complete(int n) {
        for (int i = 0; i < n; i++) {
            Completion c = take(endpoint.sendQueue());
            ResponderMemory m = memory;
            if (m != null) {
                m.completed(c.wrId());
            }
        }
    }

    private void expectAck() {
        long id = ackIds++;
        endpoint.postRecv(new RecvRequest(id, local, acksAt + 8 * (id % ACK_BUFFERS), 8));
    }

    private void awaitAck() {
        Completion c = take(endpoint.recvQueue());
        if (c.opcode() != Opcode.RECV) {
            throw new FabricException("expected an acknowledgement, got " + c);
        }
    }

    private Completion take(CompletionQueue queue) {
        try {
            Completion c = queue.take(WAIT.toNanos(), TimeUnit.NANOSECONDS);
            if (c == null) {
                throw new FabricException("no completion within " + WAIT + " from " + endpoint.peer());
            }
            if (!c.isSuccess()) {
                throw new FabricException("request failed: " + c);
            }
            return c;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FabricException("interrupted while waiting for a completion", e);
        }
    }

    @Override
    public void close() {
        local.close();
    }
}
