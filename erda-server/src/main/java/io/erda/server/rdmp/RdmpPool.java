package io.erda.server.rdmp;

import io.erda.core.pm.PmFileHeader;
import io.erda.core.pm.PmFormatException;
import io.erda.core.pm.PmRegion;
import io.erda.core.pm.WriteLatencyModel;
import io.erda.fabric.Access;
import io.erda.fabric.Backing;
import io.erda.fabric.Fabric;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.RegisterOptions;
import io.erda.protocol.RawReserveReply;
import io.erda.protocol.WireStatus;
import io.erda.protocol.memory.Key;
import io.erda.protocol.memory.ObjectLayout;
import io.erda.protocol.memory.RdmpObjectLayout;
import io.erda.protocol.memory.Words;
import io.erda.server.platform.PmEmulation;
import io.erda.server.store.RequestException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * RDMP-KV's store (RDMP-KV §III): objects ({@link RdmpObjectLayout}) in a PM pool of slots in size classes, with a
 * DRAM index from key to its versions. Registered for one-sided READ and WRITE, so clients WRITE values into it
 * (RDMP-SA, RDMP-CC) and READ them (GET of both).
 *
 * <p><b>PUT.</b> The server-reply metadata phase ({@link #allocate}) takes a free slot, writes the header and key,
 * zeroes the two flag bytes and persists them, then stores and persists the sequence number: the PUT's log record.
 * The object is then a pending version of its key until its persist flag is seen set: by {@link #commit} (RDMP-SA:
 * the server flushes the value and sets the flags), by the client (RDMP-CC: the server notices the flag the next time
 * it looks at the key), or at once ({@link #stage}: RDMA-HERD, the server writes the whole object). Versions are not
 * updated in place; once a newer version is committed the older ones are retired (their sequence zeroed and persisted,
 * the slot freed). A DELETE is a tombstone version ({@link #delete}) retired with the last older version.
 *
 * <p><b>GET.</b> {@link #lookup} names the newest version, committed or not: a client that READs a zero valid flag
 * (a PUT in progress) asks again. {@link #value} (RDMA-HERD) answers with the newest committed value.
 *
 * <p><b>Leases.</b> A pending version whose persist flag is still zero two leases after its allocation is rolled back
 * (retired unapplied; its client gives up writing after one lease). <b>Recovery</b> ({@link #open}): the carved slots
 * are walked; per key, the newest version with its persist flag set is rebuilt into the index (its valid flag set),
 * every other version with a sequence number is retired, and one whose persist flag is zero (a PUT that never
 * completed) is counted as rolled back: its key keeps its previous version.
 *
 * <p>Thread-safety: every method holds this pool's monitor.
 */
final class RdmpPool implements AutoCloseable {
    static final String FILE = "rdmp-pool.pm";
    static final int KIND = PmFileHeader.KIND_RDMP_POOL;
    /** The largest slot: holds a 256 KiB value with a key of up to {@link #MAX_KEY_LENGTH} bytes and more. */
    static final int MAX_SLOT = 512 << 10;
    static final int MIN_SLOT = 64;
    /** Largest value with a 1-byte key. */
    static final int MAX_VALUE_LENGTH = RdmpObjectLayout.valueLength(MAX_SLOT, 1);
    static final int MAX_KEY_LENGTH = ObjectLayout.MAX_KEY_LENGTH;
    /** Geometry word 2: the object layout, 1 = {@link RdmpObjectLayout}. */
    static final long LAYOUT = 1;
    /** Size classes: powers of two from {@link #MIN_SLOT} to {@link #MAX_SLOT} and the 1.5× steps between. */
    private static final int[] CLASSES = sizeClasses();

    /** One version of a key: an object in a slot. */
    private static final class Version {
        final Key key;
        final long offset;
        final long sequence;
        final int slotLength;
        final int valueLength;
        final boolean tombstone;
        final long deadline;
        boolean committed;

        Version(Key key, long offset, long sequence, int slotLength, int valueLength, boolean tombstone, long deadline,
                boolean committed) {
            this.key = key;
            this.offset = offset;
            this.sequence = sequence;
            this.slotLength = slotLength;
            this.valueLength = valueLength;
            this.tombstone = tombstone;
            this.deadline = deadline;
            this.committed = committed;
        }

        long persistFlag() {
            return offset + RdmpObjectLayout.persistFlagOffset(key.length(), valueLength);
        }

        long objectLength() {
            return RdmpObjectLayout.length(key.length(), valueLength);
        }
    }

    private final PmRegion file;
    private final long poolBytes;
    private final long leaseNanos;
    private final boolean remoteWritesCounted;
    private final MemoryRegion registration;
    private final Map<Key, List<Version>> index = new HashMap<>();
    private final Map<Long, Version> pendingBySequence = new HashMap<>();
    /** Keys with more than one version or a pending one: what a full pool sweeps. */
    private final Set<Key> unsettled = new HashSet<>();
    @SuppressWarnings("unchecked")
    private final ArrayDeque<Long>[] free = new ArrayDeque[CLASSES.length];
    /** End of the carved slots. */
    private long carved;
    private long nextSequence;
    private long rolledBack;
    private long recovered;
    private long recoveryRolledBack;
    /** Value and flag bytes handed out to clients' WRITEs, where the fabric cannot count them (verbs). */
    private long handedOut;

    private RdmpPool(PmRegion file, long poolBytes, Fabric fabric, long leaseNanos, long writeDelayNanos) {
        this.file = file;
        this.poolBytes = poolBytes;
        this.leaseNanos = leaseNanos;
        this.remoteWritesCounted = fabric.capabilities().remoteWritesCounted();
        for (int c = 0; c < free.length; c++) {
            free[c] = new ArrayDeque<>();
        }
        recover();
        // durable on placement: the clients force their WRITEs (RDMP-CC) or the server flushes them (RDMP-SA)
        this.registration = fabric.register(file.data(), PmEmulation.durableOnPlacement(RegisterOptions.of(
                EnumSet.of(Access.REMOTE_READ, Access.REMOTE_WRITE))
                .withBacking(new Backing(file.path(), file.dataFileOffset())).withWriteDelay(writeDelayNanos), file));
    }

    /**
     * Opens the pool of {@code poolBytes} in {@code directory} (creating it the first time; an existing one of another
     * size is refused naming both) and recovers it.
     */
    static RdmpPool open(Path directory, long poolBytes, WriteLatencyModel latency, Fabric fabric, long leaseNanos) {
        if (poolBytes < MAX_SLOT) {
            throw new IllegalArgumentException("RDMP pool of " + poolBytes + " bytes is below its largest slot of "
                    + MAX_SLOT + " bytes");
        }
        Path path = directory.resolve(FILE);
        long[] geometry = {poolBytes, MAX_SLOT, LAYOUT};
        PmRegion file = Files.exists(path) ? PmRegion.open(path, KIND, latency)
                : PmRegion.create(path, KIND, poolBytes, geometry, latency);
        try {
            file.requireGeometry(0, "RDMP pool bytes", poolBytes);
            file.requireGeometry(1, "RDMP largest slot", MAX_SLOT);
            file.requireGeometry(2, "RDMP object layout", LAYOUT);
            return new RdmpPool(file, poolBytes, fabric, leaseNanos, latency.nanosPerCacheLine());
        } catch (RuntimeException e) {
            file.close();
            throw e;
        }
    }

    private static int[] sizeClasses() {
        List<Integer> sizes = new ArrayList<>();
        for (int s = MIN_SLOT; s <= MAX_SLOT; s *= 2) {
            sizes.add(s);
            if (s + s / 2 <= MAX_SLOT) {
                sizes.add(s + s / 2);
            }
        }
        return sizes.stream().mapToInt(Integer::intValue).toArray();
    }

    private static int sizeClass(long objectLength) {
        for (int c = 0; c < CLASSES.length; c++) {
            if (CLASSES[c] >= objectLength) {
                return c;
            }
        }
        return -1;
    }

    // ---- recovery

    private void recover() {
        MemorySegment data = file.data();
        Map<Key, List<Version>> found = new HashMap<>();
        long offset = 0;
        long highest = 0;
        while (offset + MIN_SLOT <= poolBytes) {
            int slotLength = RdmpObjectLayout.slotLength(data, offset);
            if (slotLength == 0) {
                break;
            }
            int c = Arrays.binarySearch(CLASSES, slotLength);
            if (c < 0 || offset + slotLength > poolBytes) {
                throw new PmFormatException(file.path() + ": slot at " + offset + " has length " + slotLength
                        + ", which is no size class of the pool or runs past its " + poolBytes + " bytes");
            }
            long sequence = RdmpObjectLayout.sequence(data, offset);
            if (sequence == 0) {
                free[c].add(offset);
            } else {
                int keyLength = RdmpObjectLayout.keyLength(data, offset);
                int valueLength = RdmpObjectLayout.valueLength(data, offset);
                if (keyLength < 1 || RdmpObjectLayout.length(keyLength, valueLength) > slotLength || valueLength < 0) {
                    throw new PmFormatException(file.path() + ": slot at " + offset + " of " + slotLength + " bytes holds"
                            + " key length " + keyLength + " and value length " + valueLength);
                }
                Key key = Key.copyOf(data.asSlice(offset + RdmpObjectLayout.HEADER_LENGTH, keyLength));
                boolean tombstone = RdmpObjectLayout.kind(data, offset) == RdmpObjectLayout.KIND_TOMBSTONE;
                Version v = new Version(key, offset, sequence, slotLength, valueLength, tombstone, 0, false);
                v.committed = data.get(ValueLayout.JAVA_BYTE, v.persistFlag()) == RdmpObjectLayout.FLAG_SET;
                found.computeIfAbsent(key, k -> new ArrayList<>()).add(v);
                highest = Math.max(highest, sequence);
            }
            offset += slotLength;
        }
        carved = offset;
        nextSequence = highest + 1;
        for (List<Version> versions : found.values()) {
            Version newest = null;
            for (Version v : versions) {
                if (v.committed && (newest == null || v.sequence > newest.sequence)) {
                    newest = v;
                }
            }
            for (Version v : versions) {
                if (v != newest) {
                    if (!v.committed) {
                        recoveryRolledBack++; // paper §III-C: an incomplete PUT is undone, its key keeps the previous
                    }
                    retire(v);
                }
            }
            if (newest == null) {
                continue;
            }
            if (newest.tombstone) {
                retire(newest);
                continue;
            }
            // the valid flag need not be persistent (paper §III-C): a rebuilt object is valid again
            setFlag(newest.persistFlag() + 1);
            List<Version> list = new ArrayList<>();
            list.add(newest);
            index.put(newest.key, list);
            recovered++;
        }
    }

    // ---- the metadata phase and the write paths

    /**
     * RDMP-SA and RDMP-CC's metadata phase: a slot for the object, its header, key and zeroed flags persistent, then
     * its sequence number; the reply names it. The client WRITEs the value at {@link RdmpObjectLayout#valueOffset}.
     */
    synchronized RawReserveReply allocate(MemorySegment key, int valueLength) {
        Key k = Key.copyOf(key);
        sweep(k); // the index look-up of the metadata phase: an RDMP-CC version committed since is noticed, older freed
        Version v = place(k, valueLength, false, null, System.nanoTime() + 2 * leaseNanos);
        pendingBySequence.put(v.sequence, v);
        handedOut += valueLength + RdmpObjectLayout.FLAGS_LENGTH;
        return reply(v);
    }

    /** RDMA-HERD's PUT: the whole object written and persisted by the server, committed on return. */
    synchronized void stage(MemorySegment key, MemorySegment value) {
        place(Key.copyOf(key), (int) value.byteSize(), false, value, 0);
    }

    /** A DELETE of every protocol: a committed tombstone, when the key has any version. */
    synchronized void delete(MemorySegment key) {
        Key k = Key.copyOf(key);
        List<Version> versions = index.get(k);
        if (versions != null && !versions.getLast().tombstone) {
            place(k, 0, true, null, 0);
        }
    }

    /**
     * RDMP-SA's second phase: flushes the value the client wrote, sets the persist flag and persists it, then sets
     * the valid flag. A version rolled back (its lease ran out) or unknown is refused.
     */
    synchronized void commit(long sequence, long address) {
        Version v = pendingBySequence.get(sequence);
        if (v != null) {
            sweep(v.key); // one past its deadline is rolled back here, not committed
            v = pendingBySequence.get(sequence);
        }
        if (v == null || registration.address() + v.offset != address) {
            throw new RequestException(WireStatus.NOT_FOUND, "RDMP object of sequence " + sequence + " at 0x"
                    + Long.toHexString(address) + " is not pending here: rolled back after its lease, or never allocated");
        }
        file.persist(v.offset + RdmpObjectLayout.valueOffset(v.key.length()), v.valueLength);
        setFlag(v.persistFlag());
        file.persist(v.persistFlag(), 1);
        setFlag(v.persistFlag() + 1);
        committed(v);
        sweep(v.key);
    }

    /**
     * Writes an object into a fresh slot: header, key and (HERD, tombstone) value with both flags set, or (allocate)
     * zeroed flags; persists it, then stores and persists its sequence number (the log record). Indexes it.
     */
    private Version place(Key key, int valueLength, boolean tombstone, MemorySegment value, long deadline) {
        int keyLength = key.length();
        if (keyLength < 1 || keyLength > MAX_KEY_LENGTH) {
            throw new RequestException(WireStatus.KEY_TOO_LONG, "key length " + keyLength + " outside [1, "
                    + MAX_KEY_LENGTH + "]");
        }
        long objectLength = RdmpObjectLayout.length(keyLength, valueLength);
        int c = sizeClass(objectLength);
        if (c < 0) {
            throw new RequestException(WireStatus.VALUE_TOO_LARGE, "value length " + valueLength + " with key length "
                    + keyLength + " makes an RDMP object of " + objectLength + " bytes, which exceeds the pool's largest"
                    + " slot of " + MAX_SLOT + " bytes (value limit " + MAX_VALUE_LENGTH + " with a 1-byte key)");
        }
        long offset = take(c, key);
        MemorySegment data = file.data();
        boolean complete = value != null || tombstone;
        data.set(Words.SHORT_U, offset + RdmpObjectLayout.KEY_LENGTH_OFFSET, (short) keyLength);
        data.set(ValueLayout.JAVA_BYTE, offset + RdmpObjectLayout.KIND_OFFSET,
                tombstone ? RdmpObjectLayout.KIND_TOMBSTONE : RdmpObjectLayout.KIND_VALUE);
        data.set(Words.INT_U, offset + RdmpObjectLayout.VALUE_LENGTH_OFFSET, valueLength);
        MemorySegment.copy(key.bytes(), 0, data, offset + RdmpObjectLayout.HEADER_LENGTH, keyLength);
        long flags = offset + RdmpObjectLayout.persistFlagOffset(keyLength, valueLength);
        if (value != null) {
            MemorySegment.copy(value, 0, data, offset + RdmpObjectLayout.valueOffset(keyLength), valueLength);
        }
        byte flag = complete ? RdmpObjectLayout.FLAG_SET : 0;
        data.set(ValueLayout.JAVA_BYTE, flags, flag);
        data.set(ValueLayout.JAVA_BYTE, flags + 1, flag);
        if (complete) {
            file.recordWrite(offset + RdmpObjectLayout.KEY_LENGTH_OFFSET, objectLength - RdmpObjectLayout.KEY_LENGTH_OFFSET);
            file.persist(offset, objectLength);
        } else {
            file.recordWrite(offset + RdmpObjectLayout.KEY_LENGTH_OFFSET,
                    RdmpObjectLayout.HEADER_LENGTH - RdmpObjectLayout.KEY_LENGTH_OFFSET + keyLength);
            file.recordWrite(flags, RdmpObjectLayout.FLAGS_LENGTH);
            file.persist(offset, RdmpObjectLayout.HEADER_LENGTH + keyLength);
            file.persist(flags, RdmpObjectLayout.FLAGS_LENGTH);
        }
        long sequence = nextSequence++;
        file.setLongRelease(offset + RdmpObjectLayout.SEQUENCE_OFFSET, sequence);
        file.persist(offset + RdmpObjectLayout.SEQUENCE_OFFSET, Long.BYTES);
        Version v = new Version(key, offset, sequence, CLASSES[c], valueLength, tombstone, deadline, complete);
        List<Version> versions = index.computeIfAbsent(key, k -> new ArrayList<>());
        versions.add(v);
        if (versions.size() > 1 || !complete) {
            unsettled.add(key);
        }
        if (complete) {
            sweep(key);
        }
        return v;
    }

    /** A free slot of class {@code c}: reused, carved, or (pool full) after sweeping the unsettled keys. */
    private long take(int c, Key forKey) {
        for (int attempt = 0; attempt < 2; attempt++) {
            Long reused = free[c].poll();
            if (reused != null) {
                return reused;
            }
            int slotLength = CLASSES[c];
            if (carved + slotLength <= poolBytes) {
                long offset = carved;
                carved += slotLength;
                file.data().set(Words.INT_U, offset + RdmpObjectLayout.SLOT_LENGTH_OFFSET, slotLength);
                file.data().set(Words.LONG_U, offset + RdmpObjectLayout.SEQUENCE_OFFSET, 0);
                file.recordWrite(offset, RdmpObjectLayout.HEADER_LENGTH);
                file.persist(offset, RdmpObjectLayout.HEADER_LENGTH);
                return offset;
            }
            for (Key k : List.copyOf(unsettled)) {
                sweep(k);
            }
        }
        throw new RequestException(WireStatus.LOG_FULL, "RDMP pool of " + poolBytes + " bytes has no free slot of "
                + CLASSES[c] + " bytes for key " + forKey + " (" + carved + " bytes carved, " + index.size() + " keys)");
    }

    // ---- reads

    /** The newest version of {@code key} (pending or committed) for a client to READ; null if none or deleted. */
    synchronized RawReserveReply lookup(MemorySegment key) {
        Key k = Key.copyOf(key);
        List<Version> versions = sweep(k);
        if (versions == null) {
            return null;
        }
        Version newest = versions.getLast();
        return newest.tombstone ? null : reply(newest);
    }

    /**
     * RDMA-HERD's GET: copies the newest committed value of {@code key} into {@code into} (at least
     * {@link #MAX_VALUE_LENGTH} bytes) and returns its length, or -1 if the key has none. The caller's buffer is reused across GETs: a value is copied once here
     * and once into the reply, with no array allocated per GET (a large one would take G1's humongous path).
     */
    synchronized int value(MemorySegment key, MemorySegment into) {
        List<Version> versions = sweep(Key.copyOf(key));
        if (versions == null) {
            return -1;
        }
        for (int i = versions.size() - 1; i >= 0; i--) {
            Version v = versions.get(i);
            if (v.committed) {
                if (v.tombstone) {
                    return -1;
                }
                MemorySegment.copy(file.data(), v.offset + RdmpObjectLayout.valueOffset(v.key.length()), into, 0,
                        v.valueLength);
                return v.valueLength;
            }
        }
        return -1;
    }

    private RawReserveReply reply(Version v) {
        return new RawReserveReply(v.sequence, registration.address() + v.offset, registration.rkey(),
                (int) v.objectLength(), leaseNanos);
    }

    // ---- settling a key's versions

    /**
     * Brings {@code key}'s versions up to date: a pending one whose persist flag is set (RDMP-CC) is committed, one
     * past its deadline with the flag zero is rolled back; every committed version older than the newest committed
     * one is retired, and so is a tombstone left alone. Returns the versions left, or null.
     */
    private List<Version> sweep(Key key) {
        List<Version> versions = index.get(key);
        if (versions == null) {
            return null;
        }
        long now = System.nanoTime();
        MemorySegment data = file.data();
        for (int i = 0; i < versions.size(); i++) {
            Version v = versions.get(i);
            if (v.committed) {
                continue;
            }
            if (data.get(ValueLayout.JAVA_BYTE, v.persistFlag()) == RdmpObjectLayout.FLAG_SET) {
                // the client's one-sided flush made it durable; persisting the line here orders the retirements below
                file.persist(v.persistFlag(), 1);
                committed(v);
            } else if (now - v.deadline > 0) {
                pendingBySequence.remove(v.sequence);
                versions.remove(i--);
                retire(v);
                rolledBack++;
            }
        }
        int newest = -1;
        for (int i = versions.size() - 1; i >= 0; i--) {
            if (versions.get(i).committed) {
                newest = i;
                break;
            }
        }
        for (int i = newest - 1; i >= 0; i--) {
            Version v = versions.get(i);
            if (v.committed) {
                versions.remove(i);
                retire(v);
                newest--;
            }
        }
        if (versions.size() == 1 && versions.getFirst().committed && versions.getFirst().tombstone) {
            retire(versions.removeFirst());
        }
        if (versions.isEmpty()) {
            index.remove(key);
            unsettled.remove(key);
            return null;
        }
        if (versions.size() == 1 && versions.getFirst().committed) {
            unsettled.remove(key);
        }
        return versions;
    }

    private void committed(Version v) {
        v.committed = true;
        pendingBySequence.remove(v.sequence);
    }

    /** Zeroes and persists the slot's sequence number (recovery ignores it from then on) and frees the slot. */
    private void retire(Version v) {
        file.setLongRelease(v.offset + RdmpObjectLayout.SEQUENCE_OFFSET, 0);
        file.persist(v.offset + RdmpObjectLayout.SEQUENCE_OFFSET, Long.BYTES);
        free[Arrays.binarySearch(CLASSES, v.slotLength)].add(v.offset);
    }

    private void setFlag(long offset) {
        file.data().set(ValueLayout.JAVA_BYTE, offset, RdmpObjectLayout.FLAG_SET);
        file.recordWrite(offset, 1);
    }

    // ---- counts

    /** Bytes the pool took: the server's own stores, plus clients' WRITEs ({@link #remoteBytesWritten}). */
    synchronized long bytesWritten() {
        return file.localBytesWritten() + remoteBytesWritten();
    }

    /** Clients' WRITEs into the pool: as the fabric counted them, or (verbs) the value and flag bytes handed out. */
    synchronized long remoteBytesWritten() {
        return remoteWritesCounted ? registration.remoteBytesWritten() : handedOut;
    }

    synchronized int keys() {
        return index.size();
    }

    synchronized int pending() {
        return pendingBySequence.size();
    }

    synchronized long rolledBack() {
        return rolledBack;
    }

    synchronized long recovered() {
        return recovered;
    }

    synchronized long recoveryRolledBack() {
        return recoveryRolledBack;
    }

    synchronized long carvedBytes() {
        return carved;
    }

    long poolBytes() {
        return poolBytes;
    }

    @Override
    public synchronized void close() {
        registration.close();
        file.close();
    }
}
