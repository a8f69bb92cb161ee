package io.erda.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A PUT load that a kill -9 of the server interrupts, and the check after the restart (ServerRestartTest,
 * PowerFailureTest): per key the sequence acknowledged last and the one written last (in flight at the kill, or
 * acknowledged), values {@link CheckedValue}s so a torn or mixed one is told apart.
 */
final class PutsUnderKill {
    private final String keyPrefix;
    private final int writers;
    private final int keysPerWriter;
    private final int valueSizeSpread;
    private final Map<String, Long> acked = new ConcurrentHashMap<>();
    private final Map<String, Long> written = new ConcurrentHashMap<>();
    private final AtomicLong nextSequence = new AtomicLong(1);

    /** Values are {@code 24 + sequence % valueSizeSpread} bytes. */
    PutsUnderKill(String keyPrefix, int writers, int keysPerWriter, int valueSizeSpread) {
        this.keyPrefix = keyPrefix;
        this.writers = writers;
        this.keysPerWriter = keysPerWriter;
        this.valueSizeSpread = valueSizeSpread;
    }

    /**
     * PUTs from {@code writers} clients (one writer per key) until {@code count} more are acknowledged, then kill -9
     * of the server; returns once the writers have seen it die.
     */
    void loadThenKill(ServerProcess server, ClientOptions.Protocol protocol, long count) throws InterruptedException {
        AtomicLong ackCount = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < writers; w++) {
            int writer = w;
            threads.add(Thread.ofPlatform().start(() -> {
                try (KeyValueClient client = KeyValueClient.connect(ClientOptions.of(server.uri()).withPoolSize(1)
                        .withProtocol(protocol))) {
                    while (true) {
                        long seq = nextSequence.getAndIncrement();
                        String key = keyPrefix + writer + "-" + seq % keysPerWriter;
                        byte[] k = key.getBytes(StandardCharsets.UTF_8);
                        written.put(key, seq);
                        client.put(k, CheckedValue.of(k, seq, 24 + (int) (seq % valueSizeSpread)));
                        acked.put(key, seq);
                        ackCount.incrementAndGet();
                    }
                } catch (RuntimeException expected) {
                    // the server died under the load
                }
            }));
        }
        while (ackCount.get() < count && threads.stream().anyMatch(Thread::isAlive)) {
            Thread.sleep(5);
        }
        server.kill();
        for (Thread t : threads) {
            t.join(60_000);
        }
        assertThat(ackCount.get()).isGreaterThanOrEqualTo(count);
    }

    /**
     * The client that reads the load back after a restart: Erda's, since every other protocol but RDMP-KV's applies into
     * its store; RDMP-KV's own, whose keys live in the RDMP pool.
     */
    static KeyValueClient reader(java.net.URI uri, ClientOptions.Protocol protocol) {
        return RdmpClientFunctionalTest.RDMP.contains(protocol)
                ? RdmpClient.connect(ClientOptions.of(uri).withProtocol(protocol)) : ErdaClient.connect(ClientOptions.of(uri));
    }

    /**
     * Every acknowledged key reads back whole, as its acknowledged sequence or the one written after it; a key whose
     * only PUT was in flight is absent or whole. What survived counts as acknowledged for a later check.
     */
    void checkReadBack(KeyValueClient client, String context) {
        for (Map.Entry<String, Long> e : acked.entrySet()) {
            byte[] k = e.getKey().getBytes(StandardCharsets.UTF_8);
            byte[] value = client.get(k);
            assertThat(value).as("durable key %s %s", e.getKey(), context).isNotNull();
            long seq = CheckedValue.sequence(k, value); // throws if torn or mixed
            long last = written.get(e.getKey());
            if (seq != e.getValue()) {
                assertThat(seq).as("key %s: acknowledged %d, written last %d %s", e.getKey(), e.getValue(), last,
                        context).isEqualTo(last);
                e.setValue(seq);
            }
        }
        for (Map.Entry<String, Long> e : written.entrySet()) {
            if (!acked.containsKey(e.getKey())) {
                byte[] k = e.getKey().getBytes(StandardCharsets.UTF_8);
                byte[] value = client.get(k);
                if (value != null) {
                    assertThat(CheckedValue.sequence(k, value)).as("key %s %s", e.getKey(), context).isEqualTo(e.getValue());
                    acked.put(e.getKey(), e.getValue());
                }
            }
        }
    }
}
