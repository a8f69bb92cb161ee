package io.erda.server.baseline;

import io.erda.core.pm.PmRegion;
import io.erda.core.pm.WriteLatencyModel;
import io.erda.fabric.Access;
import io.erda.fabric.Fabric;
import io.erda.fabric.IdleStrategy;
import io.erda.protocol.RawReserveReply;
import io.erda.protocol.WireStatus;
import io.erda.protocol.memory.Key;
import io.erda.protocol.memory.ObjectFlyweight;
import io.erda.protocol.memory.ObjectLayout;
import io.erda.protocol.memory.RingSlotLayout;
import io.erda.server.platform.PmEmulation;
import io.erda.server.store.RequestException;
import io.erda.server.store.Store;
import io.erda.server.store.StoreStats;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Logger;

/**
 * The PM ring of the Read After Write baseline (paper §5.1): {@link #SLOTS} fixed slots of {@link #SLOT_SIZE}
 * bytes, registered for one-sided WRITE and READ with the PM write-latency model. Ring position {@code p} uses slot
 * {@code p mod SLOTS}.
 *
 * <p><b>PUT.</b> RAW_RESERVE hands out the next position (the key and sizes travel in the request); the client
 * WRITEs the slot ({@link RingSlotLayout}: the position, a CRC, the {@link ObjectLayout} object) and READs it back to
 * force it: the PUT is durable when that READ completes, with no further message. <b>Poller.</b> One server thread
 * looks at the oldest reserved position: a slot that holds it (position word, CRC, the reserved key and length) is
 * applied ({@link Store#apply}), then its header is zeroed and persisted and the applied-through position is
 * persisted in the file header; a slot still invalid when its lease has run out (its writer died, or is late) is
 * recycled the same way without applying. Positions are applied in order, so per key in version order. With
 * nothing reserved it spins and yields ({@link RedoLog#APPLIER_YIELD_NANOS}) before it waits, as Redo Logging's
 * applier does: a waiting poller costs each reservation that finds it so a wake-up on the worker's path.
 *
 * <p><b>Recovery.</b> {@link #open} applies, in position order, every slot that holds a position in
 * {@code [mark, mark + SLOTS)} with its slot number: a forced-but-unapplied PUT. A slot is handed out again only
 * after the mark past its previous use is persisted, so a position identifies one reservation. A writer that
 * outlived its lease and WRITEs after its slot was recycled writes an older position, below the mark: ignored (the
 * fault campaign found the resurrection this used to cause: an old value applied over newer acknowledged ones).
 *
 * <p><b>GET.</b> {@link #lookup} answers from the newest pending position of the key whose slot validates, else
 * the caller asks the table.
 */
public final class ReadAfterWriteRing extends AppliedLog {
    public static final String FILE = "raw-ring.pm";
    /** PM file kind. */
    public static final int KIND = io.erda.core.pm.PmFileHeader.KIND_RAW_RING;
    static final int SLOTS = 256;
    static final int SLOT_SIZE = 128 << 10;
    /** Largest value with a 1-byte key: the object must fit a slot after the slot header. */
    static final int MAX_VALUE_LENGTH = SLOT_SIZE - RingSlotLayout.HEADER_LENGTH - ObjectLayout.HEADER_LENGTH - 1;
    /** Geometry word 2 of the file: the slot layout, 1 = {@link RingSlotLayout} (0 in files of the unchecked layout). */
    static final long SLOT_LAYOUT = 1;
    private static final Format FORMAT = new Format(KIND, new long[] {SLOTS, SLOT_SIZE, SLOT_LAYOUT},
            new String[] {"ring slots", "ring slot size", "ring slot layout"}, (long) SLOTS * SLOT_SIZE,
            "ring data length");
    private static final int APPLIED_SLOT = 0;
    /** With nothing reserved: as Redo Logging's applier (class comment). */
    private static final IdleStrategy.Policy IDLE = IdleStrategy.Policy.spinYieldThenBlock("read-after-write-poller",
            RedoLog.APPLIER_SPIN_NANOS, RedoLog.APPLIER_YIELD_NANOS);
    /** With the oldest slot reserved but not yet written: its writer's WRITE is on its way, or its lease runs out. */
    private static final IdleStrategy.Policy PENDING = IdleStrategy.Policy.park("read-after-write-pending", 20_000, 20_000);
    private static final Logger LOG = Logger.getLogger(ReadAfterWriteRing.class.getName());
    private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();

