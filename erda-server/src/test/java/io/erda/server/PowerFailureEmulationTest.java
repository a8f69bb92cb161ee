package io.erda.server;

import static io.erda.server.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.core.pm.PowerFailure;
import io.erda.core.testing.ShmTempDirFactory;
import io.erda.protocol.ConnectData;
import io.erda.protocol.PersistenceMethod;
import io.erda.protocol.PutReply;
import io.erda.protocol.WireStatus;
import io.erda.server.offline.StoreVerifier;
import io.erda.server.platform.PmEmulation;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Power-failure emulation with a client speaking the raw protocol (docs/ARCHITECTURE.md, [persistence]): the server
 * is stopped (as if killed: closing persists nothing more), the store collapsed, the server restarted on it, each
 * method in the configuration it is made for (PmConfigurationsPowerFailureTest takes all 12). What the persistence
 * method made durable survives every collapse; what was written but not made durable may vanish but
 * never reads back torn; and a client that skips its FLUSH under server-flush loses acknowledged writes to a
 * collapse that drops them, which shows the emulation catches a missing persist.
 */
class PowerFailureEmulationTest {
    private static final int KEYS = 60;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private RequestServer server;

    static Stream<String> schemes() {
        return TestStores.schemes().stream().filter(s -> !s.equals("verbs")); // a kernel RNIC cannot mirror
    }

    static Stream<Arguments> schemesAndSeeds() {
        return schemes().flatMap(s -> Stream.of(1L, 2L, 3L).map(seed -> Arguments.of(s, seed)));
    }

    private Path store() {
        return dir.resolve("store");
    }

    private RawClient start(String scheme, PersistenceMethod method) {
        return start(scheme, method, ConnectData.PROTOCOL_ERDA);
    }

    private RawClient start(String scheme, PersistenceMethod method, int protocol) {
        server = RequestServer.start(TestStores.config(dir, scheme, Duration.ofSeconds(30)).withPersistence(method)
                .withPmEmulation(PmEmulation.POWER_FAILURE));
        return RawClient.connect(server.uri(), protocol);
    }

    /** The power failure: the server goes away without persisting anything more, then the store collapses. */
    private PowerFailure.Report powerFailure(RawClient client, long seed, PowerFailure.Policy policy) {
        stop(client);
        return PowerFailure.collapse(store(), seed, policy);
    }

    private void stop(RawClient client) {
        client.close();
        server.close();
        server = null;
    }

