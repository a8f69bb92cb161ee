package io.erda.fabric.tcp.wire;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.erda.fabric.Fabric;
import io.erda.protocol.testing.Fuzzing;
import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ReadableByteChannel;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * docs/ARCHITECTURE.md, [bad-input]: a tcp provider's socket as its readers see it (the listener's handshake, the
 * responder, the completer): a stream of frames, each a header {@link FrameHeader#readFrom} checks and then the
 * payload the header announces. A bad header throws {@link ProtocolViolation} naming the value and the limit before
 * a payload byte is read; a header that passes announces no more than its opcode's limit.
 */
class FrameFuzzTest {
    @FuzzTest
    void frames(byte[] data) throws IOException {
        ReadableByteChannel in = Channels.newChannel(new ByteArrayInputStream(data));
        FrameHeader h = new FrameHeader();
        try {
            while (true) {
                h.readFrom(in);
                byte op = WireOpcode.request(h.opcode());
                int payload = h.payloadLength();
                assertThat(payload).isBetween(0, limit(h.opcode()));
                assertThat(h.operandLength()).isNotNegative();
                if (op == WireOpcode.READ && !WireOpcode.isResponse(h.opcode())) {
                    assertThat(h.operandLength()).isLessThanOrEqualTo(FrameHeader.MAX_PAYLOAD);
                }
                assertThat(h.toString()).startsWith("Frame[" + WireOpcode.name(h.opcode()));
                ByteBuffer body = ByteBuffer.allocate(payload); // what the readers read it into, at most the limit
                while (body.hasRemaining()) {
                    if (in.read(body) < 0) {
                        return; // the stream ends inside a payload: the readers' readFully throws ProtocolViolation
                    }
                }
            }
        } catch (EOFException end) {
            // a clean end of stream between frames
        } catch (ProtocolViolation e) {
            Fuzzing.rejected(new RuntimeException(e.getMessage(), e));
        }
    }

    private static int limit(byte wire) {
        byte op = WireOpcode.request(wire);
        if (WireOpcode.isResponse(wire)) {
            return op == WireOpcode.READ ? FrameHeader.MAX_PAYLOAD : FrameHeader.MAX_TEXT;
        }
        return switch (op) {
            case WireOpcode.WRITE, WireOpcode.WRITE_WITH_IMM, WireOpcode.SEND -> FrameHeader.MAX_PAYLOAD;
            case WireOpcode.CONNECT, WireOpcode.ACCEPT -> Fabric.MAX_PRIVATE_DATA;
            case WireOpcode.REJECT -> FrameHeader.MAX_TEXT;
            default -> 0;
        };
    }

    // ---------------------------------------------------------------- seed corpus: frames as the endpoints write them

    static Map<String, byte[]> seeds() {
        Map<String, byte[]> seeds = new LinkedHashMap<>();
        seeds.put("handshake", frames(
                frame(new FrameHeader().reset(WireOpcode.CONNECT).sequence(77).compareAdd(1_000_000).payloadLength(8), new byte[8]),
                frame(new FrameHeader().reset(WireOpcode.ACCEPT).sequence(77).payloadLength(8), new byte[8]),
                frame(new FrameHeader().reset(WireOpcode.REJECT).payloadLength(7), "no lane".getBytes())));
        seeds.put("requests", frames(
                frame(new FrameHeader().reset(WireOpcode.WRITE).sequence(1).remoteAddress(0x1000).rkey(3).payloadLength(16), new byte[16]),
                frame(new FrameHeader().reset(WireOpcode.SEND).sequence(2).payloadLength(4), new byte[] {1, 2, 3, 4}),
                frame(new FrameHeader().reset(WireOpcode.READ).sequence(3).remoteAddress(0x1000).rkey(3).operandLength(64), null),
                frame(new FrameHeader().reset(WireOpcode.CAS).sequence(4).remoteAddress(0x1008).rkey(3).compareAdd(1).swap(2), null),
                frame(new FrameHeader().reset(WireOpcode.FLUSH).sequence(5).remoteAddress(0x1000).rkey(3).operandLength(64), null)));
        seeds.put("responses", frames(
                frame(new FrameHeader().reset((byte) (WireOpcode.READ | WireOpcode.RESPONSE)).sequence(3).payloadLength(8)
                        .operandLength(8), new byte[8]),
                frame(new FrameHeader().reset((byte) (WireOpcode.WRITE | WireOpcode.RESPONSE)).sequence(1).status(3)
                        .payloadLength(5), "range".getBytes())));
        return seeds;
    }

    private static byte[] frame(FrameHeader h, byte[] payload) {
        ByteBuffer b = ByteBuffer.allocate(FrameHeader.LENGTH + (payload == null ? 0 : payload.length));
        b.put(h.buffer().clear());
        if (payload != null) {
            b.put(payload);
        }
        return b.array();
    }

    private static byte[] frames(byte[]... frames) {
        ByteBuffer all = ByteBuffer.allocate(java.util.Arrays.stream(frames).mapToInt(f -> f.length).sum());
        for (byte[] f : frames) {
            all.put(f);
        }
        return all.array();
    }

    @Test
    void seedCorpusIsWhatTheEndpointsWrite() {
        Fuzzing.seedCorpus(FrameFuzzTest.class, "frames", seeds());
    }
}
