package io.erda.fabric.shm;

import io.erda.fabric.Fabric;
import io.erda.fabric.FabricException;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Path;

/**
 * Connection set-up over the listener's Unix-domain socket; afterwards the socket stays open, silent, as the
 * liveness channel (EOF = the peer closed, aborted or died). Three messages, big-endian:
 * <pre>
 * request  (connector): magic "ERDH" (4) | version (4) | private data (2 + n) | connector home (UTF)
 * reply    (acceptor):  accepted (1) | accepted: private data (2 + n) | ring file (UTF) | acceptor home (UTF)
 *                                      rejected: reason (UTF)
 * ready    (connector): one byte 1 after it mapped the ring file (the acceptor then unlinks the file)
 * </pre>
 * A peer's home is the directory holding its exports and counters files.
 */
final class Handshake {
    static final int MAGIC = 0x4552_4448; // "ERDH"
    static final int VERSION = 1;
    static final int READY = 1;

    record Request(byte[] privateData, Path home) {
    }

    record Reply(boolean accepted, byte[] privateData, Path ringFile, Path home, String reason) {
    }

    private Handshake() {
    }

    static void writeRequest(DataOutputStream out, byte[] privateData, Path home) throws IOException {
        out.writeInt(MAGIC);
        out.writeInt(VERSION);
        writeBytes(out, privateData);
        out.writeUTF(home.toString());
        out.flush();
    }

    static Request readRequest(DataInputStream in) throws IOException {
        int magic = in.readInt();
        int version = in.readInt();
        if (magic != MAGIC || version != VERSION) {
            throw new IOException("shm handshake magic 0x" + Integer.toHexString(magic) + " version " + version
                    + ", expected 0x" + Integer.toHexString(MAGIC) + " version " + VERSION);
        }
        return new Request(readBytes(in), Path.of(in.readUTF()));
    }

    static void writeAccept(DataOutputStream out, byte[] privateData, Path ringFile, Path home) throws IOException {
        out.writeBoolean(true);
        writeBytes(out, privateData);
        out.writeUTF(ringFile.toString());
        out.writeUTF(home.toString());
        out.flush();
    }

    static void writeReject(DataOutputStream out, String reason) throws IOException {
        out.writeBoolean(false);
        out.writeUTF(reason == null ? "" : reason);
        out.flush();
    }

    static Reply readReply(DataInputStream in) throws IOException {
        if (!in.readBoolean()) {
            return new Reply(false, null, null, null, in.readUTF());
        }
        byte[] data = readBytes(in);
        return new Reply(true, data, Path.of(in.readUTF()), Path.of(in.readUTF()), null);
    }

    static void checkPrivateData(byte[] data) {
        if (data != null && data.length > Fabric.MAX_PRIVATE_DATA) {
            throw new FabricException("private data of " + data.length + " bytes exceeds " + Fabric.MAX_PRIVATE_DATA);
        }
    }

    private static void writeBytes(DataOutputStream out, byte[] data) throws IOException {
        byte[] d = data == null ? new byte[0] : data;
        out.writeShort(d.length);
        out.write(d);
    }

    private static byte[] readBytes(DataInputStream in) throws IOException {
        int n = in.readUnsignedShort();
        if (n > Fabric.MAX_PRIVATE_DATA) {
            throw new IOException("private data of " + n + " bytes exceeds " + Fabric.MAX_PRIVATE_DATA);
        }
        return in.readNBytes(n);
    }
}
