package io.erda.remotelog;

import io.erda.protocol.PersistenceDomain;
import io.erda.protocol.PmConfiguration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The responder's memory hierarchy as the taxonomy sees it (paper §2, Figure 1, and §3.1), kept beside the real
 * memory the fabric writes, to say what a power failure would leave: the durable image of the log and of the
 * receive buffers. Every update is an item that moves through stages:
 * <pre>
 *   IN_FLIGHT --(it or a later request completes at the requester)--> RECEIVED   (in the responder RNIC's buffers)
 *   RECEIVED  --(a later Flush/Read completes; the responder's CPU receives a later message;
 *                the RNIC drains in order)--> PLACED            (DDIO or a CPU store: the processor cache;
 *                                                               otherwise the I/O controller, on its way to memory)
 *   PLACED    --(a Flush/Read completes and the item is not in the cache; the responder flushes its lines;
 *                the cache or I/O controller writes back, in any order)--> PERSISTED (the memory controller, PM)
 * </pre>
 * and is durable when its stage is in the configuration's persistence domain: WSP from RECEIVED, MHP from PLACED, DMP
 * only once PERSISTED; an item in DRAM receive buffers never is. A durable item is copied into the durable image.
 *
 * <p>What is emulated: the stages, and so which bytes survive. What is real: the operations, their order and their
 * completions, which the fabric (tcp, shm, verbs) executes; this model only hears of them, from {@link Appender} (each
 * request when posted and when its completion is taken) and {@link LogServer} (each receive completion, local store
 * and local flush). Hearing of a completion a little after the fact only delays durability past the moment the
 * requester acts on it, so a correct method is never shown losing what it was told was durable.
 *
 * <p>Power failure ({@link #armPowerFailure}): at the chosen event, before it happens, the image is collapsed as the
 * hardware could have left it: a random prefix of the requests still in flight has reached the RNIC (posted requests
 * in order, and they may pass an earlier Flush or atomic, which do not arrive: §2's ordering rules); a random prefix of
 * what the RNIC holds was placed; outside the domain each placed item was written back whole, not at all, or torn in
 * 8-byte words. From then on power is off: events are ignored and {@link #acknowledge} says no.
 *
 * <p>Natural draining keeps the unsafe window realistic rather than unbounded: the RNIC holds at most {@link
 * #RNIC_ITEMS} received items and places the oldest beyond; the cache holds at most {@link #CACHE_ITEMS} placed items
 * outside the domain and writes back a random one beyond. Thread-safe: one lock orders every event.
 */
public final class ResponderMemory {
    /** Received items the RNIC holds before it places the oldest. */
    public static final int RNIC_ITEMS = 4;
    /** Placed, not persisted items the cache (or I/O controller) holds before it writes one back. */
    public static final int CACHE_ITEMS = 16;

    /** Where an update lands. */
    public enum Area { LOG, RECEIVE_BUFFERS }

    /** How the responder's RNIC orders a request (§2): posted requests may pass earlier non-posted ones. */
    public enum Kind {
        /** WRITE, WRITE_WITH_IMM, SEND. */
        POSTED,
        /** FLUSH, or the READ that emulates it: completes once what precedes it is placed and written through. */
        FLUSH,
        /** ATOMIC_WRITE: non-posted, ordered after everything before it, but not itself a flush. */
        ATOMIC_WRITE
    }

    private enum Stage { IN_FLIGHT, RECEIVED, PLACED, PERSISTED }

    private static final class Item {
        final long ticket;
        final Kind kind;
        final Area area;
        final long offset;
        final byte[] bytes;
        final boolean inCache;
        final long receiveOrdinal;
        Stage stage;

        Item(long ticket, Kind kind, Area area, long offset, byte[] bytes, boolean inCache, long receiveOrdinal,
             Stage stage) {
            this.ticket = ticket;
            this.kind = kind;
            this.area = area;
            this.offset = offset;
            this.bytes = bytes;
            this.inCache = inCache;
            this.receiveOrdinal = receiveOrdinal;
            this.stage = stage;
        }
    }

    /** What a power failure left: the log and the receive buffers (all zero when they are DRAM). */
    public record Image(byte[] log, byte[] receiveBuffers) {
    }

    private final PmConfiguration configuration;
    private final Transport transport;
    private final byte[] durableLog;
    private final byte[] durableReceiveBuffers;
    private final List<Item> items = new ArrayList<>();
    /** The ticket of the item last copied into the durable image at (area, offset): an older one never overwrites it. */
    private final Map<Long, Long> lastApplied = new HashMap<>();
    /** The ticket of each message that consumes a receive buffer, by its ordinal, until the responder receives it. */
    private final Map<Long, Long> messageTickets = new HashMap<>();
    /** The kind of each posted Flush and Write_atomic, until its completion (its item may be gone by then). */
    private final Map<Long, Kind> nonPosted = new HashMap<>();
    private final Random random;
    private long nextTicket = 1;
    private long events;
    private long failAtEvent = Long.MAX_VALUE;
    private Image crashImage;

    /**
     * @param durableLog            the log's durable contents now (copied)
     * @param receiveBufferBytes    the receive buffers' size (they start empty)
     * @param seed                  draws natural write-backs and the collapse
     */
    public ResponderMemory(PmConfiguration configuration, byte[] durableLog, int receiveBufferBytes, long seed) {
        this(configuration, Transport.INFINIBAND, durableLog, receiveBufferBytes, seed);
    }

    /**
     * As the other constructor, for requests carried by {@code transport}: on iWARP a posted request's completion
     * does not move it out of flight; only a later non-posted completion or the responder's receipt of a later
     * message shows that it arrived.
     */
    public ResponderMemory(PmConfiguration configuration, Transport transport, byte[] durableLog, int receiveBufferBytes,
                           long seed) {
        this.configuration = configuration;
        this.transport = transport;
        this.durableLog = durableLog.clone();
        this.durableReceiveBuffers = new byte[receiveBufferBytes];
        this.random = new Random(seed);
    }

    public PmConfiguration configuration() {
        return configuration;
    }

    /** Power fails just before the {@code event}-th event (1 is the first) from now on. */
    public synchronized void armPowerFailure(long event) {
        if (event < 1) {
            throw new IllegalArgumentException("power failure at event " + event + ": events count from 1");
        }
        failAtEvent = events + event;
    }

    /** Power fails now. */
    public synchronized void failPower() {
        if (crashImage == null) {
            crashImage = collapse();
        }
    }

    /** What the power failure left, or null while power is on. */
    public synchronized Image crashImage() {
        return crashImage;
    }

    public synchronized boolean powerOn() {
        return crashImage == null;
    }

    /**
     * The requester posted a request: {@code bytes} go to {@code offset} in {@code area} (FLUSH: none); {@code
     * receiveOrdinal} counts the requests that consume a receive buffer (SEND, WRITE_WITH_IMM), 0 for the others.
     * Returns the ticket {@link #completed} takes.
     */
    public synchronized long posted(Kind kind, Area area, long offset, byte[] bytes, long receiveOrdinal) {
        bytes = bytes == null ? new byte[0] : bytes;
        long ticket = nextTicket++;
        if (!event()) {
            return ticket;
        }
        boolean inCache = configuration.ddio();
        items.add(new Item(ticket, kind, area, offset, bytes, inCache, receiveOrdinal, Stage.IN_FLIGHT));
        if (receiveOrdinal > 0) {
            messageTickets.put(receiveOrdinal, ticket);
        }
        if (kind != Kind.POSTED) {
            nonPosted.put(ticket, kind);
        }
        settle();
        return ticket;
    }

    /**
     * The requester took the completion of the request {@code ticket}: it and every earlier request reached the
     * responder's RNIC (InfiniBand and RoCE acknowledge receipt); a Flush's completion also means every earlier one
     * is placed and, where not in the cache, written through (§2; the Intel seed's READ fences PCIe writes).
     */
    public synchronized void completed(long ticket) {
        if (!event()) {
            return;
        }
        Kind kind = nonPosted.remove(ticket);
        boolean received = kind != null || transport.completionMeansReceived();
        Item done = null;
        for (Item i : items) {
            if (received && i.ticket <= ticket && i.stage == Stage.IN_FLIGHT) {
                i.stage = Stage.RECEIVED;
            }
            if (i.ticket == ticket) {
                done = i;
            }
        }
        if (kind != null) {
            for (Item i : items) {
                if (i.ticket < ticket) {
                    advance(i, Stage.PLACED);
                    if (kind == Kind.FLUSH && !i.inCache) {
                        advance(i, Stage.PERSISTED);
                    }
                }
            }
        }
        if (done != null && done.bytes.length == 0) {
            items.remove(done); // a Flush has done all it does
        }
        settle();
    }

    /**
     * The responder's CPU took the receive completion of the {@code receiveOrdinal}-th message: the message, and
     * every request before it, is placed (a receive completion follows the buffer's placement, and placement is in
     * order).
     */
    public synchronized void delivered(long receiveOrdinal) {
        if (!event()) {
            return;
        }
        Long last = messageTickets.remove(receiveOrdinal);
        if (last == null) {
            return; // posted while power was off, or never: nothing to place
        }
        for (Item i : items) {
            if (i.ticket <= last) {
                advance(i, Stage.PLACED);
            }
        }
        settle();
    }

    /** The responder's CPU stored {@code bytes} at {@code offset} of the log: in its cache. */
    public synchronized void stored(long offset, byte[] bytes) {
        if (!event()) {
            return;
        }
        items.add(new Item(nextTicket++, Kind.POSTED, Area.LOG, offset, bytes, true, 0, Stage.PLACED));
        settle();
    }

    /** The responder's CPU wrote back the log's lines {@code [offset, offset+length)} and fenced (clwb; sfence). */
    public synchronized void flushed(long offset, long length) {
        if (!event()) {
            return;
        }
        for (Item i : items) {
            if (i.area == Area.LOG && i.offset < offset + length && offset < i.offset + i.bytes.length) {
                if (i.stage.compareTo(Stage.PLACED) >= 0) {
                    i.stage = Stage.PERSISTED;
                }
            }
        }
        settle();
    }

    /**
     * The requester is about to report an append durable: true while power is on (the acknowledgement precedes any
     * power failure), false after it.
     */
    public synchronized boolean acknowledge() {
        return event();
    }

    /** Counts an event; fails power first if it is the armed one. False when power is off. */
    private boolean event() {
        if (crashImage != null) {
            return false;
        }
        if (++events >= failAtEvent) {
            crashImage = collapse();
            return false;
        }
        return true;
    }

    private static void advance(Item i, Stage to) {
        if (i.stage.compareTo(to) < 0) {
            i.stage = to;
        }
    }

    private boolean durable(Item i) {
        PersistenceDomain domain = configuration.domain();
        return i.stage == Stage.PERSISTED
                || domain.keepsPlaced() && i.stage == Stage.PLACED
                || domain.keepsReceived() && i.stage == Stage.RECEIVED;
    }

    private boolean volatileBuffer(Item i) {
        return i.area == Area.RECEIVE_BUFFERS && !configuration.pmReceiveBuffers();
    }

    /** Natural draining, then durable items into the image; items in DRAM leave once placed. */
    private void settle() {
        List<Item> received = items.stream().filter(i -> i.stage == Stage.RECEIVED && i.bytes.length > 0).toList();
        for (int k = 0; k < received.size() - RNIC_ITEMS; k++) {
            received.get(k).stage = Stage.PLACED;
        }
        List<Item> cached = items.stream().filter(i -> i.stage == Stage.PLACED && !durable(i) && !volatileBuffer(i)
                && i.bytes.length > 0).toList();
        if (cached.size() > CACHE_ITEMS) {
            List<Item> pick = new ArrayList<>(cached);
            for (int k = 0; k < cached.size() - CACHE_ITEMS; k++) {
                pick.remove(random.nextInt(pick.size())).stage = Stage.PERSISTED;
            }
        }
        for (Iterator<Item> it = items.iterator(); it.hasNext(); ) {
            Item i = it.next();
            if (i.bytes.length == 0) {
                continue; // a Flush or an immediate-only message: leaves when it completes
            }
            if (volatileBuffer(i) && i.stage.compareTo(Stage.PLACED) >= 0) {
                it.remove();
            } else if (!volatileBuffer(i) && durable(i)) {
                apply(i, i.bytes);
                it.remove();
            }
        }
    }

    private void apply(Item i, byte[] bytes) {
        if (bytes.length == 0 || volatileBuffer(i)) {
            return;
        }
        long key = (i.area.ordinal() * (1L << 48)) + i.offset;
        Long newer = lastApplied.get(key);
        if (newer != null && newer > i.ticket) {
            return; // a later update of the same bytes is already durable: this older one was overwritten in place
        }
        lastApplied.put(key, i.ticket);
        byte[] target = i.area == Area.LOG ? durableLog : durableReceiveBuffers;
        System.arraycopy(bytes, 0, target, Math.toIntExact(i.offset), bytes.length);
    }

    /** What the hardware could have left at this moment (see the class comment). */
    private Image collapse() {
        List<Item> inFlightPosted = items.stream().filter(i -> i.stage == Stage.IN_FLIGHT && i.kind == Kind.POSTED)
                .toList();
        int arrived = random.nextInt(inFlightPosted.size() + 1);
        for (int k = 0; k < arrived; k++) {
            inFlightPosted.get(k).stage = Stage.RECEIVED;
        }
        List<Item> received = items.stream().filter(i -> i.stage == Stage.RECEIVED).toList();
        int placed = random.nextInt(received.size() + 1);
        for (int k = 0; k < placed; k++) {
            received.get(k).stage = Stage.PLACED;
        }
        for (Item i : items) {
            if (volatileBuffer(i) || i.stage == Stage.IN_FLIGHT) {
                continue;
            }
            if (durable(i)) {
                apply(i, i.bytes);
            } else if (i.stage == Stage.PLACED) {
                switch (random.nextInt(3)) {
                    case 0 -> apply(i, i.bytes);           // written back before the power went
                    case 1 -> { }                           // lost with the cache
                    default -> apply(i, torn(i));           // some 8-byte words written back
                }
            }
        }
        items.clear();
        return new Image(durableLog.clone(), configuration.pmReceiveBuffers() ? durableReceiveBuffers.clone()
                : new byte[durableReceiveBuffers.length]);
    }

    /** The item's bytes where each 8-byte word was written back or not; the durable image's old bytes elsewhere. */
    private byte[] torn(Item i) {
        byte[] target = i.area == Area.LOG ? durableLog : durableReceiveBuffers;
        byte[] mixed = Arrays.copyOfRange(target, Math.toIntExact(i.offset), Math.toIntExact(i.offset) + i.bytes.length);
        for (int w = 0; w < mixed.length; w += 8) {
            if (random.nextBoolean()) {
                System.arraycopy(i.bytes, w, mixed, w, Math.min(8, mixed.length - w));
            }
        }
        return mixed;
    }
}
