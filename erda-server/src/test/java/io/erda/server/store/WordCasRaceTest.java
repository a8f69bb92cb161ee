package io.erda.server.store;

import io.erda.cleaner.CleaningHook;
import io.erda.cleaner.CleaningHost;
import io.erda.cleaner.LogCleaner;
import io.erda.core.log.LogHead;
import io.erda.core.table.HopscotchTable;
import io.erda.core.testing.CasClient;
import io.erda.core.testing.ShmTempDirFactory;
import io.erda.core.testing.WordHistory;
import io.erda.protocol.memory.AtomicWord;
import io.erda.protocol.memory.Key;
import io.erda.protocol.memory.KeyHash;
import io.erda.protocol.memory.LogAddress;
import io.erda.protocol.memory.ObjectLayout;
import io.erda.server.TestStores;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static io.erda.server.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The server's writers of atomic words (the reservation's flip, lease roll-back, recovery, the cleaner) against
 * clients updating the same keys one-sidedly: each client writes a complete object into log space of its own, then
 * CASes the key's word from the word it read. Each key has one client, so after every CAS it won the key's newest
 * complete value must be the one it wrote, until its next; a server writer that stored over a word it did not read
 * would bring back an older value.
 */
class WordCasRaceTest {
    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final int KEYS_PER_CLIENT = 4;
    private static final int CLIENTS = 2;
    private static final int UPDATES_PER_KEY = 150;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private Store store;
    /**
     * Start times of the one-sided updates under way, by client: the stand-in for the leases of clients' log blocks,
     * which the cleaner waits out before it retires a chain (an update may publish an object of the old chain).
     */
    private final java.util.concurrent.ConcurrentHashMap<String, Long> updatesUnderWay = new java.util.concurrent.ConcurrentHashMap<>();

    @AfterEach
    void close() {
        if (store != null) {
            store.close();
        }
    }

    /** Keys with distinct fingerprints, so a client finds its entry by fingerprint alone. */
    private static List<String> keys() {
        List<String> keys = new ArrayList<>();
        Set<Integer> fingerprints = new HashSet<>();
        for (int i = 0; keys.size() < CLIENTS * KEYS_PER_CLIENT; i++) {
            if (fingerprints.add(KeyHash.fingerprint(KeyHash.hash(bytes("key" + i))))) {
                keys.add("key" + i);
            }
        }
        return keys;
    }

    private static Store.Reserved reserveOnly(Store store, String key) {
        return store.reserve(MemorySegment.ofArray(bytes(key)), 8, false); // never written: torn
    }

    /**
     * A one-sided update: the object is written complete and persisted in log space reserved for the client alone
     * (what a leased block gives it), then made current by CAS; returns how many CASes it lost.
     */
    private long oneSidedPut(CasClient client, String key, String value) {
        updatesUnderWay.put(client.toString(), System.nanoTime());
        try {
            return writeAndCas(client, key, value);
        } finally {
            updatesUnderWay.remove(client.toString());
        }
    }

    private long writeAndCas(CasClient client, String key, String value) {
        Key k = Key.copyOf(MemorySegment.ofArray(bytes(key)));
        LogHead log = store.directory().head(k.head(store.directory().heads().size()));
        long length = ObjectLayout.length(bytes(key).length, bytes(value).length);
        long chainOffset = log.reserve(length); // the head's own lock: the store's would keep clients off the writers
        ObjectLayout.encode(log.slice(chainOffset, length), 0, MemorySegment.ofArray(bytes(key)),
                MemorySegment.ofArray(bytes(value)), false);
        log.resolve(chainOffset).region().persist(log.resolve(chainOffset).offsetInRegion(), length);
        HopscotchTable table = store.directory().table();
        long lostBefore = client.lost();
        boolean updated = client.update(() -> {
            long[] found = new long[2];
            found[0] = table.lookup(k.hash(), (p, word, h) -> {
                found[1] = word;
                return true;
            });
            return found[0] < 0 ? null : found;
        }, LogAddress.unitsForBytes(chainOffset), new WordHistory(0));
        assertThat(updated).as("%s has an entry", key).isTrue();
        return client.lost() - lostBefore;
    }

