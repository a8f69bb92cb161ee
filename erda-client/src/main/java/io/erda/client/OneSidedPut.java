package io.erda.client;

import io.erda.fabric.Endpoint;
import io.erda.fabric.FabricException;
import io.erda.fabric.IdleStrategy;
import io.erda.protocol.BlockRequest;
import io.erda.protocol.FlushRequest;
import io.erda.protocol.MessageType;
import io.erda.protocol.PersistenceMethod;
import io.erda.protocol.PutReply;
import io.erda.protocol.WireStatus;
import io.erda.protocol.memory.AtomicWord;
import io.erda.protocol.memory.HashEntryLayout;
import io.erda.protocol.memory.Key;
import io.erda.protocol.memory.KeyHash;
import io.erda.protocol.memory.LogAddress;
import io.erda.protocol.memory.NeighbourhoodWindow;
import io.erda.protocol.memory.ObjectCheck;
import java.lang.foreign.MemorySegment;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The one-sided update (docs/one-sided-put.md), for a server in {@code PutMode.ONE_SIDED}: the object, already encoded
 * in the connection's write buffer, is WRITTEN into a log block the connection leases, made durable by the server's
 * persistence method, and published by one remote CAS of the key's word from the word the client last saw to the
 * flipped word naming it as current (the old current becomes previous, {@link AtomicWord#withNewVersion}); then the
 * word is made durable the same way. No server CPU in the common case: one WRITE and one CAS, posted together and
 * waited for once under wsp ({@link #writeObject}).
 *
 * <p>The entry (its word's address and the word) comes from the connection's cache, filled by this connection's own
 * CASes and by {@link #locate}: the key's window READ and, for each candidate, its current object READ, which shows
 * the entry is this key's. A CAS from a word that names this key's objects can only succeed on this key's entry (a
 * bucket another key took since holds words naming that key's objects). A lost CAS (another writer, the cleaner, a
 * hopscotch move freezing the word) forgets the entry and locates it again; the object already written is published
 * by the next CAS if its block is still good, else it stays garbage for the cleaner.
 *
 * <p>Safety rules (docs/one-sided-put.md, the proof sketch and "ABA"): a CAS is sent only before the block's
 * lease ends, counted from before the grant was asked for, so never after the server's deadline; the cleaner waits
 * out the leases of the blocks granted before it redirects a head's writes, and a round trip more, before it
 * switches. Block and entry are used together only if both belong to the head state the connection knows now (its
 * generation, bumped by every HEAD_STATE): a word read before a cleaning began is never CASed with a block granted
 * after, so no word can have come back to an old value through a retired chain whose slots a later chain reused.
 *
 * <p>Keys without an entry go to the server (the caller's reservation path inserts them); a server that finds the key
 * present answers {@link WireStatus#PUBLISH_BY_CAS}, and the update locates it again. A DELETE is a tombstone
 * published the same way.
 */
final class OneSidedPut {
    /** Entries a connection keeps located (least recently used first out): 64 bytes or so each. */
    static final int CACHED_ENTRIES = 1 << 16;
    /** How much sooner than the server's deadline a client stops publishing into a block. */
    private static final long DEADLINE_MARGIN_NANOS = 2_000_000;
    private static final IdleStrategy.Policy RETRY_PAUSE = IdleStrategy.Policy.park("one-sided-put-retry", 20_000,
            2_000_000);

    /**
     * Crash testing, as the server's {@code ERDA_CLEANER_HALT_AT}: this environment variable names a point of the
     * update at which the client process halts ({@code Runtime.halt(137)}, as kill -9: no shutdown hook, no
     * BLOCK_RETURN, its connections dropped by the kernel). {@value #OBJECT_WRITTEN}: the object is written into the
     * block and made durable by the method, its CAS not sent; {@value #WORD_PUBLISHED}: the CAS succeeded, the word
     * not yet made durable and the PUT not returned. Unset in production.
     */
    static final String HALT_AT = "ERDA_CLIENT_HALT_AT";
    static final String OBJECT_WRITTEN = "object-written";
    static final String WORD_PUBLISHED = "word-published";
    private static final String HALT_POINT = haltPoint(System.getenv(HALT_AT));

    static String haltPoint(String named) {
        if (named == null || named.isEmpty()) {
            return null;
        }
        if (named.equals(OBJECT_WRITTEN) || named.equals(WORD_PUBLISHED)) {
            return named;
        }
        throw new IllegalArgumentException(HALT_AT + " '" + named + "' is not one of " + OBJECT_WRITTEN + ", "
                + WORD_PUBLISHED);
    }

    private static void haltAt(String point) {
        if (point.equals(HALT_POINT)) {
            System.err.println("erda-client: halting at " + point + " (" + HALT_AT + ")");
            System.err.flush();
            Runtime.getRuntime().halt(137);
        }
    }

    /** The insert path: the caller's reservation PUT. Throws {@link ErdaException} PUBLISH_BY_CAS if the key exists. */
    @FunctionalInterface
    interface Insert {
        void run();
    }

    /**
     * A located entry: where its word is, the word last seen, the head state it was seen in, and whether its current
     * object was found incomplete while its previous one is complete (then the update replaces the current in place,
     * so the word keeps naming the complete version as previous).
     */
    record Entry(long wordAddress, long word, int generation, boolean replaceCurrent) {
    }

    /** A leased block: {@code [address, address + length)} of {@code head}'s log, written up to {@code used}. */
    static final class Block {
        final int head;
        final long chainOffset;
        final long address;
        final int rkey;
        final int length;
        /** Client clock: no CAS for an object of this block is sent after it. */
        final long deadline;
        final int generation;
        int used;

        Block(int head, long chainOffset, long address, int rkey, int length, long deadline, int generation) {
            this.head = head;
            this.chainOffset = chainOffset;
            this.address = address;
            this.rkey = rkey;
            this.length = length;
            this.deadline = deadline;
            this.generation = generation;
        }

        boolean usable(int generation, long objectLength, long now) {
            return this.generation == generation && length - used >= objectLength && deadline - now > 0;
        }
    }

    /** What one connection keeps between updates: its blocks by head and the entries it located. Not thread-safe. */
    static final class State {
        private Block[] blocks = new Block[0];
        private final Map<Key, Entry> entries = new LinkedHashMap<>(1024, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(java.util.Map.Entry<Key, OneSidedPut.Entry> eldest) {
                return size() > CACHED_ENTRIES;
            }
        };

        Block block(int head) {
            return head < blocks.length ? blocks[head] : null;
        }

        void block(int head, Block b) {
            if (head >= blocks.length) {
                blocks = java.util.Arrays.copyOf(blocks, head + 1);
            }
            blocks[head] = b;
        }

        Entry entry(Key key, int generation) {
            Entry e = entries.get(key);
            return e != null && e.generation() == generation ? e : null;
        }

        void remember(Key key, Entry e) {
            entries.put(Key.copyOf(key.bytes()), e); // the caller's bytes may change after the PUT returns
        }

        void forget(Key key) {
            entries.remove(key);
        }
    }

    /** What {@link #locate} found. */
    private record Located(Kind kind, Entry entry) {
        enum Kind { FOUND, ABSENT, UNRESOLVED }

        static final Located ABSENT = new Located(Kind.ABSENT, null);
        static final Located UNRESOLVED = new Located(Kind.UNRESOLVED, null);
    }

    private final ClientStats stats;
    private final RemoteTable table;
    private final ObjectReader objects;

    OneSidedPut(ClientStats stats, RemoteTable table, ObjectReader objects) {
        this.stats = stats;
        this.table = table;
        this.objects = objects;
    }

    /**
     * Publishes the object of {@code objectLength} bytes at 0 of {@code c}'s write buffer (a tombstone when
     * {@code delete}) as {@code key}'s newest version; {@code insert} stores a key that has no entry.
     */
    void put(ClientConnection c, Key key, boolean delete, long objectLength, Insert insert) {
        StoreView view = c.view();
        State state = c.oneSided;
        int head = KeyHash.headId(key.hash(), view.info().headCount());
        long start = System.nanoTime();
        long budget = 4 * view.info().leaseNanos() + 1_000_000_000L;
        IdleStrategy pause = null;
        Block writtenIn = null;
        long writtenAt = -1; // chain offset of this PUT's object, once written
        try {
            for (int attempt = 1; ; attempt++) {
                if (attempt > 1) {
                    if (System.nanoTime() - start - budget > 0) {
                        throw new ErdaException(WireStatus.INTERNAL, (delete ? "DELETE" : "PUT") + " of a " + objectLength
                                + "-byte object not published after " + attempt + " attempts in "
                                + (System.nanoTime() - start) / 1_000_000 + " ms (lost CASes, or an entry that stayed"
                                + " unresolved)");
                    }
                    c.catchUp(); // a HEAD_STATE that came meanwhile: its generation decides below
                }
                int generation = view.generation(head);
                Entry entry = state.entry(key, generation);
                if (entry == null) {
                    stats.entryLookups.increment();
                    Located located = locate(c, key, generation);
                    if (located.kind() == Located.Kind.ABSENT) {
                        if (delete) {
                            return; // deleting a missing key
                        }
                        try {
                            insert.run();
                            return;
                        } catch (ErdaException e) {
                            if (e.status() != WireStatus.PUBLISH_BY_CAS) {
                                throw e;
                            }
                            continue; // inserted meanwhile by another writer: locate it again
                        }
                    }
                    if (located.kind() == Located.Kind.UNRESOLVED || AtomicWord.isFrozen(located.entry().word())) {
                        // an insert still being written, or a move under way: wait a little and look again
                        pause = pause != null ? pause : RETRY_PAUSE.newStrategy();
                        pause.idle();
                        continue;
                    }
                    entry = located.entry();
                }
                long now = System.nanoTime();
                if (writtenIn == null || writtenIn.generation != generation || writtenIn.deadline - now <= 0) {
                    Block block = state.block(head);
                    if (block == null || !block.usable(generation, objectLength, now)) {
                        block = lease(c, head, objectLength, block);
                        state.block(head, block);
                        if (view.generation(head) != generation) {
                            // the head changed while the block was asked for: locate again; the block, labelled with
                            // the state before, goes back with the next lease or at the next operation
                            state.forget(key);
                            continue;
                        }
                    }
                    long inBlock = block.used;
                    if (writtenIn != null) {
                        stats.objectsRewritten.increment();
                    }
                    writeObject(c, block.address + inBlock, (int) objectLength, block.rkey);
                    block.used += (int) objectLength;
                    writtenIn = block;
                    writtenAt = block.chainOffset + inBlock;
                    if (c.sync().endpoint().state() != Endpoint.State.CONNECTED) {
                        // the WRITE failed as it was posted (the endpoint is in error): no CAS is sent, nothing is
                        // published, and the pool may try the PUT again on a fresh connection
                        throw new FabricException((delete ? "DELETE" : "PUT") + " not published: the connection is "
                                + c.sync().endpoint().state() + " after its WRITE was posted");
                    }
                    if (writtenIn.deadline - System.nanoTime() <= 0) {
                        continue; // too late to publish it: it stays garbage, the next attempt takes a new block
                    }
                }
                long units = LogAddress.unitsForBytes(writtenAt);
                // over a torn current (a WRITE that completed without landing whole, then published), keep the
                // complete previous version as previous: two such in a row must not lose the last complete one
                long replacement = entry.replaceCurrent() ? AtomicWord.withCurrent(entry.word(), units)
                        : AtomicWord.withNewVersion(entry.word(), units);
                long witnessed = cas(c, entry.wordAddress(), entry.word(), replacement, delete);
                if (witnessed == entry.word()) {
                    haltAt(WORD_PUBLISHED);
                    persistWord(c, entry.wordAddress(), delete);
                    state.remember(key, new Entry(entry.wordAddress(), replacement, generation, false));
                    stats.oneSidedUpdates.increment();
                    return;
                }
                stats.casRetries.increment();
                state.forget(key);
            }
        } finally {
            if (pause != null) {
                pause.reset();
            }
        }
    }

    /**
     * The key's entry, by READs: the window, then for each candidate its current object (or, if that is not complete,
     * its previous one), which must be complete and carry the key. ABSENT if no candidate is the key's; UNRESOLVED if
     * a candidate's objects could not be checked (an insert not written yet).
     */
    private Located locate(ClientConnection c, Key key, int generation) {
        StoreView view = c.view();
        MemorySegment window = table.window(c, key);
        long home = view.table().homeBucket(key.hash());
        long mask = NeighbourhoodWindow.candidates(window, view.table().neighbourhood(), key.hash());
        // the window is read into the entry buffer and objects into the read buffer: the words stay readable
        long[] words = new long[Long.bitCount(mask)];
        int[] indexes = new int[words.length];
        int[] heads = new int[words.length];
        for (int n = 0; mask != 0; mask &= mask - 1, n++) {
            indexes[n] = Long.numberOfTrailingZeros(mask);
            words[n] = NeighbourhoodWindow.atomicWord(window, indexes[n]);
            heads[n] = NeighbourhoodWindow.headId(window, indexes[n]);
        }
        boolean unresolved = false;
        for (int n = 0; n < words.length; n++) {
            long word = words[n];
            ObjectCheck check = ownership(c, key, heads[n], AtomicWord.current(word));
            if (check == ObjectCheck.KEY_MISMATCH) {
                continue;
            }
            boolean currentComplete = check.isValid();
            if (!currentComplete) {
                check = ownership(c, key, heads[n], AtomicWord.previous(word));
                if (check == ObjectCheck.KEY_MISMATCH) {
                    continue;
                }
                if (!check.isValid()) {
                    unresolved = true;
                    continue;
                }
            }
            long address = view.windowAddress(home) + (long) indexes[n] * HashEntryLayout.LENGTH
                    + HashEntryLayout.ATOMIC_WORD_OFFSET;
            return new Located(Located.Kind.FOUND, new Entry(address, word, generation, !currentComplete));
        }
        return unresolved ? Located.UNRESOLVED : Located.ABSENT;
    }

    /** How the object at {@code units} relates to {@code key}: VALID if complete and the key's. */
    private ObjectCheck ownership(ClientConnection c, Key key, int head, long units) {
        if (units == AtomicWord.NONE) {
            return ObjectCheck.TRUNCATED;
        }
        return objects.read(c, head, units, key).check();
    }

    /**
     * Gives back (BLOCK_RETURN) each block of a head whose state changed since it was leased, or with {@code all} every
     * block (the connection closes): no CAS will publish from it any more (the generations differ), and a cleaning that
     * began waits for it otherwise until its lease ends. Nothing to do, and no request, while the heads keep their state.
     */
    void returnBlocks(ClientConnection c, boolean all) {
        State state = c.oneSided;
        StoreView view = c.view();
        for (int head = 0; head < state.blocks.length; head++) {
            Block b = state.blocks[head];
            if (b != null && (all || b.generation != view.generation(head))) {
                state.blocks[head] = null;
                if (b.deadline - System.nanoTime() > 0) {
                    c.call(MessageType.BLOCK_RETURN, new FlushRequest(head, b.chainOffset, b.length)::encode,
                            reply -> reply.expect(MessageType.BLOCK_RETURN_REPLY));
                    stats.blocksReturned.increment();
                }
            }
        }
    }

    /** BLOCK: a leased block of at least {@code objectLength} bytes of {@code head}'s log, {@code replaced} given back. */
    private Block lease(ClientConnection c, int head, long objectLength, Block replaced) {
        long asked = System.nanoTime(); // the lease runs from the grant, later than this: so the client ends first
        // the head state the block is taken under is the one known before asking: a HEAD_STATE the call processes came
        // after the grant or before it, and only the first may leave the block in a chain the new state calls old
        // (granted just before a cleaning's redirect, the state change sent before the reply); labelled with the state
        // known now, such a block would look current and be used to its lease's end, which the cleaning waits out
        int generation = c.view().generation(head);
        // the block replaced is given back in the same request: nothing more is published from it
        long returned = replaced != null && replaced.deadline - asked > 0 ? replaced.chainOffset : BlockRequest.NONE;
        PutReply r = c.call(MessageType.BLOCK, new BlockRequest(head, (int) objectLength, returned)::encode,
                reply -> {
                    MemorySegment body = reply.expect(MessageType.BLOCK_REPLY).body();
                    return PutReply.decode(body, 0, (int) body.byteSize());
                });
        if (r.head() != head || r.objectLength() < objectLength) {
            throw new ErdaException(WireStatus.INTERNAL, "server granted a block of " + r.objectLength() + " bytes of head "
                    + r.head() + " for an object of " + objectLength + " bytes of head " + head);
        }
        stats.blocksLeased.increment();
        if (returned != BlockRequest.NONE) {
            stats.blocksReturned.increment();
        }
        // a block labelled older than the view is given back at the next operation, unused if need be
        return new Block(head, r.chainOffset(), r.address(), r.rkey(), r.objectLength(),
                asked + r.leaseNanos() - DEADLINE_MARGIN_NANOS, generation);
    }

    /**
     * The remote CAS, waited for; its completion completes the object's WRITE posted before it ({@link #writeObject}).
     * A fabric failure of either leaves it unknown whether the word changed: a WRITE whose acknowledgement was lost
     * (the transport's retries exhausted) may have been executed at the target with the CAS after it.
     */
    private static long cas(ClientConnection c, long wordAddress, long expected, long replacement, boolean delete) {
        try {
            return c.sync().compareAndSwap(wordAddress, c.view().info().table().rkey(), expected, replacement);
        } catch (FabricException e) {
            throw new WriteOutcomeUnknownException((delete ? "DELETE" : "PUT") + " failed at its WRITE or CAS, so it may"
                    + " have taken effect: " + e.getMessage(), e);
        }
    }

    /**
     * The object's WRITE into its block, posted unsignalled: the CAS posted next on the same connection executes after
     * it at the target (which executes a connection's requests in order, and flushes them unexecuted after one
     * failed), and its completion implies the WRITE complete or fails with its error (SyncEndpoint#writeUnsignaled).
     * So the word never names an object not yet placed, and an update waits one round trip for WRITE and CAS where
     * waiting for each would take two. Under wsp a placed object is durable, so the word also names only durable
     * objects. Under read-after-write the object's FLUSH (or READ) is waited for before the CAS is posted: a word made
     * durable before its object could, after a power failure, name two torn versions of a key (a second writer CASed
     * over the first's object before it was flushed), leaving recovery to guess the last acknowledged one. With
     * {@link #HALT_AT} {@value #OBJECT_WRITTEN} the WRITE is waited for, and the process halts before the CAS.
     */
    private static void writeObject(ClientConnection c, long address, int length, int rkey) {
        if (c.view().info().persistence() == PersistenceMethod.READ_AFTER_WRITE) {
            c.sync().writeUnsignaled(c.writes.region(), 0, length, address, rkey);
            c.sync().flush(address, length, rkey);
        } else if (OBJECT_WRITTEN.equals(HALT_POINT)) {
            c.sync().write(c.writes.region(), 0, length, address, rkey);
        } else {
            c.sync().writeUnsignaled(c.writes.region(), 0, length, address, rkey);
        }
        haltAt(OBJECT_WRITTEN);
    }

    /** The same for the word just CASed: the update is durable once the word is. */
    private static void persistWord(ClientConnection c, long wordAddress, boolean delete) {
        if (c.view().info().persistence() != PersistenceMethod.READ_AFTER_WRITE) {
            return;
        }
        try {
            c.sync().flush(wordAddress, AtomicWord.LENGTH, c.view().info().table().rkey());
        } catch (FabricException e) {
            throw new WriteOutcomeUnknownException((delete ? "DELETE" : "PUT") + " failed making its CAS durable, so it"
                    + " may have taken effect: " + e.getMessage(), e);
        }
    }
}
