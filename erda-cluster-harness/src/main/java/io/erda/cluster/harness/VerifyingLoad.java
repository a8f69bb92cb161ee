package io.erda.cluster.harness;

import io.erda.client.KeyValueClient;
import io.erda.protocol.memory.KeyHash;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Writers that PUT their own keys through a cluster client ([cluster]; tests and {@link ClusterDemo}): each key has
 * one writer, its values carry a growing sequence number ({@code KEY=SEQ}), and the writer records the number of
 * each acknowledged PUT. {@link #lost} reads every key back: a key reading older than its last acknowledged PUT is
 * lost. The demo's and the tests' lost count comes from here, whatever other load runs beside it.
 */
public final class VerifyingLoad implements AutoCloseable {
    private final int shards;
    private final Map<String, Long> acknowledged = new ConcurrentHashMap<>();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final AtomicLong watchedSince = new AtomicLong(Long.MAX_VALUE);
    private final AtomicLong firstWatched = new AtomicLong(Long.MAX_VALUE);
    private volatile Set<Integer> watched = Set.of();
    private final List<Thread> threads = new ArrayList<>();
    private final int keys;
    /** PUTs that failed after their WRITE ({@link io.erda.client.WriteOutcomeUnknownException}): not acknowledged. */
    private final java.util.concurrent.atomic.LongAdder outcomesUnknown = new java.util.concurrent.atomic.LongAdder();

    public VerifyingLoad(KeyValueClient client, int shards, int writers, int keysPerWriter) {
        this(client, shards, writers, keysPerWriter, "");
    }

    /** As above, each key prefixed with {@code prefix} (a fresh set of keys for each round of a loop). */
    public VerifyingLoad(KeyValueClient client, int shards, int writers, int keysPerWriter, String prefix) {
        this.shards = shards;
        this.keys = writers * keysPerWriter;
        for (int w = 0; w < writers; w++) {
            int writer = w;
            threads.add(Thread.ofPlatform().name("verifying-writer-" + w).start(() -> {
                try {
                    for (long seq = 1; !stop.get(); seq++) {
                        for (int k = 0; k < keysPerWriter && !stop.get(); k++) {
                            String key = prefix + "w" + writer + "-k" + k;
                            try {
                                client.put(bytes(key), bytes(key + "=" + seq));
                            } catch (io.erda.client.WriteOutcomeUnknownException unknown) {
                                // failed after its WRITE (its server died meanwhile): not acknowledged, so not
                                // checked; it may have landed, so a later read may show it (never less than the last
                                // acknowledged sequence, which is all the check asks)
                                outcomesUnknown.increment();
                                continue;
                            }
                            long now = System.nanoTime();
                            acknowledged.put(key, seq);
                            if (now > watchedSince.get() && watched.contains(shardOf(key))) {
                                firstWatched.accumulateAndGet(now, Math::min);
                            }
                        }
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }));
        }
    }

    public int shardOf(String key) {
        return KeyHash.shard(KeyHash.hash(bytes(key)), shards);
    }

    /** Waits until every key has an acknowledged PUT. */
    public void awaitEveryKey() throws InterruptedException {
        while (acknowledged.size() < keys) {
            check();
            Thread.sleep(10);
        }
    }

    /** From {@code sinceNanos} on, notes the first acknowledged PUT on one of {@code shardSet}. */
    public void watch(Set<Integer> shardSet, long sinceNanos) {
        firstWatched.set(Long.MAX_VALUE);
        watched = Set.copyOf(shardSet);
        watchedSince.set(sinceNanos);
    }

    /** Waits for the first acknowledged PUT on a watched shard; returns milliseconds since the watch began. */
    public long awaitWatched() throws InterruptedException {
        while (firstWatched.get() == Long.MAX_VALUE) {
            check();
            Thread.sleep(2);
        }
        return (firstWatched.get() - watchedSince.get()) / 1_000_000;
    }

    /** PUTs whose outcome the client could not tell (failed after their WRITE), not counted as acknowledged. */
    public long outcomesUnknown() {
        return outcomesUnknown.sum();
    }

    /** Acknowledged PUTs so far. */
    public long acknowledgedPuts() {
        return acknowledged.values().stream().mapToLong(Long::longValue).sum();
    }

    /** Per key, the sequence number of its last acknowledged PUT. */
    public Map<String, Long> acknowledged() {
        return Map.copyOf(acknowledged);
    }

    private void check() {
        if (failure.get() != null) {
            throw new IllegalStateException("a verifying writer failed", failure.get());
        }
    }

    /** Stops the writers and waits for them; throws if one failed. */
    public void stop() throws InterruptedException {
        stop.set(true);
        for (Thread t : threads) {
            t.join();
        }
        check();
    }

    /** Reads every key back (after {@link #stop}); prints and counts the keys that read older than acknowledged. */
    public long lost(KeyValueClient reader) {
        long lost = 0;
        for (Map.Entry<String, Long> e : acknowledged.entrySet()) {
            long read = sequence(reader.get(bytes(e.getKey())));
            if (read < e.getValue()) {
                lost++;
                System.out.println("lost: " + e.getKey() + " acknowledged " + e.getValue() + ", read " + read);
            }
        }
        return lost;
    }

    /** The sequence number in a value this load wrote; 0 for null (absent). */
    public static long sequence(byte[] value) {
        return value == null ? 0 : Long.parseLong(new String(value, StandardCharsets.UTF_8).split("=")[1]);
    }

    public static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void close() throws InterruptedException {
        stop.set(true);
        for (Thread t : threads) {
            t.join();
        }
    }
}