    private record Slot(long position, Key key, int objectLength, long deadline) {
        long offset() {
            return (position % SLOTS) * SLOT_SIZE;
        }
    }

    private final long leaseNanos;
    private final ArrayDeque<Slot> reserved = new ArrayDeque<>();
    private final Map<Key, List<Slot>> byKey = new HashMap<>();
    /** Object bytes of the slots applied: the clients' WRITEs, where the fabric cannot count them (verbs). */
    private final LongAdder appliedBytes = new LongAdder();
    private final boolean remoteWritesCounted;
    private final LongAdder expired = new LongAdder();
    private long next;
    private long persistedMark;

    private ReadAfterWriteRing(PmRegion file, Fabric fabric, Store store, StoreStats stats, long writeDelayNanos) {
        super(file, store, stats, LOG);
        this.remoteWritesCounted = fabric.capabilities().remoteWritesCounted();
        this.leaseNanos = store.leaseNanos();
        // durable on placement whatever the persistence method: the client always forces with a READ
        opened(replay(), fabric.register(file.data(), PmEmulation.durableOnPlacement(registerOptions(EnumSet.of(
                Access.REMOTE_READ, Access.REMOTE_WRITE)).withWriteDelay(writeDelayNanos), file)));
    }

    /** Opens the store's ring (creating it the first time) and applies every forced but unapplied slot. */
    static ReadAfterWriteRing open(Path directory, WriteLatencyModel latency, Fabric fabric, Store store,
                                   StoreStats stats) {
        return open(directory.resolve(FILE), FORMAT, latency,
                file -> new ReadAfterWriteRing(file, fabric, store, stats, latency.nanosPerCacheLine()));
    }

    private long replay() {
        long mark = file.mutableWord(APPLIED_SLOT);
        List<Long> found = new ArrayList<>();
        ObjectFlyweight object = new ObjectFlyweight();
        for (int index = 0; index < SLOTS; index++) {
            long position = mark + Math.floorMod(index - mark, SLOTS);
            if (RingSlotLayout.holds(file.data(), (long) index * SLOT_SIZE, SLOT_SIZE, position, null, object)) {
                found.add(position);
            }
        }
        found.sort(Comparator.naturalOrder());
        for (long position : found) {
            long offset = (position % SLOTS) * SLOT_SIZE;
            object.wrap(file.data(), offset + RingSlotLayout.HEADER_LENGTH); // checked by the scan above
            store.apply(object.key(), object.value(), object.isTombstone());
            zero(offset);
            mark = position + 1;
        }
        if (!found.isEmpty()) {
            file.setMutableWord(APPLIED_SLOT, mark);
        }
        next = mark;
        persistedMark = mark;
        return found.size();
    }

    /** Reserves the next slot for an object of this key and value length; waits (up to a lease) while the ring is full. */
    RawReserveReply reserve(MemorySegment key, int valueLength, boolean delete) {
        store.requireAppliable(key.byteSize(), valueLength);
        long objectLength = ObjectLayout.length((int) key.byteSize(), delete ? 0 : valueLength);
        if (objectLength > SLOT_SIZE - RingSlotLayout.HEADER_LENGTH) {
            throw new RequestException(WireStatus.VALUE_TOO_LARGE, "value length " + valueLength + " with key length "
                    + key.byteSize() + " makes an object of " + objectLength + " bytes, which exceeds the ring slot of "
                    + SLOT_SIZE + " bytes less its " + RingSlotLayout.HEADER_LENGTH + "-byte header");
        }
        Key k = Key.copyOf(key);
        synchronized (this) {
            long giveUp = System.nanoTime() + leaseNanos;
            while (next - persistedMark >= SLOTS) {
                long left = giveUp - System.nanoTime();
                if (left <= 0 || !running) {
                    throw new RequestException(WireStatus.LOG_FULL, "read-after-write ring of " + SLOTS
                            + " slots stayed full for " + TimeUnit.NANOSECONDS.toMillis(leaseNanos) + " ms");
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new RequestException(WireStatus.INTERNAL, "interrupted waiting for a ring slot");
                }
            }
            Slot slot = new Slot(next++, k, (int) objectLength, System.nanoTime() + leaseNanos);
            reserved.addLast(slot);
            byKey.computeIfAbsent(k, x -> new ArrayList<>()).add(slot);
            notifyAll();
            return new RawReserveReply(slot.position(), registration().address() + slot.offset(),
                    registration().rkey(), (int) objectLength, leaseNanos);
        }
    }

