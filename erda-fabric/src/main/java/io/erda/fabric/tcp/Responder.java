package io.erda.fabric.tcp;

import io.erda.fabric.Completion;
import io.erda.fabric.DurableMirror;
import io.erda.fabric.Opcode;
import io.erda.fabric.RecvRequest;
import io.erda.fabric.Status;
import io.erda.fabric.UnfencedWrites;
import io.erda.fabric.tcp.wire.FrameChannel;
import io.erda.fabric.tcp.wire.FrameHeader;
import io.erda.fabric.tcp.wire.ProtocolViolation;
import io.erda.fabric.tcp.wire.WireOpcode;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;

/**
 * The NIC engine of one connection on the target: reads the peer's requests in order, checks each one-sided access
 * against the region table before touching memory, executes it and answers. Application threads never run this;
 * they see only SEND and WRITE_WITH_IMM, as receive completions (which this thread may hand to the receive queue's
 * idle consumer itself: {@code TcpEndpoint.completeRecv}). One thread per connection keeps RC ordering: a
 * READ, atomic or FLUSH is answered only after every earlier WRITE of the connection was placed.
 */
final class Responder implements Runnable {
    private static final System.Logger LOG = TcpFabric.LOG;
    /** Aligned native-order access, so atomics here are atomic against the target's own CPU atomics too. */
    private static final VarHandle WORD = ValueLayout.JAVA_LONG.varHandle();
    private static final int CACHE_LINE = 64;

    private final TcpEndpoint endpoint;
    private final TcpFabric fabric;
    private final FrameChannel channel;
    private final long rnrNanos;
    private final FrameHeader in = new FrameHeader();
    private final FrameHeader out = new FrameHeader();
    /** This connection's writes a power failure could still take (power-failure emulation only). */
    private final UnfencedWrites unfenced = new UnfencedWrites();

    /** @param rnrNanos the initiator's RNR window, from the connect handshake */
    Responder(TcpEndpoint endpoint, TcpFabric fabric, FrameChannel channel, long rnrNanos) {
        this.endpoint = endpoint;
        this.fabric = fabric;
        this.channel = channel;
        this.rnrNanos = rnrNanos;
    }

    @Override
    public void run() {
        try {
            while (true) {
                channel.readHeader(in);
                byte wire = in.opcode();
                if (WireOpcode.isResponse(wire) || WireOpcode.request(wire) >= WireOpcode.CONNECT) {
                    throw new ProtocolViolation("expected a request, got " + in);
                }
                if (!endpoint.isConnected()) {
                    channel.skip(in.payloadLength()); // failed: execute nothing more, wait for the peer to close
                    continue;
                }
                execute(wire);
            }
        } catch (EOFException e) {
            // The peer closes both sockets together; the completer sees the end of the other one only after the
            // responses still in it, so it is the one to fail the endpoint (failing here would race an error
            // response in flight and report RETRY_EXCEEDED instead of the real status).
            return;
        } catch (ProtocolViolation e) {
            LOG.log(System.Logger.Level.WARNING, "closing connection from " + endpoint.peer() + ": protocol violation: "
                    + e.getMessage());
            endpoint.fail(Status.RETRY_EXCEEDED, "protocol violation by " + endpoint.peer() + ": " + e.getMessage(), true);
        } catch (InterruptedException e) {
            endpoint.fail(Status.WR_FLUSH_ERROR, "endpoint closed", true);
        } catch (IOException | RuntimeException e) {
            endpoint.fail(Status.RETRY_EXCEEDED, "connection from " + endpoint.peer() + " lost: " + e, true);
        } finally {
            channel.close();
        }
    }

