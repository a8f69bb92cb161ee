package io.erda.server.store;

import io.erda.core.PmDirectory;
import io.erda.core.pm.WriteLatencyModel;
import io.erda.core.testing.ShmTempDirFactory;
import io.erda.protocol.memory.ObjectLayout;
import io.erda.server.ServerConfig;
import io.erda.server.TestStores;
import io.erda.server.offline.StoreVerifier;
import io.erda.server.offline.TableRebuilder;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static io.erda.server.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;

/** verify and rebuild on stopped stores. */
class OfflineCommandsTest {
    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private ServerConfig config() {
        return TestStores.config(dir, "tcp", Duration.ofSeconds(30));
    }

    @Test
    void verifyIsCleanOnAGoodStoreAndCountsUnreferencedTornAreas() {
        try (Store store = config().openStore(new StoreStats())) {
            TestStores.put(store, "a", "1");
            store.reserve(MemorySegment.ofArray(bytes("a")), 7, false); // never written
            TestStores.put(store, "b", "2");
            TestStores.put(store, "a", "3");
            store.leases().settleExpired(System.nanoTime() + 2 * store.leaseNanos());
        }
        StoreVerifier.Report report = StoreVerifier.verify(config().directory());
        assertThat(report.clean()).as(report.toString()).isTrue();
        assertThat(report.entries()).isEqualTo(2);
        assertThat(report.objects()).isEqualTo(3);
        assertThat(report.tornAreas()).isEqualTo(1);
        assertThat(report.tornBytes()).isEqualTo(ObjectLayout.length(1, 7));
    }

    @Test
    void verifyReportsACorruptedReferencedObject() {
        Store.Reserved r;
        try (Store store = config().openStore(new StoreStats())) {
            r = TestStores.put(store, "victim", "value");
            TestStores.put(store, "bystander", "value");
        }
        try (PmDirectory store = PmDirectory.open(config().directory(), PmDirectory.storedGeometry(config().directory()),
                WriteLatencyModel.OFF)) {
            MemorySegment object = store.head(r.head()).slice(r.chainOffset(), r.objectLength());
            long at = ObjectLayout.HEADER_LENGTH + 2;
            object.set(ValueLayout.JAVA_BYTE, at, (byte) (object.get(ValueLayout.JAVA_BYTE, at) ^ 0x40));
        }
        StoreVerifier.Report report = StoreVerifier.verify(config().directory());
        assertThat(report.clean()).isFalse();
        assertThat(report.problems()).singleElement().asString().contains("BAD_CRC");
        assertThat(report.toString()).contains("1 problems");
    }

    @Test
    void rebuildRestoresLookupsFromTheLogs() {
        try (Store store = config().openStore(new StoreStats())) {
            TestStores.put(store, "a", "old");
            TestStores.put(store, "b", "gone");
            TestStores.put(store, "c", "kept");
            TestStores.put(store, "a", "new");
            Store.Reserved tomb = store.reserve(MemorySegment.ofArray(bytes("b")), 0, true);
            TestStores.writeObject(store, tomb, bytes("b"), new byte[0], true);
            store.directory().table().clearAll(); // the table is lost
            assertThat(TestStores.get(store, "a")).isNull();
        }
        TableRebuilder.Summary summary = TableRebuilder.rebuild(config().directory());
        assertThat(summary.keys()).isEqualTo(2);
        assertThat(summary.deleted()).isEqualTo(1);
        assertThat(summary.objects()).isEqualTo(5);
        try (Store store = config().openStore(new StoreStats())) {
            assertThat(store.recoverySummary().rolledBack()).isZero();
            assertThat(TestStores.get(store, "a")).isEqualTo("new");
            assertThat(TestStores.get(store, "b")).isNull();
            assertThat(TestStores.get(store, "c")).isEqualTo("kept");
            TestStores.put(store, "a", "newer");
            assertThat(TestStores.get(store, "a")).isEqualTo("newer");
        }
        assertThat(StoreVerifier.verify(config().directory()).clean()).isTrue();
    }
}
