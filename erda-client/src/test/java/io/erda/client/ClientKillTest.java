package io.erda.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.testsupport.ChildProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A client process dies in the middle of a one-sided update (docs/one-sided-put.md): erda-cli halts as kill -9 would
 * ({@code ERDA_CLIENT_HALT_AT}) after its object is written into its leased block and before the CAS, or after the
 * CAS and before it made the word durable and returned. The server is told nothing: the block stays leased to a dead
 * client. Then the store must go on as if the update had not begun (or had completed): every GET returns the last
 * acknowledged value or the dead client's published one, never anything older; another writer updates the key (its
 * cached word stale where the CAS landed, so its own CAS is lost once and retried); a cleaning finishes (it waits out
 * the dead client's lease at most) and carries every value over; and after a kill -9 of the server and a restart,
 * every acknowledged PUT reads back and the offline verify is clean.
 */
class ClientKillTest {
    private static final int KEYS = 20;

    static Stream<Arguments> fabricsAndPoints() {
        return TestFabric.selected().stream().flatMap(f -> Stream.of(OneSidedPut.OBJECT_WRITTEN, OneSidedPut.WORD_PUBLISHED)
                .map(point -> Arguments.of(f, point)));
    }

    @ParameterizedTest
    @MethodSource("fabricsAndPoints")
    void aClientKilledMidUpdateLosesNothingAcknowledgedAndHoldsNothingUp(TestFabric fabric, String point) throws Exception {
        Path dir = ServerProcess.newStoreDir("client-kill-" + point + "-" + fabric.name().toLowerCase());
        String[] args = new ServerArgs().put("one-sided").heads(1).capacity(1 << 10).regionSize(256 << 10)
                .segmentSize(64 << 10).blockSize(16 << 10).lease(Duration.ofMillis(500)).toArray();
        try {
            try (ServerProcess server = ServerProcess.start(dir, fabric, args);
                 ErdaClient writer = ErdaClient.connect(ClientOptions.of(server.uri()).withPoolSize(1))) {
                for (int version = 1; version <= 2; version++) {
                    for (int k = 0; k < KEYS; k++) {
                        writer.put(key(k), value(k, version));
                    }
                }
                assertThat(writer.stats().get("one_sided_updates")).as("the second versions' updates").isEqualTo(KEYS);

                ChildProcess cli = ChildProcess.java("io.erda.client.cli.ErdaCli").name("erda-cli")
                        .env(Map.of(OneSidedPut.HALT_AT, point)).args(server.uri().toString(), "put", "key-0", "dead-3")
                        .log(ServerProcess.logFile(dir.getFileName() + "-cli")).logCommand(true).start();
                assertThat(cli.awaitExit(Duration.ofSeconds(120))).as("erda-cli's exit; its output:\n%s", cli.logText())
                        .isEqualTo(137);
                assertThat(cli.logText()).contains("halting at " + point);

                try (ErdaClient reader = ErdaClient.connect(ClientOptions.of(server.uri()))) {
                    // its object was written either way; only the CAS publishes it, acknowledged or not
                    assertThat(str(reader.get(key(0)))).isEqualTo(point.equals(OneSidedPut.OBJECT_WRITTEN)
                            ? "value-0-2" : "dead-3");
                    long retriesBefore = writer.stats().get("cas_retries");
                    writer.put(key(0), value(0, 4));
                    assertThat(str(reader.get(key(0)))).isEqualTo("value-0-4");
                    if (point.equals(OneSidedPut.WORD_PUBLISHED)) {
                        assertThat(writer.stats().get("cas_retries")).as("the writer's cached word was the one the dead"
                                + " client's CAS replaced").isGreaterThan(retriesBefore);
                    }
                    writer.clean(0); // waits for the dead client's block until its lease ends, no longer
                    assertAcknowledgedValues(reader);
                }
                server.kill();
            }
            try (ServerProcess restarted = ServerProcess.start(dir, fabric, args);
                 ErdaClient reader = ErdaClient.connect(ClientOptions.of(restarted.uri()))) {
                assertAcknowledgedValues(reader);
            }
            ServerProcess.Result verify = ServerProcess.runTool("verify", dir);
            assertThat(verify.exitCode()).as("verify output:\n%s", verify.output()).isZero();
        } finally {
            ServerProcess.deleteStore(dir);
        }
    }

    private static void assertAcknowledgedValues(ErdaClient reader) {
        for (int k = 0; k < KEYS; k++) {
            assertThat(str(reader.get(key(k)))).as("key-%d", k).isEqualTo(k == 0 ? "value-0-4" : "value-" + k + "-2");
        }
    }

    private static byte[] key(int k) {
        return ("key-" + k).getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] value(int k, int version) {
        return ("value-" + k + "-" + version).getBytes(StandardCharsets.UTF_8);
    }

    private static String str(byte[] bytes) {
        assertThat(bytes).isNotNull();
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** An unknown point is refused naming the two, rather than never halting. */
    @org.junit.jupiter.api.Test
    void anUnknownHaltPointIsRefusedNamingTheChoices() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> OneSidedPut.haltPoint("before-cas"))
                .hasMessageContaining("'before-cas' is not one of object-written, word-published");
        assertThat(OneSidedPut.haltPoint(null)).isNull();
        assertThat(List.of(OneSidedPut.haltPoint(OneSidedPut.OBJECT_WRITTEN))).containsExactly("object-written");
    }
}