    /**
     * Runs the clients, each updating its keys in turn, while {@code serverStep} runs again and again on this thread;
     * checks every value read back and returns how many client CASes lost and were retried.
     */
    private long raceClients(Runnable serverStep) throws Exception {
        List<String> keys = keys();
        for (String key : keys) {
            TestStores.put(store, key, "initial");
        }
        AtomicBoolean done = new AtomicBoolean();
        long[] lost = new long[CLIENTS];
        List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < CLIENTS; c++) {
            int id = c;
            List<String> own = keys.subList(c * KEYS_PER_CLIENT, (c + 1) * KEYS_PER_CLIENT);
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    CasClient client = new CasClient(store.directory().table(), "client" + id);
                    for (int i = 0; i < UPDATES_PER_KEY; i++) {
                        for (String key : own) {
                            String value = key + "=" + i;
                            lost[id] += oneSidedPut(client, key, value);
                            assertThat(TestStores.get(store, key)).as("newest complete value after the CAS").isEqualTo(value);
                        }
                    }
                } catch (Throwable t) {
                    failures.add(t);
                }
            }));
        }
        Thread server = Thread.ofPlatform().start(() -> {
            try {
                while (!done.get()) {
                    serverStep.run();
                }
            } catch (Throwable t) {
                failures.add(t);
            }
        });
        for (Thread t : threads) {
            t.join();
        }
        done.set(true);
        server.join();
        assertThat(failures).isEmpty();
        for (String key : keys) {
            assertThat(TestStores.get(store, key)).isEqualTo(key + "=" + (UPDATES_PER_KEY - 1));
        }
        return java.util.Arrays.stream(lost).sum();
    }

    private Store open() {
        store = TestStores.config(dir, "tcp", LEASE).openStore(new StoreStats());
        return store;
    }

    @Test
    void clientUpdatesAreNeverLostToReservationFlips() throws Exception {
        open();
        List<String> keys = keys();
        Random random = new Random(1);
        long lost = raceClients(() -> reserveOnly(store, keys.get(random.nextInt(keys.size()))));
        System.out.println("flips vs CAS clients: " + lost + " client CASes lost and retried");
    }

    @Test
    void clientUpdatesAreNeverLostToLeaseRollBacks() throws Exception {
        StoreStats stats = new StoreStats();
        store = TestStores.config(dir, "tcp", LEASE).openStore(stats);
        List<String> keys = keys();
        Random random = new Random(2);
        long lost = raceClients(() -> {
            for (int i = 0; i < 4; i++) {
                reserveOnly(store, keys.get(random.nextInt(keys.size())));
            }
            store.leases().settleExpired(System.nanoTime() + 2 * store.leaseNanos());
        });
        assertThat(stats.rollbacks.sum()).as("leases rolled back").isPositive();
        System.out.println("roll-backs vs CAS clients: " + stats.rollbacks.sum() + " roll-backs, " + lost
                + " client CASes lost and retried");
    }

    @Test
    void clientUpdatesAreNeverLostToRecovery() throws Exception {
        open();
        List<String> keys = keys();
        long[] summary = new long[1];
        long lost = raceClients(() -> {
            for (String key : keys) {
                reserveOnly(store, key);
            }
            summary[0] += new Recovery(store.directory()).run().rolledBack();
        });
        assertThat(summary[0]).as("entries recovery rolled back").isPositive();
        System.out.println("recovery vs CAS clients: " + summary[0] + " roll-backs, " + lost + " client CASes lost and retried");
    }

    @Test
    void clientUpdatesAreNeverLostToTheCleaner() throws Exception {
        open();
        CleaningHost host = new BareStoreCleaningHost(store) {
            @Override
            public void awaitSettled(int headId, long issuedBeforeNanos) throws InterruptedException {
                super.awaitSettled(headId, issuedBeforeNanos);
                while (updatesUnderWay.values().stream().anyMatch(started -> started - issuedBeforeNanos < 0)) {
                    Thread.onSpinWait(); // the updates begun before the switch have published their objects
                }
            }
        };
        LogCleaner cleaner = new LogCleaner(store.directory(), host, CleaningHook.NONE);
        int[] cleanings = new int[1];
        long lost = raceClients(() -> {
            try {
                cleaner.clean(cleanings[0]++ % store.directory().heads().size());
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        assertThat(cleanings[0]).as("cleanings").isPositive();
        System.out.println("cleaner vs CAS clients: " + cleanings[0] + " cleanings, " + lost + " client CASes lost and retried");
    }
}
