package io.erda.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.fabric.FaultInjectingEndpoint;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Torn client WRITEs (fabric fault injection, paper §4.2, docs/ARCHITECTURE.md, [leases] and
 * [last-complete-version]): readers fall back to the previous version, the server rolls dead writers back after
 * their lease, never a live one inside it, and two torn writers of one key still leave the older complete version
 * readable.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TornWriteTest {
    private static final Duration LEASE = Duration.ofSeconds(1);
    private final Servers servers = new Servers("torn", ServerArgs.small().lease(LEASE));

    @AfterAll
    void stopServers() {
        servers.close();
    }

    /** A client on one connection whose endpoint injects faults. */
    private record FaultyClient(ErdaClient client, FaultInjectingEndpoint endpoint) implements AutoCloseable {
        @Override
        public void close() {
            client.close();
        }
    }

    /** Whether the suite's server publishes updates by the client's CAS (-Derda.test.put=one-sided). */
    private static boolean oneSided(FaultyClient client) {
        return client.client().storeInfo().putMode() == io.erda.protocol.PutMode.ONE_SIDED;
    }

    private FaultyClient faulty(TestFabric fabric) {
        CopyOnWriteArrayList<FaultInjectingEndpoint> endpoints = new CopyOnWriteArrayList<>();
        ClientOptions options = ClientOptions.of(servers.get(fabric).uri()).withPoolSize(1).withEndpointDecorator(e -> {
            FaultInjectingEndpoint f = new FaultInjectingEndpoint(e);
            endpoints.add(f);
            return f;
        });
        ErdaClient client = ErdaClient.connect(options);
        return new FaultyClient(client, endpoints.getFirst());
    }

    private ErdaClient reader(TestFabric fabric, Duration retryBudget) {
        return ErdaClient.connect(ClientOptions.of(servers.get(fabric).uri()).withReadRetryBudget(retryBudget));
    }

    private static byte[] key(String name, TestFabric fabric) {
        return (name + "-" + fabric).getBytes(StandardCharsets.UTF_8);
    }

    private static long sequence(byte[] key, byte[] value) {
        assertThat(value).as("value of %s", CheckedValue.str(key)).isNotNull();
        return CheckedValue.sequence(key, value);
    }

    @ParameterizedTest
    @MethodSource("io.erda.client.TestFabric#selected")
    void getReturnsPreviousVersionWhenNewestWriteIsTruncated(TestFabric fabric) {
        byte[] key = key("truncated", fabric);
        try (FaultyClient writer = faulty(fabric); ErdaClient reader = reader(fabric, null)) {
            writer.client().put(key, CheckedValue.of(key, 1, 300));
            writer.endpoint().truncateNextWrite(100);
            writer.client().put(key, CheckedValue.of(key, 2, 300));
            assertThat(writer.endpoint().armedFaults()).isZero();
            for (int i = 0; i < 20; i++) {
                assertThat(sequence(key, reader.get(key))).isEqualTo(1);
            }
        }
    }

    /**
     * A PUT whose connection breaks while its WRITE is being posted may or may not have taken effect: the client must
     * say so ({@link WriteOutcomeUnknownException}) rather than PUT it again on a fresh connection, since a second
     * PUT of the value could land after another client's write of the key and take effect twice.
     */
    @ParameterizedTest
    @MethodSource("io.erda.client.TestFabric#selected")
    void aPutWhoseConnectionBreaksDuringItsWriteSaysItsOutcomeIsUnknownAndIsNotTriedAgain(TestFabric fabric) {
        byte[] key = key("outcome-unknown", fabric);
        try (FaultyClient writer = faulty(fabric); ErdaClient reader = reader(fabric, null)) {
            writer.client().put(key, CheckedValue.of(key, 1, 300));
            writer.endpoint().breakConnectionAtNextWrite(); // after the reservation, whatever it took
            if (oneSided(writer)) {
                // the WRITE broke before the CAS that would publish it: nothing took effect, so the PUT is retried on
                // a fresh connection and succeeds
                writer.client().put(key, CheckedValue.of(key, 2, 300));
                assertThat(writer.client().stats().get("reconnects")).isEqualTo(1);
                assertThat(sequence(key, reader.get(key))).isEqualTo(2);
                return;
            }
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> writer.client().put(key, CheckedValue.of(key, 2, 300)))
                    .isInstanceOf(WriteOutcomeUnknownException.class).hasMessageContaining("may have taken effect");
            assertThat(writer.endpoint().armedFaults()).as("the break met the PUT's WRITE").isZero();
            assertThat(sequence(key, reader.get(key))).as("the value is one of the two PUTs, whole").isIn(1L, 2L);
            writer.client().put(key, CheckedValue.of(key, 3, 300)); // the client goes on, on a fresh connection
            assertThat(sequence(key, reader.get(key))).isEqualTo(3);
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.client.TestFabric#selected")
    void getReturnsPreviousVersionWhenNewestWriteIsDropped(TestFabric fabric) {
        byte[] key = key("dropped", fabric);
        try (FaultyClient writer = faulty(fabric); ErdaClient reader = reader(fabric, null)) {
            writer.client().put(key, CheckedValue.of(key, 1, 40));
            writer.endpoint().dropNextWrite();
            writer.client().put(key, CheckedValue.of(key, 2, 40));
            assertThat(sequence(key, reader.get(key))).isEqualTo(1);
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.client.TestFabric#selected")
    void serverRollsATornVersionBackOnceItsLeaseExpired(TestFabric fabric) throws InterruptedException {
        byte[] key = key("rolled-back", fabric);
        try (FaultyClient writer = faulty(fabric); ErdaClient reader = reader(fabric, Duration.ZERO)) {
            writer.client().put(key, CheckedValue.of(key, 1, 64));
            writer.endpoint().truncateNextWrite(16);
            writer.client().put(key, CheckedValue.of(key, 2, 64));
            if (oneSided(writer)) {
                // no reservation to roll back: the torn object, published by CAS after a WRITE that completed
                // without landing whole, stays current until the next update, and every GET reads the previous one
                for (int i = 0; i < 10; i++) {
                    assertThat(sequence(key, reader.get(key))).isEqualTo(1);
                    Thread.sleep(LEASE.toMillis() / 10);
                }
                assertThat(reader.stats().get("previous_version_reads") + reader.stats().get("two_sided_gets"))
                        .isPositive();
                writer.client().put(key, CheckedValue.of(key, 3, 64));
                assertThat(sequence(key, reader.get(key))).isEqualTo(3);
                return;
            }
            // once rolled back, the entry's current version is the complete one: a GET needs no previous-version read
            long deadline = System.nanoTime() + LEASE.toNanos() * 10;
            boolean rolledBack = false;
            while (!rolledBack && System.nanoTime() < deadline) {
                long before = reader.stats().get("previous_version_reads") + reader.stats().get("two_sided_gets");
                assertThat(sequence(key, reader.get(key))).isEqualTo(1);
                rolledBack = reader.stats().get("previous_version_reads") + reader.stats().get("two_sided_gets") == before;
                Thread.sleep(50);
            }
            assertThat(rolledBack).as("entry rolled back to the complete version within 10 leases").isTrue();
            // and the key goes on: a new complete version supersedes it
            writer.client().put(key, CheckedValue.of(key, 3, 64));
            assertThat(sequence(key, reader.get(key))).isEqualTo(3);
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.client.TestFabric#selected")
    void slowButLiveWriterInsideItsLeaseIsNotRolledBack(TestFabric fabric) throws Exception {
        byte[] key = key("slow", fabric);
        try (FaultyClient writer = faulty(fabric); ErdaClient reader = reader(fabric, Duration.ZERO)) {
            writer.client().put(key, CheckedValue.of(key, 1, 64));
            writer.endpoint().delayNextWrite(LEASE.dividedBy(2));
            CompletableFuture<Void> put = CompletableFuture.runAsync(() -> writer.client().put(key, CheckedValue.of(key, 2, 64)));
            while (!put.isDone()) {
                assertThat(sequence(key, reader.get(key))).isBetween(1L, 2L);
                Thread.sleep(20);
            }
            put.get(10, TimeUnit.SECONDS);
            Thread.sleep(LEASE.toMillis() * 2); // well past the lease: the validator has looked at it
            assertThat(sequence(key, reader.get(key))).isEqualTo(2);
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.client.TestFabric#selected")
    void putThatOutlivesItsLeaseEndsUpCurrent(TestFabric fabric) {
        byte[] key = key("outlived", fabric);
        try (FaultyClient writer = faulty(fabric); ErdaClient reader = reader(fabric, null)) {
            writer.client().put(key, CheckedValue.of(key, 1, 64));
            writer.endpoint().delayNextWrite(LEASE.multipliedBy(3).dividedBy(2));
            writer.client().put(key, CheckedValue.of(key, 2, 64));
            // reserve: the entry is confirmed after the lease; one-sided: the object, late for its block's lease, is
            // not published, and is written again into a new block
            assertThat(writer.client().stats().get(oneSided(writer) ? "blocks_leased" : "lease_confirmations"))
                    .isGreaterThanOrEqualTo(oneSided(writer) ? 2 : 1);
            assertThat(sequence(key, reader.get(key))).isEqualTo(2);
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.client.TestFabric#selected")
    void aReadAfterWritePutThatOutlivesItsSlotsLeaseIsWrittenAgainAndApplied(TestFabric fabric) {
        byte[] key = key("raw-outlived", fabric);
        CopyOnWriteArrayList<FaultInjectingEndpoint> endpoints = new CopyOnWriteArrayList<>();
        ClientOptions options = ClientOptions.of(servers.get(fabric).uri()).withPoolSize(1)
                .withProtocol(ClientOptions.Protocol.READ_AFTER_WRITE).withEndpointDecorator(e -> {
                    FaultInjectingEndpoint f = new FaultInjectingEndpoint(e);
                    endpoints.add(f);
                    return f;
                });
        try (ReadAfterWriteClient writer = ReadAfterWriteClient.connect(options); ErdaClient reader = reader(fabric, null)) {
            writer.put(key, CheckedValue.of(key, 1, 64));
            assertThat(writer.stats().get("put_retries")).isZero();
            // the slot's WRITE lands after the poller recycled the slot unapplied: the PUT must take a new slot
            endpoints.getFirst().delayNextWrite(LEASE.multipliedBy(3).dividedBy(2));
            writer.put(key, CheckedValue.of(key, 2, 64));
            assertThat(endpoints.getFirst().armedFaults()).isZero();
            assertThat(writer.stats().get("put_retries")).isEqualTo(1);
            assertThat(sequence(key, writer.get(key))).isEqualTo(2);
            long giveUp = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (sequence(key, reader.get(key)) != 2) { // the Erda client reads the table, once the poller applied it
                assertThat(System.nanoTime() - giveUp).as("the rewritten slot was never applied").isNegative();
                Thread.onSpinWait();
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.client.TestFabric#selected")
    void twoTornWritersOfOneKeyLeaveTheOlderCompleteVersionReadable(TestFabric fabric) {
        byte[] key = key("two-torn", fabric);
        try (FaultyClient a = faulty(fabric); FaultyClient b = faulty(fabric);
             ErdaClient twoSided = reader(fabric, Duration.ZERO); ErdaClient patient = reader(fabric, null)) {
            a.client().put(key, CheckedValue.of(key, 1, 200));
            a.endpoint().truncateNextWrite(60);
            b.endpoint().dropNextWrite();
            a.client().put(key, CheckedValue.of(key, 2, 200));
            b.client().put(key, CheckedValue.of(key, 3, 200));
            // current and previous are both incomplete: the server (two-sided) or the rolled-back entry has version 1
            assertThat(sequence(key, twoSided.get(key))).isEqualTo(1);
            assertThat(sequence(key, patient.get(key))).isEqualTo(1);
        }
    }
}