    /** Stops the server and runs the offline verifier on the store it recovered. */
    private void stopAndVerify(RawClient client) {
        stop(client);
        StoreVerifier.Report report = StoreVerifier.verify(store());
        assertThat(report.clean()).as("verify: %s", report).isTrue();
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static void putFlushed(RawClient client, String key, String value) {
        PutReply where = client.putAndWrite(bytes(key), bytes(value));
        assertThat(client.flush(where.head(), where.chainOffset(), where.objectLength()).status()).isEqualTo(WireStatus.OK);
    }

    @ParameterizedTest
    @MethodSource("schemesAndSeeds")
    void serverFlushKeepsFlushedPutsAndNeverTearsUnflushedOnes(String scheme, long seed) {
        RawClient client = start(scheme, PersistenceMethod.SERVER_FLUSH);
        for (int i = 0; i < KEYS; i++) {
            putFlushed(client, "k" + i, "flushed-" + i);
        }
        for (int i = 0; i < KEYS; i++) {
            client.putAndWrite(bytes("k" + i), bytes("written-only-" + i + "-" + "x".repeat(i)));
        }
        PowerFailure.Report report = powerFailure(client, seed, PowerFailure.Policy.RANDOM);
        assertThat(report.lines()).as("%s", report).isPositive();
        assertThat(report.kept()).isPositive();
        assertThat(report.dropped() + report.torn()).isPositive();

        client = start(scheme, PersistenceMethod.SERVER_FLUSH);
        int reverted = 0;
        for (int i = 0; i < KEYS; i++) {
            String value = client.getString(bytes("k" + i));
            assertThat(value).as("key k%d after %s", i, report).isIn("flushed-" + i, "written-only-" + i + "-" + "x".repeat(i));
            if (value.equals("flushed-" + i)) {
                reverted++;
            }
        }
        assertThat(reverted).as("unflushed PUTs lost to seed %d", seed).isPositive();
        stopAndVerify(client);
    }

    /**
     * The negative test: a client that skips its FLUSH under server-flush (a missing persist) has PUTs it would report
     * durable; a collapse that drops what is not durable loses every one of them. Were the emulation blind to
     * missing persists, this would find the written values.
     */
    @ParameterizedTest
    @MethodSource("schemes")
    void aSkippedFlushLosesAcknowledgedPutsToTheCollapse(String scheme) {
        RawClient client = start(scheme, PersistenceMethod.SERVER_FLUSH);
        for (int i = 0; i < KEYS; i++) {
            putFlushed(client, "k" + i, "old-" + i);
        }
        // after every flush: a later flush of a neighbour would write back a line shared with it, as clwb does
        for (int i = 0; i < KEYS; i++) {
            client.putAndWrite(bytes("k" + i), bytes("acknowledged-without-flush-" + i)); // the bug: no FLUSH
        }
        powerFailure(client, 9, PowerFailure.Policy.DROP);
        client = start(scheme, PersistenceMethod.SERVER_FLUSH);
        for (int i = 0; i < KEYS; i++) {
            assertThat(client.getString(bytes("k" + i))).isEqualTo("old-" + i);
        }
    }

    /**
     * Read-after-write (emulating DMP without DDIO): a one-sided WRITE is durable once a later FLUSH of its connection
     * completed (mirrored then), so even dropping everything keeps the fenced ones.
     */
    @ParameterizedTest
    @MethodSource("schemes")
    void readAfterWriteWritesAreDurableOnceFenced(String scheme) {
        RawClient client = start(scheme, PersistenceMethod.READ_AFTER_WRITE);
        for (int i = 0; i < KEYS; i++) {
            client.putAndWrite(bytes("k" + i), bytes("old-" + i));
            client.fence(client.putAndWrite(bytes("k" + i), bytes("placed-" + i)));
        }
        powerFailure(client, 4, PowerFailure.Policy.DROP);
        client = start(scheme, PersistenceMethod.READ_AFTER_WRITE);
        for (int i = 0; i < KEYS; i++) {
            assertThat(client.getString(bytes("k" + i))).isEqualTo("placed-" + i);
        }
        stopAndVerify(client);
    }

    /** wsp loses nothing written: no images are kept, the collapse changes nothing. */
    @ParameterizedTest
    @MethodSource("schemes")
    void wspKeepsNoImagesAndLosesNothing(String scheme) throws Exception {
        RawClient client = start(scheme, PersistenceMethod.WSP);
        for (int i = 0; i < KEYS; i++) {
            client.putAndWrite(bytes("k" + i), bytes("v-" + i));
        }
        PowerFailure.Report report = powerFailure(client, 5, PowerFailure.Policy.DROP);
        assertThat(report.filesCompared()).isZero();
        try (Stream<Path> files = Files.list(store())) {
            assertThat(files.map(p -> p.getFileName().toString())).noneMatch(n -> n.endsWith(PowerFailure.IMAGE_SUFFIX))
                    .doesNotContain(PowerFailure.MARKER);
        }
        client = start(scheme, PersistenceMethod.WSP);
        for (int i = 0; i < KEYS; i++) {
            assertThat(client.getString(bytes("k" + i))).isEqualTo("v-" + i);
        }
    }

    /**
     * Both baselines under server-flush (log regions not mirrored): Redo Logging's acknowledged entries are persisted
     * by the server, the Read After Write ring is durable on placement; both survive dropping everything else.
     */
    @ParameterizedTest
    @MethodSource("schemes")
    void baselinesKeepAcknowledgedPuts(String scheme) {
        RawClient redo = start(scheme, PersistenceMethod.SERVER_FLUSH, ConnectData.PROTOCOL_REDO_LOG);
        RawClient raw = RawClient.connect(server.uri(), ConnectData.PROTOCOL_READ_AFTER_WRITE);
        for (int i = 0; i < KEYS; i++) {
            assertThat(redo.redoPut(bytes("redo-" + i), bytes("redo-value-" + i)).status()).isEqualTo(WireStatus.OK);
            raw.rawPut(bytes("raw-" + i), bytes("raw-value-" + i));
        }
        raw.close();
        powerFailure(redo, 6, PowerFailure.Policy.DROP);
        RawClient client = start(scheme, PersistenceMethod.SERVER_FLUSH);
        for (int i = 0; i < KEYS; i++) {
            assertThat(client.getString(bytes("redo-" + i))).isEqualTo("redo-value-" + i);
            assertThat(client.getString(bytes("raw-" + i))).isEqualTo("raw-value-" + i);
        }
        stopAndVerify(client);
    }

    @Test
    void theCommandLineCollapsesAndRefusesAnEmulatedStoreWithoutTheOption() {
        RawClient client = start("tcp", PersistenceMethod.SERVER_FLUSH);
        client.putAndWrite(bytes("k"), bytes("never flushed"));
        stop(client);

        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = ErdaServerMain.run(new PrintWriter(out), new PrintWriter(err), "power-fail", "--dir",
                store().toString(), "--seed", "7", "--policy", "drop");
        assertThat(code).as("stderr: %s", err).isZero();
        assertThat(out.toString())
                .containsPattern("power-fail: head-\\d+-region-\\d+\\.pm: \\d+ lines not durable: 0 kept, \\d+ dropped, 0 torn")
                .contains("power-fail: seed 7, policy drop, ");

        err = new StringWriter();
        code = ErdaServerMain.run(new PrintWriter(new StringWriter()), new PrintWriter(err), "--dir", store().toString(),
                "--listen", "tcp://127.0.0.1:0");
        assertThat(code).isEqualTo(2);
        assertThat(err.toString()).contains("is set up for power-failure emulation").contains("--pm-emulation power-failure");

        err = new StringWriter();
        code = ErdaServerMain.run(new PrintWriter(new StringWriter()), new PrintWriter(err), "power-fail", "--dir",
                store().toString(), "--seed", "1", "--policy", "melt");
        assertThat(code).isEqualTo(2);
        assertThat(err.toString()).contains("'melt'");
        assertThatThrownBy(() -> PmEmulation.fromOption("brownout")).hasMessageContaining("'brownout'");

        err = new StringWriter();
        code = ErdaServerMain.run(new PrintWriter(new StringWriter()), new PrintWriter(err), "--dir",
                dir.resolve("other").toString(), "--listen", "tcp://127.0.0.1:0", "--pm-config", "DMP+DDIO");
        assertThat(code).isEqualTo(2);
        assertThat(err.toString()).contains("'DMP+DDIO'").contains("DMP+DDIO+DRAM-RQWRB");
    }
}
