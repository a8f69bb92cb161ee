package io.erda.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.cleaner.CleaningPoint;
import io.erda.protocol.PutMode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The real server process dies (halt, as kill -9: no shutdown hooks) at every point of a cleaning run an operator
 * started with CLEAN, every phase boundary and the middle of every phase, while a client goes on PUTting. After a
 * restart (which rolls the interrupted run forward) every durable PUT reads back, the head cleans again, and
 * {@code erda-server verify} finds the store clean. Over tcp, or verbs when the run selects it
 * ({@link TestFabric#network()}): the fabrics where a stale rkey breaks a connection.
 */
class CleaningCrashOverNetworkTest {
    private static final int KEYS = 40;
    private static final int VERSIONS = 4;

    @ParameterizedTest
    @EnumSource(CleaningPoint.class)
    void serverKilledAtCleaningPointRestartsWithEveryDurablePut(CleaningPoint point) throws Exception {
        Path dir = ServerProcess.newStoreDir("clean-crash-" + point.name().toLowerCase());
        String[] args = new ServerArgs().heads(1).capacity(1 << 10).regionSize(64 << 10).segmentSize(16 << 10)
                .lease(java.time.Duration.ofMillis(200)).toArray();
        Map<String, Long> acked = new ConcurrentHashMap<>();
        try {
            try (ServerProcess server = ServerProcess.start(dir, TestFabric.network(), Map.of("ERDA_CLEANER_HALT_AT", point.name()), args);
                 ErdaClient client = ErdaClient.connect(ClientOptions.of(server.uri()));
                 ErdaClient admin = ErdaClient.connect(ClientOptions.of(server.uri()))) {
                for (long seq = 1; seq <= VERSIONS; seq++) {
                    for (int k = 0; k < KEYS; k++) {
                        put(client, "key-" + k, seq, acked);
                    }
                }
                AtomicLong live = new AtomicLong();
                Thread writer = Thread.ofPlatform().start(() -> {
                    try {
                        for (long seq = 1; ; seq++) { // until the server dies under it
                            put(client, "live-" + seq % KEYS, seq, acked);
                            live.set(seq);
                        }
                    } catch (RuntimeException serverGone) {
                        // the PUT in flight is not durable: its key may read as this seq or the one before
                    }
                });
                assertThatThrownBy(() -> admin.clean(0)).as("CLEAN of a server halting at " + point)
                        .isInstanceOf(RuntimeException.class);
                assertThat(server.awaitExit(30)).as("exit code; log %s", server.log()).isEqualTo(137);
                writer.join();
                assertTheUpdatesTookTheModesPath(client);
            }
            try (ServerProcess server = ServerProcess.start(dir, TestFabric.network(), args);
                 ErdaClient client = ErdaClient.connect(ClientOptions.of(server.uri()))) {
                assertEveryDurablePutReadsBack(client, acked);
                client.clean(0); // after the roll-forward (one run at a time): the head cleans again
                assertEveryDurablePutReadsBack(client, acked);
            }
            ServerProcess.Result verify = ServerProcess.runTool("verify", dir);
            assertThat(verify.exitCode()).as("verify output:\n%s", verify.output()).isZero();
        } finally {
            ServerProcess.deleteStore(dir);
        }
    }

    /**
     * With -Derda.test.put=one-sided (erda-client's one-sided execution, scripts/test-softroce's store-one-sided-crash
     * group) the versions after each key's first were the client's own WRITE + CAS, whose blocks the halted run's
     * roll-forward and the next cleaning had to account for; otherwise each went through a reservation.
     */
    private static void assertTheUpdatesTookTheModesPath(ErdaClient client) {
        boolean oneSided = "one-sided".equals(System.getProperty(ServerArgs.PUT_PROPERTY));
        assertThat(client.storeInfo().putMode()).isEqualTo(oneSided ? PutMode.ONE_SIDED : PutMode.RESERVE);
        long updates = client.stats().get("one_sided_updates");
        if (oneSided) {
            assertThat(updates).as("one-sided updates before the halt").isGreaterThanOrEqualTo((VERSIONS - 1) * KEYS);
        } else {
            assertThat(updates).as("one-sided updates of a reserve-mode client").isZero();
        }
    }

    private static void put(ErdaClient client, String key, long seq, Map<String, Long> acked) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        client.put(k, CheckedValue.of(k, seq, 100 + (int) (seq % 200)));
        acked.put(key, seq);
    }

    /** A live key's PUT in flight at the crash may or may not have landed: the next writer's seq is KEYS later. */
    private static void assertEveryDurablePutReadsBack(ErdaClient client, Map<String, Long> acked) {
        for (Map.Entry<String, Long> e : acked.entrySet()) {
            byte[] k = e.getKey().getBytes(StandardCharsets.UTF_8);
            long read = CheckedValue.sequence(k, client.get(k));
            if (e.getKey().startsWith("live-")) {
                assertThat(read).as(e.getKey()).isIn(e.getValue(), e.getValue() + KEYS);
            } else {
                assertThat(read).as(e.getKey()).isEqualTo(e.getValue());
            }
        }
    }
}
