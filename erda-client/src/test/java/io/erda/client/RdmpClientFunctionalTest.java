package io.erda.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** RDMP-KV's three protocols (RdmpClient) against a real server process, over every selected fabric (TestFabric). */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RdmpClientFunctionalTest {
    static final List<ClientOptions.Protocol> RDMP = List.of(ClientOptions.Protocol.HERD, ClientOptions.Protocol.RDMP_SA,
            ClientOptions.Protocol.RDMP_CC);
    private final Servers servers = new Servers("rdmp", ServerArgs.small());

    @AfterAll
    void stopServers() {
        servers.close();
    }

    static Stream<Arguments> protocols() {
        List<Arguments> all = new ArrayList<>();
        for (TestFabric fabric : TestFabric.selected()) {
            for (ClientOptions.Protocol p : RDMP) {
                all.add(Arguments.of(fabric, p));
            }
        }
        return all.stream();
    }

    static Stream<Arguments> fabrics() {
        return TestFabric.selected().stream().map(Arguments::of);
    }

    private RdmpClient client(TestFabric fabric, ClientOptions.Protocol protocol) {
        return RdmpClient.connect(ClientOptions.of(servers.get(fabric).uri()).withProtocol(protocol));
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @ParameterizedTest
    @MethodSource("protocols")
    void putGetOverwriteAndDeleteBehaveLikeAStore(TestFabric fabric, ClientOptions.Protocol protocol) {
        try (KeyValueClient client = KeyValueClient.connect(ClientOptions.of(servers.get(fabric).uri())
                .withProtocol(protocol))) {
            assertThat(client).isInstanceOf(RdmpClient.class);
            BaselineClientFunctionalTest.behavesLikeAStore(client, "pgod-" + protocol);
        }
    }

    @ParameterizedTest
    @MethodSource("protocols")
    void valuesFrom64BytesTo256KiBReadBackAcrossOverwrites(TestFabric fabric, ClientOptions.Protocol protocol) {
        try (RdmpClient client = client(fabric, protocol)) {
            int[] sizes = {64, 1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10};
            for (int round = 0; round < 2; round++) {
                for (int size : sizes) {
                    byte[] k = b("size-" + protocol + "-" + size);
                    client.put(k, CheckedValue.of(k, round, size));
                }
                for (int size : sizes) {
                    byte[] k = b("size-" + protocol + "-" + size);
                    byte[] value = client.get(k);
                    assertThat(value).hasSize(size);
                    assertThat(CheckedValue.sequence(k, value)).isEqualTo(round);
                }
            }
        }
    }

    @ParameterizedTest
    @MethodSource("protocols")
    void aValueOverTheProtocolLimitIsRefusedNamingValueAndLimit(TestFabric fabric, ClientOptions.Protocol protocol) {
        try (RdmpClient client = client(fabric, protocol)) {
            BaselineClientFunctionalTest.refusesOverTheLimit(client, 600 << 10, protocol.name());
        }
    }

    @ParameterizedTest
    @MethodSource("fabrics")
    void rdmpSaSendsSmallValuesInTheRequestAndLargeOnesOneSided(TestFabric fabric) {
        try (RdmpClient client = client(fabric, ClientOptions.Protocol.RDMP_SA)) {
            assertThat(client.saThreshold()).isEqualTo(16 << 10);
            long allocsBefore = requests(client, "requests_rdmp_alloc");
            long herdBefore = requests(client, "requests_herd_put");
            client.put(b("sa-small"), new byte[(16 << 10) - 1]);
            client.put(b("sa-large"), new byte[16 << 10]);
            assertThat(requests(client, "requests_herd_put") - herdBefore).isEqualTo(1);
            assertThat(requests(client, "requests_rdmp_alloc") - allocsBefore).isEqualTo(1);
        }
    }

    private static long requests(RdmpClient client, String name) {
        Map<String, String> stats = client.serverStats();
        assertThat(stats).containsKey(name);
        return Long.parseLong(stats.get(name));
    }

    @ParameterizedTest
    @MethodSource("fabrics")
    void aGetThatReadsAZeroValidFlagAsksAgainUntilThePutCompletes(TestFabric fabric) throws Exception {
        byte[] k = b("valid-flag");
        CommitHold hold = new CommitHold();
        try (RdmpClient writer = RdmpClient.connect(hold.decorate(ClientOptions.of(servers.get(fabric).uri())
                .withProtocol(ClientOptions.Protocol.RDMP_CC)));
             RdmpClient reader = client(fabric, ClientOptions.Protocol.RDMP_CC)) {
            writer.put(k, b("old"));
            CountDownLatch valueWritten = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            hold.next(() -> {
                valueWritten.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            Thread put = Thread.ofPlatform().start(() -> writer.put(k, b("new")));
            byte[][] got = new byte[1][];
            Thread get;
            try {
                assertThat(valueWritten.await(10, TimeUnit.SECONDS)).isTrue();
                get = Thread.ofPlatform().start(() -> got[0] = reader.get(k));
                // the lookup names the new object; its valid flag is zero while the writer holds: the GET keeps asking
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (reader.stats().get("get_retries") < 3 && System.nanoTime() < deadline) {
                    Thread.sleep(1);
                }
                assertThat(reader.stats().get("get_retries")).isGreaterThanOrEqualTo(3);
                assertThat(get.isAlive()).isTrue();
            } finally {
                release.countDown(); // a failed check must not leave the writer held, and closing it waiting
            }
            put.join(10_000);
            get.join(10_000);
            assertThat(got[0]).isEqualTo(b("new"));
        }
    }
}
