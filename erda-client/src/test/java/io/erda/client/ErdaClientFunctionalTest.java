package io.erda.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.protocol.WireStatus;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** GET, PUT and DELETE against a real server process, over every selected fabric (TestFabric). */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ErdaClientFunctionalTest {
    private final Servers servers = new Servers("functional", ServerArgs.small());

    @AfterAll
    void stopServers() {
        servers.close();
    }

    private ErdaClient client(TestFabric fabric) {
        return ErdaClient.connect(ClientOptions.of(servers.get(fabric).uri()));
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @ParameterizedTest
    @MethodSource("io.erda.client.TestFabric#selected")
    void putThenGetReturnsTheValueAndOverwriteReplacesIt(TestFabric fabric) {
        try (ErdaClient client = client(fabric)) {
            client.put(b("put-get"), b("first"));
            assertThat(client.get(b("put-get"))).isEqualTo(b("first"));
            client.put(b("put-get"), b("second, longer than the first"));
            assertThat(client.get(b("put-get"))).isEqualTo(b("second, longer than the first"));
            assertThat(client.stats().get("two_sided_gets")).isZero();
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.client.TestFabric#selected")
    void deleteMakesTheKeyNotFoundAndAPutAfterItRevivesIt(TestFabric fabric) {
        try (ErdaClient client = client(fabric)) {
            client.put(b("delete-me"), b("v"));
            client.delete(b("delete-me"));
            assertThat(client.get(b("delete-me"))).isNull();
            client.put(b("delete-me"), b("again"));
            assertThat(client.get(b("delete-me"))).isEqualTo(b("again"));
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.client.TestFabric#selected")
    void missingKeyIsNotFoundAndDeletingItIsNoError(TestFabric fabric) {
        try (ErdaClient client = client(fabric)) {
            assertThat(client.get(b("never-written"))).isNull();
            client.delete(b("never-written-either"));
            assertThat(client.get(b("never-written-either"))).isNull();
            assertThat(client.stats().get("miss_confirmations")).isGreaterThanOrEqualTo(1);
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.client.TestFabric#selected")
    void manyKeysOverSeveralHeadsAllReadBack(TestFabric fabric) {
        try (ErdaClient client = client(fabric)) {
            assertThat(client.storeInfo().headCount()).isGreaterThan(1);
            int n = 3000;
            for (int i = 0; i < n; i++) {
                byte[] key = b("many-" + fabric + "-" + i);
                client.put(key, CheckedValue.of(key, i, 16 + i % 200));
            }
            for (int i = 0; i < n; i++) {
                byte[] key = b("many-" + fabric + "-" + i);
                byte[] value = client.get(key);
                assertThat(value).as("key %s", i).isNotNull();
                assertThat(CheckedValue.sequence(key, value)).isEqualTo(i);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.client.TestFabric#selected")
    void valuesFromOneByteToOneMebibyteReadBackWhole(TestFabric fabric) {
        int[] sizes = {1, 7, 8, 100, 243, 244, 245, 256, 1000, 4096, 65_536, 300_000, 1 << 20};
        try (ErdaClient client = client(fabric)) {
            for (int size : sizes) {
                byte[] value = new byte[size];
                for (int i = 0; i < size; i++) {
                    value[i] = (byte) (i * 7 + size);
                }
                client.put(b("size-" + size), value);
            }
            // read them back small-to-large and large-to-small so the length guess is both short and long
            for (int size : sizes) {
                assertThat(client.get(b("size-" + size))).as("size %d", size).hasSize(size);
            }
            for (int i = sizes.length - 1; i >= 0; i--) {
                byte[] value = client.get(b("size-" + sizes[i]));
                assertThat(value).hasSize(sizes[i]);
                assertThat(value[sizes[i] - 1]).isEqualTo((byte) ((sizes[i] - 1) * 7 + sizes[i]));
            }
            assertThat(client.stats().get("object_tail_reads")).isGreaterThan(0);
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.client.TestFabric#selected")
    void objectsInLaterRegionsOfAChainReadBack(TestFabric fabric) {
        // 4 MiB regions: 48 values of 512 KiB over 4 heads put about 6 MiB on each head, so every chain grows
        try (ErdaClient writer = client(fabric); ErdaClient reader = client(fabric)) {
            reader.get(b("chain-warm-up")); // the reader's head array predates the new regions
            Set<Integer> seen = new HashSet<>();
            for (int i = 0; i < 48; i++) {
                byte[] key = b("chain-" + i);
                writer.put(key, CheckedValue.of(key, i, 512 << 10));
            }
            for (int i = 0; i < 48; i++) {
                byte[] key = b("chain-" + i);
                seen.add((int) CheckedValue.sequence(key, reader.get(key)));
            }
            assertThat(seen).hasSize(48);
            assertThat(reader.stats().get("head_refreshes")).isGreaterThan(0);
            assertThat(reader.stats().get("two_sided_gets")).isZero();
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.client.TestFabric#selected")
    void segmentVariantsCopyIntoTheCallersSegmentOnlyWhenTheValueFits(TestFabric fabric) {
        try (ErdaClient client = client(fabric); Arena arena = Arena.ofConfined()) {
            MemorySegment key = arena.allocateFrom("segment-key", StandardCharsets.UTF_8);
            key = key.asSlice(0, key.byteSize() - 1); // without the terminating zero
            MemorySegment value = arena.allocate(1000);
            value.fill((byte) 0x5A);
            client.put(key, value);
            MemorySegment small = arena.allocate(10);
            assertThat(client.get(key, small)).isEqualTo(1000);
            assertThat(small.toArray(ValueLayout.JAVA_BYTE)).containsOnly(0);
            MemorySegment large = arena.allocate(2000);
            assertThat(client.get(key, large)).isEqualTo(1000);
            assertThat(large.asSlice(0, 1000).toArray(ValueLayout.JAVA_BYTE)).containsOnly(0x5A);
            client.delete(key);
            assertThat(client.get(key, large)).isEqualTo(-1);
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.client.TestFabric#selected")
    void oversizedKeysAndValuesAreRefusedNamingTheLimitWithNothingSent(TestFabric fabric) {
        try (ErdaClient client = ErdaClient.connect(ClientOptions.of(servers.get(fabric).uri()).withPoolSize(1))) {
            long segment = client.storeInfo().segmentSize();
            long limit = segment - 8 - 12 - 3;
            byte[] tooLong = new byte[(int) limit + 1];
            Map<String, String> before = client.serverStats();
            assertThatThrownBy(() -> client.put(b("big"), tooLong))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("value length " + (limit + 1))
                    .hasMessageContaining("limit " + limit);
            assertThatThrownBy(() -> client.put(new byte[65_536], b("v")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("key length 65536").hasMessageContaining("65535");
            assertThatThrownBy(() -> client.get(new byte[0]))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key length 0");
            Map<String, String> after = client.serverStats();
            for (String counter : List.of("puts", "deletes", "gets_two_sided", "errors")) {
                assertThat(after.get(counter)).as("server counter %s", counter).isEqualTo(before.get(counter));
            }
            assertThat(client.stats().get("one_sided_reads")).as("one-sided READs").isZero();
            client.put(b("big"), new byte[(int) limit]); // exactly the limit fits
            assertThat(client.get(b("big"))).hasSize((int) limit);
        }
    }

    @ParameterizedTest
    @MethodSource("io.erda.client.TestFabric#selected")
    void fullTableIsReportedAndEveryKeyStoredBeforeStillReadsBack(TestFabric fabric) {
        try (Servers tiny = new Servers("full-table", ServerArgs.small().capacity(64));
             ErdaClient client = ErdaClient.connect(ClientOptions.of(tiny.get(fabric).uri()))) {
            int stored = 0;
            ErdaException full = null;
            for (int i = 0; i < 1000 && full == null; i++) {
                byte[] key = b("full-" + i);
                try {
                    client.put(key, CheckedValue.of(key, i, 32));
                    stored++;
                } catch (ErdaException e) {
                    full = e;
                }
            }
            assertThat(full).as("a PUT into a full table").isNotNull();
            assertThat(full.status()).isEqualTo(WireStatus.TABLE_FULL);
            assertThat(stored).isGreaterThan(32);
            for (int i = 0; i < stored; i++) {
                byte[] key = b("full-" + i);
                assertThat(CheckedValue.sequence(key, client.get(key))).isEqualTo(i);
            }
            // updates of stored keys need no new entry and still work
            client.put(b("full-0"), CheckedValue.of(b("full-0"), 1000, 32));
            assertThat(CheckedValue.sequence(b("full-0"), client.get(b("full-0")))).isEqualTo(1000);
        }
    }
}
