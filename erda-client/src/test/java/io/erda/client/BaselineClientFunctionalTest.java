package io.erda.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The baseline clients (Redo Logging, Read After Write) against a real server process, over every selected fabric (TestFabric). */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BaselineClientFunctionalTest {
    /**
     * No test here waits a lease out, so the lease is long: a Read After Write PUT must finish within it or write its
     * slot again, and in scripts/test-softroce's VM (TCG) four attempts in a row took longer than ServerArgs.small()'s
     * 500 ms, failing the PUT.
     */
    private final Servers servers = new Servers("baselines", ServerArgs.small().lease(Duration.ofSeconds(5)));

    @AfterAll
    void stopServers() {
        servers.close();
    }

    static Stream<Arguments> baselines() {
        List<Arguments> all = new ArrayList<>();
        for (TestFabric fabric : TestFabric.selected()) {
            for (ClientOptions.Protocol p : List.of(ClientOptions.Protocol.REDO_LOG, ClientOptions.Protocol.READ_AFTER_WRITE)) {
                all.add(Arguments.of(fabric, p));
            }
        }
        return all.stream();
    }

    private KeyValueClient client(TestFabric fabric, ClientOptions.Protocol protocol) {
        return KeyValueClient.connect(ClientOptions.of(servers.get(fabric).uri()).withProtocol(protocol));
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @ParameterizedTest
    @MethodSource("baselines")
    void putGetOverwriteAndDeleteBehaveLikeAStore(TestFabric fabric, ClientOptions.Protocol protocol) {
        try (KeyValueClient client = client(fabric, protocol)) {
            behavesLikeAStore(client, "pgod-" + protocol);
        }
    }

    /** PUT, GET, overwrite, DELETE (also of a missing key) and a PUT after it, on {@code key}: what any client does. */
    static void behavesLikeAStore(KeyValueClient client, String key) {
        assertThat(client.get(b(key))).isNull();
        client.put(b(key), b("first"));
        assertThat(client.get(b(key))).isEqualTo(b("first"));
        client.put(b(key), b("second, longer than the first"));
        assertThat(client.get(b(key))).isEqualTo(b("second, longer than the first"));
        client.delete(b(key));
        assertThat(client.get(b(key))).isNull();
        client.delete(b("never-" + key)); // deleting a missing key is not an error
        client.put(b(key), b("revived"));
        assertThat(client.get(b(key))).isEqualTo(b("revived"));
    }

    @ParameterizedTest
    @MethodSource("baselines")
    void manyKeysWithLargeValuesReadBackAfterTheServerAppliedThem(TestFabric fabric, ClientOptions.Protocol protocol) {
        try (KeyValueClient client = client(fabric, protocol)) {
            for (int i = 0; i < 200; i++) {
                byte[] k = b("many-" + protocol + "-" + i);
                client.put(k, CheckedValue.of(k, i, 16 + i * 37));
            }
            for (int i = 0; i < 200; i++) {
                byte[] k = b("many-" + protocol + "-" + i);
                assertThat(CheckedValue.sequence(k, client.get(k))).isEqualTo(i);
            }
            byte[] k = b("big-" + protocol);
            client.put(k, CheckedValue.of(k, 7, 60_000));
            assertThat(CheckedValue.sequence(k, client.get(k))).isEqualTo(7);
        }
    }

    @ParameterizedTest
    @MethodSource("baselines")
    void aValueOverTheProtocolLimitIsRefusedLocallyNamingValueAndLimit(TestFabric fabric, ClientOptions.Protocol protocol) {
        try (KeyValueClient client = client(fabric, protocol)) {
            refusesOverTheLimit(client, 200 << 10, "");
        }
    }

    /**
     * A PUT of {@code size} bytes is refused before anything is sent, naming value, limit and {@code protocolName}; the
     * client works on after it.
     */
    static void refusesOverTheLimit(KeyValueClient client, int size, String protocolName) {
        MemorySegment huge = MemorySegment.ofArray(new byte[size]);
        assertThatThrownBy(() -> client.put(MemorySegment.ofArray(b("k")), huge))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("value length " + size + " exceeds the limit")
                .hasMessageContaining(protocolName);
        client.put(b("after-huge"), b("ok"));
        assertThat(client.get(b("after-huge"))).isEqualTo(b("ok"));
    }

    @ParameterizedTest
    @MethodSource("baselines")
    void concurrentWritersOfDistinctKeysAllReadBack(TestFabric fabric, ClientOptions.Protocol protocol) throws Exception {
        int threads = 4;
        int perThread = 150;
        try (KeyValueClient client = KeyValueClient.connect(ClientOptions.of(servers.get(fabric).uri())
                .withProtocol(protocol).withPoolSize(threads))) {
            List<Thread> writers = new ArrayList<>();
            Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
            for (int t = 0; t < threads; t++) {
                int w = t;
                writers.add(Thread.ofPlatform().start(() -> {
                    for (int i = 0; i < perThread; i++) {
                        byte[] k = b("conc-" + protocol + "-" + w + "-" + (i % 20));
                        try {
                            client.put(k, CheckedValue.of(k, i, 100 + i));
                        } catch (RuntimeException | Error e) {
                            failures.add(new AssertionError("writer " + w + ", PUT " + i + " of " + perThread, e));
                            return;
                        }
                    }
                }));
            }
            for (Thread t : writers) {
                t.join();
            }
            // a writer that died leaves its keys at an older value: say why, not only which value
            if (!failures.isEmpty()) {
                AssertionError failed = new AssertionError(failures.size() + " of " + threads + " writers failed");
                failures.forEach(failed::addSuppressed);
                throw failed;
            }
            for (int w = 0; w < threads; w++) {
                for (int j = 0; j < 20; j++) {
                    byte[] k = b("conc-" + protocol + "-" + w + "-" + j);
                    long last = (perThread - 1 - j) / 20 * 20 + j; // the last i with i % 20 == j
                    assertThat(CheckedValue.sequence(k, client.get(k))).isEqualTo(last);
                }
            }
        }
    }
}
