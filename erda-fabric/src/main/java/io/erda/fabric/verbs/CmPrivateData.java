package io.erda.fabric.verbs;

import io.erda.fabric.FabricException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The verbs provider's envelope in rdma_cm private data (connect, accept and reject). On InfiniBand and RoCE the
 * IB CM delivers a fixed size, zero-padded (56 bytes in a REQ, 196 in a REP, 148 in a REJ), so the payload carries
 * its own length; the RNR timer travels as in {@link ConnectMessage} (the receiver's min_rnr_timer governs the
 * sender's retries, so each side tells its peer the code it wants). The message kind is the event itself.
 *
 * <pre>
 *  0       1       2
 *  +-------+-------+--------------------------------------------+
 *  |  rnr  |  len  | payload (len bytes) | zero padding ...      |
 *  +-------+-------+--------------------------------------------+
 *  rnr: min_rnr_timer code (0..31) for the receiver's RTR (0 in a reject)
 *  len: bytes of payload: the application's private data, or a UTF-8 reject reason
 * </pre>
 */
record CmPrivateData(int rnrTimerCode, byte[] payload) {
    static final int RNR_OFFSET = 0;
    static final int LENGTH_OFFSET = 1;
    static final int HEADER_LENGTH = 2;
    /** The IB CM REJ message's private data. */
    static final int REJECT_LIMIT = 148;

    byte[] encode() {
        byte[] out = new byte[HEADER_LENGTH + payload.length];
        out[RNR_OFFSET] = (byte) rnrTimerCode;
        out[LENGTH_OFFSET] = (byte) payload.length;
        System.arraycopy(payload, 0, out, HEADER_LENGTH, payload.length);
        return out;
    }

    /** A reject reason, cut to what a REJ carries. */
    static byte[] reject(String reason) {
        byte[] text = reason.getBytes(StandardCharsets.UTF_8);
        return new CmPrivateData(0, Arrays.copyOf(text, Math.min(text.length, REJECT_LIMIT - HEADER_LENGTH))).encode();
    }

    static CmPrivateData decode(byte[] data) {
        if (data.length < HEADER_LENGTH) {
            throw new FabricException("rdma_cm private data of " + data.length + " bytes, header needs " + HEADER_LENGTH);
        }
        int length = Byte.toUnsignedInt(data[LENGTH_OFFSET]);
        if (HEADER_LENGTH + length > data.length) {
            throw new FabricException("rdma_cm private data says " + length + " bytes of payload, only "
                    + (data.length - HEADER_LENGTH) + " arrived");
        }
        return new CmPrivateData(data[RNR_OFFSET] & 0x1f, Arrays.copyOfRange(data, HEADER_LENGTH, HEADER_LENGTH + length));
    }

    String reason() {
        return new String(payload, StandardCharsets.UTF_8);
    }
}