    private void execute(byte wire) throws IOException, InterruptedException {
        long seq = in.sequence();
        long address = in.remoteAddress();
        int rkey = in.rkey();
        switch (wire) {
            case WireOpcode.READ -> {
                int length = in.operandLength();
                TcpRegion region = checked(Opcode.READ, address, length, rkey, wire, seq, 0);
                if (region == null) {
                    return;
                }
                unfenced.fenced(); // a READ completes after earlier WRITEs went through (the Flush it stands in for)
                ByteBuffer data = length == 0 ? null : slice(region, address, length).asByteBuffer();
                fabric.oneSidedExecuted.increment();
                fabric.bytesReadByPeers.add(length);
                endpoint.writeService(reply(wire, seq).payloadLength(length).operandLength(length), data);
            }
            case WireOpcode.WRITE, WireOpcode.WRITE_WITH_IMM -> {
                int length = in.payloadLength();
                boolean withImm = wire == WireOpcode.WRITE_WITH_IMM;
                TcpRegion region = checked(withImm ? Opcode.WRITE_WITH_IMM : Opcode.WRITE, address, length, rkey, wire, seq, length);
                if (region == null) {
                    return;
                }
                RecvRequest recv = null;
                if (withImm && (recv = endpoint.takeRecv(rnrNanos)) == null) {
                    refuse(wire, seq, length, Status.RNR_RETRY_EXCEEDED, "no receive posted within " + rnrNanos + " ns");
                    return;
                }
                if (length > 0) {
                    channel.readFully(slice(region, address, length).asByteBuffer());
                }
                mirror(region, address, length);
                placed(region, address, length);
                if (recv != null) {
                    unfenced.placementShown(); // its receive completion follows its placement, and earlier ones'

                    endpoint.completeRecv(new Completion(recv.wrId(), Opcode.RECV_WITH_IMM, Status.SUCCESS, length, in.imm(),
                            true, endpoint, null));
                }
                endpoint.writeService(reply(wire, seq).operandLength(length), null);
            }
            case WireOpcode.SEND -> {
                unfenced.placementShown(); // the server's CPU sees the message after earlier WRITEs were placed
                receiveSend(wire, seq);
            }
            case WireOpcode.CAS, WireOpcode.FETCH_ADD -> {
                Opcode op = wire == WireOpcode.CAS ? Opcode.CAS : Opcode.FETCH_ADD;
                TcpRegion region = checked(op, address, 8, rkey, wire, seq, 0);
                if (region == null) {
                    return;
                }
                unfenced.placementShown(); // non-posted: executed after earlier WRITEs were placed
                MemorySegment segment = region.segment();
                long offset = address - region.address();
                long old = op == Opcode.CAS
                        ? (long) WORD.compareAndExchange(segment, offset, in.compareAdd(), in.swap())
                        : (long) WORD.getAndAdd(segment, offset, in.compareAdd());
                if (op == Opcode.FETCH_ADD || old == in.compareAdd()) {
                    mirror(region, address, 8);
                }
                placed(region, address, 8);
                endpoint.writeService(reply(wire, seq).compareAdd(old).operandLength(8), null);
            }
            case WireOpcode.ATOMIC_WRITE -> {
                TcpRegion region = checked(Opcode.ATOMIC_WRITE, address, 8, rkey, wire, seq, 0);
                if (region == null) {
                    return;
                }
                unfenced.placementShown();
                WORD.setVolatile(region.segment(), address - region.address(), in.swap());
                mirror(region, address, 8);
                placed(region, address, 8);
                endpoint.writeService(reply(wire, seq).operandLength(8), null);
            }
            case WireOpcode.FLUSH -> {
                int length = in.operandLength();
                TcpRegion region = checked(Opcode.FLUSH, address, length, rkey, wire, seq, 0);
                if (region == null) {
                    return;
                }
                unfenced.fenced();
                MemorySegment range = slice(region, address, length);
                // Persistent placement: earlier WRITEs of this connection are already in the mapping (one
                // thread, in order); force writes them back to the file (msync; a cache flush under MAP_SYNC).
                if (region.options().backing() != null && range.isMapped() && length > 0) {
                    range.force();
                }
                fabric.oneSidedExecuted.increment();
                endpoint.writeService(reply(wire, seq), null);
            }
            default -> throw new ProtocolViolation("unknown request " + in);
        }
    }

