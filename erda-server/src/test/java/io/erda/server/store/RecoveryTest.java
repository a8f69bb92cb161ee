package io.erda.server.store;

import io.erda.core.testing.ShmTempDirFactory;

import static io.erda.server.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.core.pm.PmFormatException;
import io.erda.server.ServerConfig;
import io.erda.server.TestStores;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Restart recovery (docs/ARCHITECTURE.md, [recovery]): a store closed with reservations pending, as after a crash,
 * reopens consistent.
 */
class RecoveryTest {
    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private ServerConfig config() {
        return TestStores.config(dir, "tcp", Duration.ofSeconds(30));
    }

    private static void reserveOnly(Store store, String key) {
        store.reserve(MemorySegment.ofArray(bytes(key)), 5, false);
    }

    @Test
    void reopenRollsBackATornNewestVersion() {
        try (Store store = config().openStore(new StoreStats())) {
            TestStores.put(store, "k", "one");
            TestStores.put(store, "other", "x");
            reserveOnly(store, "k");
        }
        try (Store store = config().openStore(new StoreStats())) {
            assertThat(store.recoverySummary()).isEqualTo(new Recovery.Summary(2, 1, 0));
            assertThat(TestStores.get(store, "k")).isEqualTo("one");
            assertThat(TestStores.get(store, "other")).isEqualTo("x");
        }
    }

    @Test
    void reopenFindsTheOlderVersionInTheLogWhenBothSlotsAreTorn() {
        try (Store store = config().openStore(new StoreStats())) {
            TestStores.put(store, "k", "one");
            reserveOnly(store, "k");
            reserveOnly(store, "k");
        }
        try (Store store = config().openStore(new StoreStats())) {
            assertThat(store.recoverySummary()).isEqualTo(new Recovery.Summary(1, 1, 0));
            assertThat(TestStores.get(store, "k")).isEqualTo("one");
        }
    }

    @Test
    void reopenRemovesAKeyThatNeverHadACompleteVersion() {
        try (Store store = config().openStore(new StoreStats())) {
            reserveOnly(store, "ghost");
        }
        try (Store store = config().openStore(new StoreStats())) {
            assertThat(store.recoverySummary()).isEqualTo(new Recovery.Summary(1, 0, 1));
            assertThat(store.keys()).isZero();
        }
    }

    @Test
    void reopenedStoreNeverReservesOverOldObjects() {
        Store.Reserved before;
        try (Store store = config().openStore(new StoreStats())) {
            before = TestStores.put(store, "k", "one");
        }
        try (Store store = config().openStore(new StoreStats())) {
            Store.Reserved after = TestStores.put(store, "k2", "two");
            assertThat(after.head() != before.head() || after.chainOffset() >= before.chainOffset() + before.objectLength())
                    .isTrue();
            assertThat(TestStores.get(store, "k")).isEqualTo("one");
            assertThat(TestStores.get(store, "k2")).isEqualTo("two");
        }
    }

    @Test
    void reopeningWithAnotherGeometryIsRefusedNamingBoth() {
        try (Store store = config().openStore(new StoreStats())) {
            TestStores.put(store, "k", "one");
        }
        ServerConfig otherHeads = config().withGeometry(4, TestStores.CAPACITY, TestStores.REGION, TestStores.SEGMENT);
        assertThatThrownBy(() -> otherHeads.openStore(new StoreStats())).isInstanceOf(PmFormatException.class)
                .hasMessageContaining("head count 2, expected 4");
        ServerConfig otherCapacity = config().withGeometry(TestStores.HEADS, 4096, TestStores.REGION, TestStores.SEGMENT);
        assertThatThrownBy(() -> otherCapacity.openStore(new StoreStats())).isInstanceOf(PmFormatException.class)
                .hasMessageContaining("table geometry");
        try (Store store = config().openStore(new StoreStats())) {
            assertThat(TestStores.get(store, "k")).isEqualTo("one");
        }
    }
}