    /** The newest pending position of {@code key} that validates: its value, null for a tombstone; else NONE. */
    @Override
    synchronized PendingWrite lookup(MemorySegment key) {
        List<Slot> slots = byKey.get(Key.copyOf(key));
        if (slots == null) {
            return PendingWrite.NONE;
        }
        ObjectFlyweight object = new ObjectFlyweight();
        for (int i = slots.size() - 1; i >= 0; i--) {
            if (complete(slots.get(i), object)) {
                return new PendingWrite(true, object.isTombstone() ? null : object.value().toArray(ValueLayout.JAVA_BYTE));
            }
        }
        return PendingWrite.NONE;
    }

    private boolean complete(Slot slot, ObjectFlyweight object) {
        return RingSlotLayout.holds(file.data(), slot.offset(), RingSlotLayout.HEADER_LENGTH + slot.objectLength(),
                slot.position(), slot.key().bytes(), object) && object.totalLength() == slot.objectLength();
    }

    /** The poller thread's body. */
    @Override
    void run() {
        ObjectFlyweight object = new ObjectFlyweight();
        IdleStrategy backoff = IDLE.newStrategy();
        IdleStrategy writeOnItsWay = PENDING.newStrategy();
        while (running) {
            Slot oldest;
            try {
                oldest = awaitOldest(backoff);
            } catch (InterruptedException e) {
                return;
            }
            if (oldest == null) {
                continue;
            }
            long start = CPU.getCurrentThreadCpuTime();
            // the deadline is read before the slot: a WRITE that lands between the two is then seen as complete,
            // never recycled as expired (its writer, done within the lease, does not write it again)
            boolean pastDeadline = System.nanoTime() - oldest.deadline() > 0;
            if (complete(oldest, object)) {
                if (apply(oldest.key().bytes(), object.value(), object.isTombstone(),
                        () -> "ring position " + oldest.position())) {
                    applied.increment();
                    appliedBytes.add(oldest.objectLength());
                }
                retire(oldest);
                writeOnItsWay.reset();
            } else if (pastDeadline) {
                expired.increment(); // its writer died or gave up: recycle without applying
                retire(oldest);
                writeOnItsWay.reset();
            } else {
                writeOnItsWay.idle(); // the writer's WRITE is on its way: poll again
            }
            // the scheme's cost: every poll of a pending slot is server CPU
            stats.serverCpuNanos.add(CPU.getCurrentThreadCpuTime() - start);
        }
    }

    /** The oldest reserved slot once there is one (null when stopping): spins and yields, then waits. */
    private Slot awaitOldest(IdleStrategy backoff) throws InterruptedException {
        backoff.reset();
        boolean wait = false;
        while (true) {
            synchronized (this) {
                if (!running) {
                    return null;
                }
                if (!reserved.isEmpty()) {
                    return reserved.peekFirst();
                }
                if (wait) {
                    wait(500);
                    continue;
                }
            }
            wait = backoff.idle(); // outside the monitor: reserve() takes it
        }
    }

    private synchronized void retire(Slot slot) {
        zero(slot.offset());
        reserved.removeFirst();
        List<Slot> ofKey = byKey.get(slot.key());
        ofKey.remove(slot);
        if (ofKey.isEmpty()) {
            byKey.remove(slot.key());
        }
        file.setMutableWord(APPLIED_SLOT, slot.position() + 1);
        persistedMark = slot.position() + 1;
        notifyAll();
    }

    /** Zeroes and persists a slot's position and CRC: it can never hold a position again until rewritten. */
    private void zero(long offset) {
        file.setLongRelease(offset, 0);
        file.setLongRelease(offset + Long.BYTES, 0);
        file.persist(offset, RingSlotLayout.HEADER_LENGTH);
    }

    /** Slots reserved and not yet applied or recycled. */
    @Override
    synchronized int pending() {
        return reserved.size();
    }

    /** Slots recycled without applying: their writer died or was late. */
    long expired() {
        return expired.sum();
    }

    /**
     * The clients' WRITEs into the ring: as the fabric counted them, or where it cannot (verbs) the objects of the
     * slots applied (a WRITE that never validated is not counted).
     */
    @Override
    long remoteBytesWritten() {
        return remoteWritesCounted ? registration().remoteBytesWritten() : appliedBytes.sum();
    }
}
