package io.erda.ffm.verbs;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * What one side of an RC connection tells the other: QP number, LID (InfiniBand), GID (RoCE; all
 * zero when unused), initial PSN, plus application private data (e.g. rkeys, the persistence
 * method). Wire format in {@link QpInfoExchange}.
 */
public record QpInfo(int qpNum, int lid, byte[] gid, int psn, byte[] privateData) {
    public static final int GID_LENGTH = 16;
    /** PSNs are 24 bits. */
    public static final int PSN_MASK = 0xFF_FFFF;
    /** Keeps both sides' messages inside socket buffers, so a symmetric write-then-read never deadlocks. */
    public static final int MAX_PRIVATE_DATA = 4096;

    public QpInfo {
        if (gid.length != GID_LENGTH) {
            throw new IllegalArgumentException("gid must be " + GID_LENGTH + " bytes, got " + gid.length);
        }
        if ((psn & ~PSN_MASK) != 0) {
            throw new IllegalArgumentException("psn " + psn + " exceeds 24 bits");
        }
        if (lid < 0 || lid > 0xFFFF) {
            throw new IllegalArgumentException("lid " + lid + " exceeds 16 bits");
        }
        if (privateData.length > MAX_PRIVATE_DATA) {
            throw new IllegalArgumentException("private data of " + privateData.length + " bytes exceeds "
                    + MAX_PRIVATE_DATA);
        }
        gid = gid.clone();
        privateData = privateData.clone();
    }

    @Override
    public byte[] gid() {
        return gid.clone();
    }

    @Override
    public byte[] privateData() {
        return privateData.clone();
    }

    public boolean hasGid() {
        for (byte b : gid) {
            if (b != 0) {
                return true;
            }
        }
        return false;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof QpInfo other && qpNum == other.qpNum && lid == other.lid && psn == other.psn
                && Arrays.equals(gid, other.gid) && Arrays.equals(privateData, other.privateData);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * (31 * qpNum + lid) + psn) + Arrays.hashCode(gid);
    }

    @Override
    public String toString() {
        return "QpInfo[qpNum=" + qpNum + ", lid=" + lid + ", gid=" + HexFormat.of().formatHex(gid) + ", psn=" + psn
                + ", privateData=" + privateData.length + " bytes]";
    }
}
