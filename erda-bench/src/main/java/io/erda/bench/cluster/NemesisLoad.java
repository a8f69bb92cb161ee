package io.erda.bench.cluster;

import io.erda.cluster.client.ClusterClient;
import io.erda.history.HistoryRecorder;
import io.erda.history.Operation;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The clients of a {@link ClusterNemesis} run: writer and reader threads on a few keys, each operation recorded with
 * its invocation, completion and result ({@link HistoryRecorder}); each thread is one process of the history and runs
 * one operation at a time. A write stores a number no other write stores (a shared sequence), as decimal text. A PUT
 * that threw is indeterminate: the cluster client retries a refused or failed attempt as a new PUT, so an error
 * never proves that no attempt took effect. A GET that threw failed (a read changes nothing). A value that is not a
 * number some write stored is recorded as {@link #FOREIGN}, which no write writes: the checker calls it unwritten.
 */
final class NemesisLoad implements AutoCloseable {
    /** The process number of the final read-back. */
    static final int READ_BACK = 1000;
    /** What a read that returned bytes no write stored is recorded as. */
    static final long FOREIGN = -1;
    private static final int READER_BASE = 100;

    private final HistoryRecorder history;
    private final int keys;
    private final long pauseMicros;
    private final AtomicLong sequence = new AtomicLong();
    private final LongAdder ok = new LongAdder();
    private final LongAdder failed = new LongAdder();
    private final LongAdder indeterminate = new LongAdder();
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean stopped;

    /**
     * {@code writers} threads PUT through {@code writing}; {@code readers} threads GET, the even ones through
     * {@code cuttableReading} (its ZooKeeper link can be cut), the odd ones through {@code writing}; each thread runs
     * at most {@code rate} operations a second.
     */
    NemesisLoad(HistoryRecorder history, ClusterClient writing, ClusterClient cuttableReading, int writers, int readers,
                int keys, int rate, long seed) {
        this.history = history;
        this.keys = keys;
        this.pauseMicros = 1_000_000L / rate;
        Random seeds = new Random(seed);
        for (int w = 0; w < writers; w++) {
            int process = w;
            Random random = new Random(seeds.nextLong());
            threads.add(Thread.ofPlatform().name("nemesis-writer-" + w).unstarted(() -> run(() ->
                    write(writing, process, random.nextInt(keys)), random)));
        }
        for (int r = 0; r < readers; r++) {
            int process = READER_BASE + r;
            ClusterClient client = r % 2 == 0 ? cuttableReading : writing;
            Random random = new Random(seeds.nextLong());
            threads.add(Thread.ofPlatform().name("nemesis-reader-" + r).unstarted(() -> run(() ->
                    read(client, process, random.nextInt(keys)), random)));
        }
    }

    void start() {
        threads.forEach(Thread::start);
    }

    static String key(int k) {
        return "k" + k;
    }

    private void run(Runnable operation, Random random) {
        while (!stopped) {
            operation.run();
            try {
                Thread.sleep(java.time.Duration.ofNanos(1000 * (pauseMicros / 2 + random.nextLong(pauseMicros))));
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void write(ClusterClient client, int process, int k) {
        long value = sequence.incrementAndGet();
        long op = history.invokeWrite(process, key(k), value);
        try {
            client.put(key(k).getBytes(StandardCharsets.UTF_8), Long.toString(value).getBytes(StandardCharsets.UTF_8));
            history.ok(op);
            ok.increment();
        } catch (RuntimeException e) {
            history.info(op);
            indeterminate.increment();
        }
    }

    /** One GET of key {@code k}, recorded as {@code process}'s; whether it returned. */
    boolean read(ClusterClient client, int process, int k) {
        long op = history.invokeRead(process, key(k));
        byte[] value;
        try {
            value = client.get(key(k).getBytes(StandardCharsets.UTF_8));
        } catch (RuntimeException e) {
            history.fail(op);
            failed.increment();
            return false;
        }
        history.ok(op, valueOf(value));
        ok.increment();
        return true;
    }

    private static long valueOf(byte[] value) {
        if (value == null) {
            return Operation.ABSENT;
        }
        try {
            long v = Long.parseLong(new String(value, StandardCharsets.UTF_8));
            return v > 0 ? v : FOREIGN;
        } catch (NumberFormatException e) {
            return FOREIGN;
        }
    }

    long operations() {
        return ok.sum() + failed.sum() + indeterminate.sum();
    }

    String counts() {
        return "ok " + ok.sum() + ", failed " + failed.sum() + ", indeterminate " + indeterminate.sum();
    }

    int keys() {
        return keys;
    }

    /** Stops the threads after their current operation. */
    @Override
    public void close() throws InterruptedException {
        stopped = true;
        for (Thread t : threads) {
            t.join();
        }
    }
}
