package io.erda.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Eight threads on a few hot keys mixing PUT, GET and DELETE per selected fabric (TestFabric), for at least
 * {@link #DURATION} and on until each kind of operation was done enough times: every GET returns whole some value
 * that was PUT for that key, or not found.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConcurrentAccessTest {
    private static final int THREADS = 8;
    private static final int HOT_KEYS = 4;
    /**
     * How long the stress runs at least ({@code -Derda.test.concurrent.seconds}, default 5): scripts/test-softroce
     * gives rxe0 20 s, where 5 s make few operations.
     */
    private static final Duration DURATION = Duration.ofSeconds(Long.getLong("erda.test.concurrent.seconds", 5));
    private final Servers servers = new Servers("concurrent", ServerArgs.small());

    @AfterAll
    void stopServers() {
        servers.close();
    }

    @ParameterizedTest
    @MethodSource("io.erda.client.TestFabric#selected")
    void everyGetReturnsAWholeValuePutForThatKey(TestFabric fabric) throws InterruptedException {
        byte[][] keys = new byte[HOT_KEYS][];
        // sequence numbers issued per key before their PUT starts: a GET may see any of them
        List<Set<Long>> issued = new ArrayList<>();
        for (int k = 0; k < HOT_KEYS; k++) {
            keys[k] = ("hot-" + fabric + "-" + k).getBytes(StandardCharsets.UTF_8);
            issued.add(ConcurrentHashMap.newKeySet());
        }
        AtomicLong sequences = new AtomicLong();
        LongAdder puts = new LongAdder();
        LongAdder gets = new LongAdder();
        LongAdder found = new LongAdder();
        LongAdder deletes = new LongAdder();
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        // two clients sharing the threads: several connections per client and several clients per server
        try (ErdaClient a = ErdaClient.connect(ClientOptions.of(servers.get(fabric).uri()).withPoolSize(THREADS / 2));
             ErdaClient b = ErdaClient.connect(ClientOptions.of(servers.get(fabric).uri()).withPoolSize(2))) {
            // at least DURATION, and until the stress did enough of each kind of operation to mean something (a slow
            // fabric, SoftRoCE under emulation, needs longer for the same volume), within a bound
            long start = System.nanoTime();
            long end = start + DURATION.toNanos();
            long hardEnd = start + 12 * DURATION.toNanos();
            java.util.function.BooleanSupplier more = () -> {
                long now = System.nanoTime();
                return now < end || (now < hardEnd && (puts.sum() <= 100 || found.sum() <= 100 || deletes.sum() == 0));
            };
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                ErdaClient client = t % 2 == 0 ? a : b;
                SplittableRandom random = new SplittableRandom(t);
                threads.add(Thread.ofPlatform().name("stress-" + t).start(() -> {
                    try {
                        while (more.getAsBoolean() && failures.isEmpty()) {
                            int k = random.nextInt(HOT_KEYS);
                            int op = random.nextInt(100);
                            if (op < 45) {
                                long seq = sequences.incrementAndGet();
                                issued.get(k).add(seq);
                                // sizes vary so readers meet objects longer and shorter than their guess
                                client.put(keys[k], CheckedValue.of(keys[k], seq, 16 + random.nextInt(3000)));
                                puts.increment();
                            } else if (op < 95) {
                                byte[] value = client.get(keys[k]);
                                gets.increment();
                                if (value != null) {
                                    long seq = CheckedValue.sequence(keys[k], value);
                                    if (!issued.get(k).contains(seq)) {
                                        throw new AssertionError("GET of " + CheckedValue.str(keys[k]) + " returned sequence "
                                                + seq + ", never PUT for that key");
                                    }
                                    found.increment();
                                }
                            } else {
                                client.delete(keys[k]);
                                deletes.increment();
                            }
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }));
            }
            for (Thread thread : threads) {
                thread.join();
            }
            assertThat(failures).isEmpty();
            assertThat(puts.sum()).isGreaterThan(100);
            assertThat(found.sum()).isGreaterThan(100);
            assertThat(deletes.sum()).isGreaterThan(0);
            // the pool: never more connections than permits (a reconnect replaces one), and idle ones are reused
            assertThat(a.stats().get("connections_opened")).as("client a, pool of %d", THREADS / 2)
                    .isBetween(1L, THREADS / 2 + a.stats().get("reconnects"));
            assertThat(b.stats().get("connections_opened")).as("client b, pool of 2")
                    .isBetween(1L, 2 + b.stats().get("reconnects"));
        }
    }

    /** One thread at a time uses one connection however large the pool: it takes the idle one back each time. */
    @ParameterizedTest
    @MethodSource("io.erda.client.TestFabric#selected")
    void aSingleThreadReusesOneConnection(TestFabric fabric) {
        try (ErdaClient client = ErdaClient.connect(ClientOptions.of(servers.get(fabric).uri()).withPoolSize(THREADS))) {
            byte[] key = ("single-" + fabric).getBytes(StandardCharsets.UTF_8);
            for (int i = 0; i < 50; i++) {
                client.put(key, CheckedValue.of(key, i, 64));
                assertThat(CheckedValue.sequence(key, client.get(key))).isEqualTo(i);
            }
            assertThat(client.stats().get("connections_opened")).isEqualTo(1 + client.stats().get("reconnects"));
        }
    }
}
