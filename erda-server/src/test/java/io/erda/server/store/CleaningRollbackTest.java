package io.erda.server.store;

import io.erda.cleaner.CleaningHook;
import io.erda.cleaner.CleaningPoint;
import io.erda.cleaner.LogCleaner;
import io.erda.core.log.CleaningPhase;
import io.erda.core.log.LogChain;
import io.erda.core.testing.ShmTempDirFactory;
import io.erda.protocol.memory.AtomicWord;
import io.erda.protocol.memory.Key;
import io.erda.protocol.memory.KeyHash;
import io.erda.protocol.memory.LogAddress;
import io.erda.server.ServerConfig;
import io.erda.server.TestStores;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static io.erda.server.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Lease rollbacks against the log cleaner's commit point (docs/ARCHITECTURE.md, [leases] and the cleaning's
 * switch): a store, the real cleaner, and a host whose lease validator runs exactly when the cleaner waits for
 * reservations to settle, so the interleavings are the test's, not the scheduler's.
 */
class CleaningRollbackTest {
    private static final Duration LEASE = Duration.ofSeconds(30);

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    /** The process dies: thrown by the host where the test cuts the run. */
    private static final class Crash extends RuntimeException {
        Crash(String where) {
            super("simulated crash " + where, null, false, false);
        }
    }

    /**
     * The server's side of cleaning over a bare store: no fabric, and {@link #awaitSettled} settles, as the validator
     * would once their leases ran out, exactly the reservations issued before the time the cleaner waits for. Once
     * the head's record says RETIRE, the process crashes right after that settlement, and what every entry of the
     * head named at that instant is kept.
     */
    private static final class Host extends BareStoreCleaningHost {
        final StoreStats stats;
        LogChain old;
        final List<Long> wordsAtCrash = new ArrayList<>();

        Host(Store store, StoreStats stats) {
            super(store);
            this.stats = stats;
        }

        @Override
        public void awaitSettled(int headId, long issuedBeforeNanos) {
            store.leases().settleExpired(issuedBeforeNanos + store.leaseNanos());
            assertThat(store.leases().settledBefore(headId, issuedBeforeNanos)).as("settled before the cleaner goes on")
                    .isTrue();
            if (store.directory().headRecords().phase(headId) == CleaningPhase.RETIRE) {
                store.directory().table().forEach((position, word, fingerprint, h) -> {
                    if (h == headId) {
                        wordsAtCrash.add(word);
                    }
                });
                throw new Crash("after the settlement that followed the commit point");
            }
        }
    }

    private static Store.Reserved reserveOnly(Store store, String key) {
        return store.reserve(MemorySegment.ofArray(bytes(key)), 5, false);
    }

    private static boolean names(LogChain chain, long units) {
        return units != AtomicWord.NONE && chain.contains(LogAddress.bytesForUnits(units));
    }

    /**
     * Two PUTs of a key, neither ever written, straddle the switch: the first reserved once writes went to the new
     * chain while the entry still named the old chain's version (its word before the flip does), the second before
     * the switch's pass (the entry then names the first's slot and its own, both in the new chain). Rolled back, the
     * entry returns to the old chain's version. Committed with that rollback still to come, the entry would name the
     * old chain after the commit point, and a crash then leaves it on a chain the restart deletes.
     */
    @Test
    void noRollbackReturnsAnEntryToTheOldChainAfterTheCommitPoint() throws Exception {
        Host host = cleanAcrossTwoTornPuts(store -> { });
        assertThat(host.stats.rollbacks.sum()).as("the key was rolled back").isEqualTo(1);
    }

    /**
     * As above, but the lease validator settles the key halfway through the switch's pass, after the chunk that holds
     * its entry: the entry returns to the old chain behind the pass, and the reservations that could tell are gone.
     */
    @Test
    void aRollbackBehindTheSwitchPassIsCaughtBeforeTheCommitPoint() throws Exception {
        Host host = cleanAcrossTwoTornPuts(store -> {
            long rollbacks = store.leases().rollbacks(head(KEY));
            store.leases().settleExpired(System.nanoTime() + 2 * store.leaseNanos());
            assertThat(store.leases().rollbacks(head(KEY))).as("rolled back halfway").isEqualTo(rollbacks + 1);
        });
        assertThat(host.stats.rollbacks.sum()).isEqualTo(1);
    }

    /**
     * The key the tests write: the first whose home bucket lies in the table's first half, so that the switch's first
     * pass has been over its entry when it reaches {@link CleaningPoint#SWITCH_MIDWAY}, whatever its chunk size.
     */
    private static final String KEY = java.util.stream.IntStream.range(0, 1000).mapToObj(i -> "k" + i)
            .filter(k -> KeyHash.homeBucket(KeyHash.hash(bytes(k)), TestStores.CAPACITY) < TestStores.CAPACITY / 2)
            .findFirst().orElseThrow();

    private static int head(String key) {
        return Key.copyOf(MemorySegment.ofArray(bytes(key))).head(TestStores.HEADS);
    }

    private Host cleanAcrossTwoTornPuts(java.util.function.Consumer<Store> switchMidway) throws Exception {
        ServerConfig config = TestStores.config(dir, "tcp", LEASE);
        int head = head(KEY);
        StoreStats stats = new StoreStats();
        Host host;
        try (Store store = config.openStore(stats)) {
            assertThat(store.directory().table().geometry().capacity()).as("the capacity KEY was chosen for")
                    .isEqualTo(TestStores.CAPACITY);
            TestStores.put(store, KEY, "durable");
            store.leases().settleExpired(System.nanoTime() + 2 * store.leaseNanos()); // complete: its record goes
            host = new Host(store, stats);
            CleaningHook hook = (h, point) -> {
                switch (point) {
                    case REPLICATE_STARTED -> reserveOnly(store, KEY);
                    case SWITCH_STARTED -> {
                        host.old = store.directory().head(head).currentChain();
                        reserveOnly(store, KEY);
                    }
                    case SWITCH_MIDWAY -> switchMidway.accept(store);
                    default -> { }
                }
            };
            LogCleaner cleaner = new LogCleaner(store.directory(), host, hook);
            assertThatThrownBy(() -> cleaner.clean(head)).isInstanceOf(Crash.class);
        }
        assertThat(host.wordsAtCrash).hasSize(1);
        long word = host.wordsAtCrash.getFirst();
        assertThat(names(host.old, AtomicWord.current(word)) || names(host.old, AtomicWord.previous(word)))
                .as("entry %x names the old chain %s after the commit point", word, host.old).isFalse();
        try (Store reopened = config.openStore(new StoreStats())) {
            assertThat(reopened.directory().headRecords().phase(head)).isEqualTo(CleaningPhase.IDLE);
            assertThat(TestStores.get(reopened, KEY)).as("the durable version after the restart").isEqualTo("durable");
        }
        return host;
    }
}
