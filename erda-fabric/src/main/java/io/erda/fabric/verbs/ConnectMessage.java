package io.erda.fabric.verbs;

import io.erda.fabric.FabricException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The envelope the verbs provider puts in the private data of the QP-info side channel
 * ({@code io.erda.ffm.verbs.QpInfoExchange}): the message kind, the RNR timer the sender wants its peer to use, and
 * the application's private data (or a reject reason).
 *
 * <pre>
 *  0       1       2
 *  +-------+-------+------------------------------------------+
 *  | kind  |  rnr  | payload: private data, or UTF-8 reason    |
 *  +-------+-------+------------------------------------------+
 *  kind: 1 connect request, 2 accept, 3 reject
 *  rnr:  min_rnr_timer code (0..31) for the receiver's RTR: the RNR NAK timer governs the
 *        sender's retries, so each side chooses it from its own rnrTimeout (see RnrSetting)
 * </pre>
 */
record ConnectMessage(int kind, int rnrTimerCode, byte[] payload) {
    static final int KIND_OFFSET = 0;
    static final int RNR_OFFSET = 1;
    static final int HEADER_LENGTH = 2;

    static final int REQUEST = 1;
    static final int ACCEPT = 2;
    static final int REJECT = 3;

    static ConnectMessage reject(String reason) {
        return new ConnectMessage(REJECT, 0, reason.getBytes(StandardCharsets.UTF_8));
    }

    byte[] encode() {
        byte[] out = new byte[HEADER_LENGTH + payload.length];
        out[KIND_OFFSET] = (byte) kind;
        out[RNR_OFFSET] = (byte) rnrTimerCode;
        System.arraycopy(payload, 0, out, HEADER_LENGTH, payload.length);
        return out;
    }

    static ConnectMessage decode(byte[] data, int expectedKind) {
        if (data.length < HEADER_LENGTH) {
            throw new FabricException("connection message of " + data.length + " bytes, header needs " + HEADER_LENGTH);
        }
        int kind = data[KIND_OFFSET];
        boolean answer = expectedKind == ACCEPT && kind == REJECT;
        if (kind != expectedKind && !answer) {
            throw new FabricException("connection message of kind " + kind + ", expected " + expectedKind);
        }
        return new ConnectMessage(kind, data[RNR_OFFSET] & 0x1f, Arrays.copyOfRange(data, HEADER_LENGTH, data.length));
    }

    String reason() {
        return new String(payload, StandardCharsets.UTF_8);
    }
}
