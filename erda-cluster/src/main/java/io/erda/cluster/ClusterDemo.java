package io.erda.cluster;

import io.erda.client.ClientOptions;
import io.erda.core.hash.KeyHash;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.apache.curator.test.TestingServer;

/**
 * {@code scripts/erda-cluster-demo [SHARDS [KEYS_PER_WRITER]]} ([cluster]): a ZooKeeper in this process, three
 * {@link ClusterServerMain} processes on tcp, writers PUTting their own keys through the {@code zk://} client; once
 * every key is acknowledged it kills the primary of shard 0 with -9, stops the load as soon as a PUT on one of its
 * shards succeeds again, and reads every key back. Each key has one writer and its values carry a growing sequence
 * number, so a read older than the last acknowledged PUT is a lost PUT. Last line:
 * {@code shards S, servers N, acknowledged A, lost L, failover ms F}; exit 0 only when L is 0.
 */
public final class ClusterDemo {
    /** ZooKeeper's and Curator's INFO lines (through slf4j-jdk14) would bury the demo's; kept strongly reachable. */
    private static final java.util.logging.Logger[] QUIET = {java.util.logging.Logger.getLogger("org.apache.zookeeper"),
            java.util.logging.Logger.getLogger("org.apache.curator")};

    private ClusterDemo() {
    }

    public static void main(String[] args) throws Exception {
        int shards = args.length > 0 ? Integer.parseInt(args[0]) : 8;
        int keysPerWriter = args.length > 1 ? Integer.parseInt(args[1]) : 300;
        int servers = 3;
        int writers = 4;
        for (java.util.logging.Logger l : QUIET) {
            l.setLevel(java.util.logging.Level.WARNING);
        }
        List<MemberProcess> members = new ArrayList<>();
        long lost = -1;
        String summary = null;
        try (TestingServer zookeeper = ZooKeeperMain.start(0)) {
            URI zk = URI.create("zk://127.0.0.1:" + zookeeper.getPort() + "/erda");
            System.out.println("zookeeper on " + zk);
            for (int id = 1; id <= servers; id++) {
                members.add(MemberProcess.start(zk, id, "--shards", String.valueOf(shards), "--initial-servers",
                        String.valueOf(servers), "--session-timeout-ms", "3000", "--table-capacity", "256k",
                        "--region-size", "64m"));
                System.out.println("server " + id + " started, log " + members.getLast().log());
            }
            Map<String, Long> acknowledged = new ConcurrentHashMap<>();
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong killedAt = new AtomicLong(Long.MAX_VALUE);
            AtomicLong firstAfterKill = new AtomicLong(Long.MAX_VALUE);
            AtomicReference<Set<Integer>> killedShards = new AtomicReference<>(Set.of());
            AtomicReference<Throwable> failure = new AtomicReference<>();
            try (ClusterClient client = ClusterClient.connect(ClientOptions.of(zk).withPoolSize(writers))) {
                ShardMap before = client.shardMap();
                System.out.println("shard map " + before);
                List<Thread> threads = new ArrayList<>();
                for (int w = 0; w < writers; w++) {
                    int writer = w;
                    threads.add(Thread.ofPlatform().start(() -> {
                        try {
                            for (long seq = 1; !stop.get(); seq++) {
                                for (int k = 0; k < keysPerWriter && !stop.get(); k++) {
                                    String key = "w" + writer + "-k" + k;
                                    client.put(bytes(key), bytes(key + "=" + seq));
                                    long now = System.nanoTime();
                                    acknowledged.put(key, seq);
                                    if (now > killedAt.get()
                                            && killedShards.get().contains(before.shardOf(KeyHash.hash(bytes(key))))) {
                                        firstAfterKill.accumulateAndGet(now, Math::min);
                                    }
                                }
                            }
                        } catch (Throwable t) {
                            failure.compareAndSet(null, t);
                        }
                    }));
                }
                while (acknowledged.size() < writers * keysPerWriter && failure.get() == null) {
                    Thread.sleep(10);
                }
                Thread.sleep(300);
                int victim = before.primary(0);
                killedShards.set(Set.copyOf(IntStream.range(0, shards).filter(s -> before.primary(s) == victim)
                        .boxed().toList()));
                System.out.println("kill -9 server " + victim + ", primary of shards " + killedShards.get());
                members.get(victim - 1).kill(); // returns once the process is gone
                killedAt.set(System.nanoTime());
                while (firstAfterKill.get() == Long.MAX_VALUE && failure.get() == null) {
                    Thread.sleep(5);
                }
                Thread.sleep(50);
                stop.set(true);
                for (Thread t : threads) {
                    t.join();
                }
                if (failure.get() != null) {
                    throw new IllegalStateException("a writer failed", failure.get());
                }
                System.out.println("shard map " + client.shardMap());
                lost = 0;
                for (Map.Entry<String, Long> e : acknowledged.entrySet()) {
                    byte[] value = client.get(bytes(e.getKey()));
                    long read = value == null ? 0
                            : Long.parseLong(new String(value, StandardCharsets.UTF_8).split("=")[1]);
                    if (read < e.getValue()) {
                        lost++;
                        System.out.println("lost: " + e.getKey() + " acknowledged " + e.getValue() + ", read " + read);
                    }
                }
                summary = String.format("shards %d, servers %d, acknowledged %d, lost %d, failover ms %d", shards, servers,
                        acknowledged.values().stream().mapToLong(Long::longValue).sum(), lost,
                        (firstAfterKill.get() - killedAt.get()) / 1_000_000);
            }
        } finally {
            members.forEach(MemberProcess::close);
        }
        System.out.println(summary); // the last line, after ZooKeeper's shutdown
        System.exit(lost == 0 ? 0 : 1);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
