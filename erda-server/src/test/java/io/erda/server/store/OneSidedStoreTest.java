package io.erda.server.store;

import static io.erda.server.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.core.testing.ShmTempDirFactory;
import io.erda.protocol.PersistenceMethod;
import io.erda.protocol.PutMode;
import io.erda.protocol.WireStatus;
import io.erda.server.ServerConfig;
import io.erda.server.TestStores;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The store's side of one-sided mode (docs/one-sided-put.md): blocks, their leases and give-backs, the refusals. */
class OneSidedStoreTest {
    private static final Duration LEASE = Duration.ofMillis(400);

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private Store store;

    @AfterEach
    void close() {
        if (store != null) {
            store.close();
        }
    }

    private Store open(boolean oneSided) {
        store = TestStores.config(dir, "tcp", LEASE).openStore(new StoreStats());
        if (oneSided) {
            store.useOneSidedPuts(16 << 10);
        }
        return store;
    }

    @Test
    void aReserveModeStoreGrantsNoBlockAndFlipsExistingKeys() {
        Store s = open(false);
        assertThat(s.oneSided()).isFalse();
        assertThatThrownBy(() -> s.grantBlock(0, 64)).isInstanceOfSatisfying(RequestException.class,
                e -> assertThat(e.status()).isEqualTo(WireStatus.UNSUPPORTED)).hasMessageContaining("--put one-sided");
        TestStores.put(s, "k", "v1");
        TestStores.put(s, "k", "v2"); // the paper's flip
        assertThat(TestStores.get(s, "k")).isEqualTo("v2");
    }

    @Test
    void aOneSidedStoreInsertsAbsentKeysButRefusesToFlipAnExistingOne() {
        Store s = open(true);
        TestStores.put(s, "k", "v1");
        MemorySegment key = MemorySegment.ofArray(bytes("k"));
        assertThatThrownBy(() -> s.reserve(key, 10, false)).isInstanceOfSatisfying(RequestException.class,
                e -> assertThat(e.status()).isEqualTo(WireStatus.PUBLISH_BY_CAS)).hasMessageContaining("PUT of a key");
        assertThatThrownBy(() -> s.reserve(key, 0, true)).isInstanceOfSatisfying(RequestException.class,
                e -> assertThat(e.status()).isEqualTo(WireStatus.PUBLISH_BY_CAS)).hasMessageContaining("DELETE");
        assertThat(TestStores.get(s, "k")).isEqualTo("v1");
    }

    @Test
    void blocksAreReservedAtTheTailOneAfterAnotherAndALargerObjectGetsABlockOfItsOwn() {
        Store s = open(true);
        Store.Reserved a = s.grantBlock(1, 64);
        Store.Reserved b = s.grantBlock(1, 64);
        assertThat(a.objectLength()).isEqualTo(16 << 10);
        assertThat(b.chainOffset()).isGreaterThanOrEqualTo(a.chainOffset() + a.objectLength());
        Store.Reserved big = s.grantBlock(1, 40_000);
        assertThat(big.objectLength()).isEqualTo(40_000);
        // the reservation is part of the log: a later reservation lies after it
        assertThat(s.directory().head(1).tail()).isGreaterThanOrEqualTo(big.chainOffset() + big.objectLength());
        assertThatThrownBy(() -> s.grantBlock(1, TestStores.SEGMENT)).isInstanceOfSatisfying(RequestException.class,
                e -> assertThat(e.status()).isEqualTo(WireStatus.VALUE_TOO_LARGE)).hasMessageContaining("segment limit");
        assertThatThrownBy(() -> s.grantBlock(TestStores.HEADS, 64)).isInstanceOfSatisfying(RequestException.class,
                e -> assertThat(e.status()).isEqualTo(WireStatus.UNKNOWN_ADDRESS));
    }

    /**
     * A cleaning's wait drops the records it finds complete, as the validator does at their deadline: the run may then
     * retire the region such a record names, and a later run would otherwise find the slot freed or reused and wait for
     * the record as for an unwritten PUT until its deadline. In one-sided mode an insert's record stays its key's
     * newest for its whole lease (updates make none): CleaningOverNetworkTest's cleanings waited up to 0.9 s so.
     */
    @Test
    void aCleaningsWaitDropsTheRecordsItFindsCompleteAndKeepsTheOthers() {
        Store s = open(true);
        Store.Reserved written = TestStores.put(s, "written", "v1");
        Store.Reserved unwritten = s.reserve(MemorySegment.ofArray(bytes("unwritten")), 2, false);
        assertThat(s.pendingKeys()).isEqualTo(2);
        long now = System.nanoTime();
        boolean writtenHead = s.leases().settledBefore(written.head(), now);
        boolean unwrittenHead = s.leases().settledBefore(unwritten.head(), now);
        assertThat(unwrittenHead).as("an insert not written yet is not settled").isFalse();
        assertThat(writtenHead).isEqualTo(written.head() != unwritten.head());
        assertThat(s.pendingKeys()).as("the written insert's record dropped, the other kept").isEqualTo(1);
        TestStores.writeObject(s, unwritten, bytes("unwritten"), bytes("v1"), false);
        assertThat(s.leases().settledBefore(unwritten.head(), System.nanoTime())).isTrue();
        assertThat(s.pendingKeys()).isZero();
    }

    @Test
    void theCleanersWaitEndsAtTheLastLeaseOfTheHeadsBlocksOrWhenTheyAreGivenBack() throws InterruptedException {
        Store s = open(true);
        assertThat(s.blocksWaitNanos(0, System.nanoTime())).as("no block: no wait").isZero();
        Store.Reserved a = s.grantBlock(0, 64);
        Store.Reserved other = s.grantBlock(1, 64);
        long granted = System.nanoTime();
        // blocks of the write chain itself need no wait: only those of a chain a cleaning retires
        assertThat(s.blocksWaitNanos(0, granted)).isZero();
        s.directory().head(0).beginNewChain();
        s.directory().head(0).redirectWritesToNewChain();
        assertThat(s.blocksWaitNanos(0, granted)).isBetween(LEASE.toNanos() / 2, LEASE.toNanos());
        assertThat(s.liveBlocks()).isEqualTo(2);
        s.returnBlock(0, a.chainOffset());
        assertThat(s.blocksWaitNanos(0, granted)).as("given back").isZero();
        assertThat(s.liveBlocks()).isEqualTo(1);
        s.returnBlock(0, a.chainOffset()); // again: no error
        Thread.sleep(LEASE.toMillis() + 50);
        assertThat(s.liveBlocks()).as("the other head's block's lease ran out").isZero();
        assertThat(other.head()).isEqualTo(1);
    }

    @Test
    void theModeIsRefusedWithServerFlushNamingWhy() {
        assertThatThrownBy(() -> TestStores.config(dir, "tcp", LEASE).toBuilder().put(PutMode.ONE_SIDED)
                .persistence(PersistenceMethod.SERVER_FLUSH).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--put one-sided needs --persistence wsp or read-after-write");
        assertThatThrownBy(() -> TestStores.config(dir, "tcp", LEASE).toBuilder().blockSize(12).build())
                .hasMessageContaining("block size 12 is not a positive multiple of 8");
        ServerConfig ok = TestStores.config(dir, "tcp", LEASE).toBuilder().put(PutMode.ONE_SIDED).build();
        assertThat(ok.blockSize()).isEqualTo(ServerConfig.DEFAULT_BLOCK_SIZE);
    }
}