    /** The region if the access passes the rkey, range, flag and alignment checks; else refused and null. */
    private TcpRegion checked(Opcode op, long address, long length, int rkey, byte wire, long seq, int payloadToSkip)
            throws IOException {
        TcpRegion region = fabric.regionTable().admit(op, address, length, rkey);
        if (region != null) {
            return region;
        }
        var check = fabric.regionTable().check(op, address, length, rkey); // why (or registered a moment ago)
        if (check.ok()) {
            return check.region();
        }
        refuse(wire, seq, payloadToSkip, check.status(), check.detail());
        return null;
    }

    private void receiveSend(byte wire, long seq) throws IOException, InterruptedException {
        int length = in.payloadLength();
        RecvRequest recv = endpoint.takeRecv(rnrNanos);
        if (recv == null) {
            refuse(wire, seq, length, Status.RNR_RETRY_EXCEEDED, "no receive posted within " + rnrNanos + " ns");
            return;
        }
        TcpEndpoint.LocalProblem problem = endpoint.checkLocalBuffer(recv.local(), recv.localOffset(), recv.length(), true);
        if (problem == null && length > recv.length()) {
            problem = new TcpEndpoint.LocalProblem(Status.LOCAL_LENGTH_ERROR, "message of " + length
                    + " bytes exceeds the posted receive of " + recv.length());
        }
        if (problem != null) {
            endpoint.completeRecv(Completion.error(recv.wrId(), Opcode.RECV, problem.status(), endpoint, problem.detail()));
            refuse(wire, seq, length, Status.REMOTE_INVALID_REQUEST, problem.detail());
            return;
        }
        if (length > 0) {
            channel.readFully(endpoint.recvBuffer(recv, length).asByteBuffer());
        }
        endpoint.completeRecv(Completion.success(recv.wrId(), Opcode.RECV, length, endpoint));
        endpoint.writeService(reply(wire, seq).operandLength(length), null);
    }

    private static MemorySegment slice(TcpRegion region, long address, long length) {
        return region.segment().asSlice(address - region.address(), length);
    }

    /**
     * Hands what a one-sided write just placed to the registration's durable mirror, if it has one: copied now or
     * once a later request of this connection makes it durable ({@link UnfencedWrites}).
     */
    private void mirror(TcpRegion region, long address, long length) {
        DurableMirror mirror = region.options().durableMirror();
        if (mirror != null) {
            unfenced.placed(region.segment(), mirror, address - region.address(), length);
        }
    }

    /** Accounts a one-sided write and applies the PM write-latency model before the reply leaves. */
    private void placed(TcpRegion region, long address, long length) {
        fabric.oneSidedExecuted.increment();
        if (length == 0) {
            return;
        }
        region.countRemoteWrite(length);
        fabric.bytesWrittenByPeers.add(length);
        long delay = region.options().writeDelayNanosPerCacheLine();
        if (delay > 0) {
            long lines = (address + length - 1) / CACHE_LINE - address / CACHE_LINE + 1;
            long end = System.nanoTime() + lines * delay;
            while (System.nanoTime() - end < 0) {
                Thread.onSpinWait();
            }
        }
    }

    private FrameHeader reply(byte wire, long seq) {
        return out.reset((byte) (wire | WireOpcode.RESPONSE)).sequence(seq);
    }

    /**
     * Answers with an error without touching memory (the payload is read and dropped), then fails the endpoint:
     * an error completion takes both sides of an RC connection to ERROR.
     */
    private void refuse(byte wire, long seq, int payloadToSkip, Status status, String detail) throws IOException {
        channel.skip(payloadToSkip);
        ByteBuffer text = FrameChannel.text(detail);
        endpoint.writeService(reply(wire, seq).status(status.ordinal()).payloadLength(text.remaining()), text);
        endpoint.fail(Status.WR_FLUSH_ERROR, "the peer's " + WireOpcode.name(wire) + " failed: " + status + " " + detail, false);
    }
}
