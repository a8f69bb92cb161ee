package io.erda.fabric.tcp.wire;

import io.erda.fabric.Fabric;
import io.erda.fabric.Opcode;

/**
 * Frame opcodes and their length limits. A request's response has the same opcode with {@link #RESPONSE} set.
 * Handshake frames come first on a socket: CONNECT (request socket, private data), ATTACH (the reverse socket of
 * the same connection, same nonce), then ACCEPT or REJECT back on the request socket. CONNECT and ACCEPT carry the
 * sender's RNR timeout (ns) in compare/add and its peer timeout (ns) in swap. HEARTBEAT (no payload) goes the way
 * responses go, from a side's responder socket to the peer's completer, which drops it: it only shows the peer lives.
 */
public final class WireOpcode {
    public static final byte READ = 1;
    public static final byte WRITE = 2;
    public static final byte WRITE_WITH_IMM = 3;
    public static final byte SEND = 4;
    public static final byte CAS = 5;
    public static final byte FETCH_ADD = 6;
    public static final byte FLUSH = 7;
    public static final byte ATOMIC_WRITE = 8;

    public static final byte CONNECT = 0x10;
    public static final byte ATTACH = 0x11;
    public static final byte ACCEPT = 0x12;
    public static final byte REJECT = 0x13;
    public static final byte HEARTBEAT = 0x14;

    public static final byte RESPONSE = (byte) 0x80;

    private WireOpcode() {
    }

    public static byte of(Opcode opcode) {
        return switch (opcode) {
            case READ -> READ;
            case WRITE -> WRITE;
            case WRITE_WITH_IMM -> WRITE_WITH_IMM;
            case SEND -> SEND;
            case CAS -> CAS;
            case FETCH_ADD -> FETCH_ADD;
            case FLUSH -> FLUSH;
            case ATOMIC_WRITE -> ATOMIC_WRITE;
            default -> throw new IllegalArgumentException(opcode + " is not a send-queue opcode");
        };
    }

    public static boolean isResponse(byte wire) {
        return (wire & RESPONSE) != 0;
    }

    public static byte request(byte wire) {
        return (byte) (wire & ~RESPONSE);
    }

    public static String name(byte wire) {
        String base = switch (request(wire)) {
            case READ -> "READ";
            case WRITE -> "WRITE";
            case WRITE_WITH_IMM -> "WRITE_WITH_IMM";
            case SEND -> "SEND";
            case CAS -> "CAS";
            case FETCH_ADD -> "FETCH_ADD";
            case FLUSH -> "FLUSH";
            case ATOMIC_WRITE -> "ATOMIC_WRITE";
            case CONNECT -> "CONNECT";
            case ATTACH -> "ATTACH";
            case ACCEPT -> "ACCEPT";
            case REJECT -> "REJECT";
            case HEARTBEAT -> "HEARTBEAT";
            default -> "0x" + Integer.toHexString(wire & 0xff);
        };
        return isResponse(wire) ? base + "_RESPONSE" : base;
    }

    /** Checks opcode and lengths of a header just read. */
    static void check(FrameHeader h) throws ProtocolViolation {
        byte wire = h.opcode();
        int payload = h.payloadLength();
        int operand = h.operandLength();
        if (payload < 0 || operand < 0) {
            throw new ProtocolViolation("negative length in " + h);
        }
        byte op = request(wire);
        int maxPayload;
        if (isResponse(wire)) {
            maxPayload = switch (op) {
                case READ -> Math.max(FrameHeader.MAX_PAYLOAD, FrameHeader.MAX_TEXT);
                case WRITE, WRITE_WITH_IMM, SEND, CAS, FETCH_ADD, FLUSH, ATOMIC_WRITE -> FrameHeader.MAX_TEXT;
                default -> throw new ProtocolViolation("unknown response opcode " + name(wire) + " (0x"
                        + Integer.toHexString(wire & 0xff) + "), expected READ to ATOMIC_WRITE (0x81 to 0x88)");
            };
        } else {
            maxPayload = switch (op) {
                case WRITE, WRITE_WITH_IMM, SEND -> FrameHeader.MAX_PAYLOAD;
                case READ, CAS, FETCH_ADD, FLUSH, ATOMIC_WRITE, ATTACH, HEARTBEAT -> 0;
                case CONNECT, ACCEPT -> Fabric.MAX_PRIVATE_DATA;
                case REJECT -> FrameHeader.MAX_TEXT;
                default -> throw new ProtocolViolation("unknown opcode " + name(wire) + ", expected READ to ATOMIC_WRITE"
                        + " (0x1 to 0x8) or CONNECT to REJECT (0x10 to 0x13)");
            };
            if (op == READ && operand > FrameHeader.MAX_PAYLOAD) {
                throw new ProtocolViolation("READ of " + operand + " bytes exceeds " + FrameHeader.MAX_PAYLOAD);
            }
        }
        if (payload > maxPayload) {
            throw new ProtocolViolation(name(wire) + " payload of " + payload + " bytes exceeds " + maxPayload);
        }
    }
}
