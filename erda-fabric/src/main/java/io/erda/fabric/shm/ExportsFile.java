package io.erda.fabric.shm;

import io.erda.fabric.DurableMirror;
import io.erda.fabric.FabricException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The {@code exports} file of an instance: the descriptors of its regions that peers may access, rewritten
 * atomically (temporary file, then rename) on every register and deregister, tagged with the generation that
 * {@link CountersFile} publishes after the rename. Big-endian ({@link DataOutputStream}):
 * <pre>
 * magic "ERDASHMX" (8) | version (4) | generation (8) | count (4)
 * count x { rkey (4) | address (8) | length (8) | access bits (4) | file offset (8)
 *           | write delay ns per line (8) | counter slot (4) | file path (modified UTF-8, 2 + n)
 *           | mirror (1: 0 none, else 1 + DurableMirror.Durability ordinal) | [mirror file offset (8)
 *                                | lock word file offset (8) | mirror file path (modified UTF-8, 2 + n)] }
 * </pre>
 */
final class ExportsFile {
    static final long MAGIC = 0x4552_4441_5348_4d58L; // "ERDASHMX"
    static final int VERSION = 3;

    /** A decoded exports file. */
    record Snapshot(long generation, List<ExportedRegion> regions) {
    }

    private ExportsFile() {
    }

    static void write(Path file, long generation, Collection<ExportedRegion> regions, ShmFiles files) {
        var bytes = new ByteArrayOutputStream();
        try (var out = new DataOutputStream(bytes)) {
            out.writeLong(MAGIC);
            out.writeInt(VERSION);
            out.writeLong(generation);
            out.writeInt(regions.size());
            for (ExportedRegion r : regions) {
                out.writeInt(r.rkey());
                out.writeLong(r.address());
                out.writeLong(r.length());
                out.writeInt(r.accessBits());
                out.writeLong(r.fileOffset());
                out.writeLong(r.writeDelayNanosPerCacheLine());
                out.writeInt(r.counterSlot());
                out.writeUTF(r.file().toString());
                out.writeByte(r.mirrorFile() == null ? 0 : 1 + r.mirrorDurability().ordinal());
                if (r.mirrorFile() != null) {
                    out.writeLong(r.mirrorOffset());
                    out.writeLong(r.mirrorLockOffset());
                    out.writeUTF(r.mirrorFile().toString());
                }
            }
            Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
            Files.deleteIfExists(tmp);
            try (var ch = files.createFile(tmp)) {
                ch.write(java.nio.ByteBuffer.wrap(bytes.toByteArray()));
            }
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new FabricException("cannot publish shm exports to " + file + ": " + e.getMessage(), e);
        }
    }

    static Snapshot read(Path file) {
        try (var in = new DataInputStream(new ByteArrayInputStream(Files.readAllBytes(file)))) {
            long magic = in.readLong();
            int version = in.readInt();
            if (magic != MAGIC || version != VERSION) {
                throw new FabricException(file + ": magic 0x" + Long.toHexString(magic) + " version " + version
                        + ", expected 0x" + Long.toHexString(MAGIC) + " version " + VERSION);
            }
            long generation = in.readLong();
            int count = in.readInt();
            List<ExportedRegion> regions = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                int rkey = in.readInt();
                long address = in.readLong();
                long length = in.readLong();
                int access = in.readInt();
                long fileOffset = in.readLong();
                long delay = in.readLong();
                int slot = in.readInt();
                Path path = Path.of(in.readUTF());
                int mirrorCode = in.readUnsignedByte();
                if (mirrorCode > DurableMirror.Durability.values().length) {
                    throw new IOException("mirror code " + mirrorCode + " exceeds "
                            + DurableMirror.Durability.values().length);
                }
                boolean mirrored = mirrorCode != 0;
                long mirrorOffset = mirrored ? in.readLong() : 0;
                long lockOffset = mirrored ? in.readLong() : 0;
                Path mirror = mirrored ? Path.of(in.readUTF()) : null;
                regions.add(new ExportedRegion(rkey, address, length, access, path, fileOffset, delay, slot, mirror,
                        mirrorOffset, lockOffset, mirrored ? DurableMirror.Durability.values()[mirrorCode - 1]
                        : DurableMirror.Durability.ON_PLACEMENT));
            }
            return new Snapshot(generation, regions);
        } catch (IOException e) {
            throw new FabricException("cannot read shm exports " + file + ": " + e.getMessage(), e);
        }
    }
}
