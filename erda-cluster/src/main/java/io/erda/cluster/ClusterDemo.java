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
import java.util.function.IntConsumer;
import java.util.stream.IntStream;
import org.apache.curator.test.TestingServer;

/**
 * {@code scripts/erda-cluster-demo [SHARDS [KEYS_PER_WRITER]]} ([cluster]): a ZooKeeper in this process, three
 * {@link ClusterServerMain} processes on tcp, and {@link #killPrimaryUnderLoad}. Last line:
 * {@code shards S, servers N, acknowledged A, lost L, failover ms F}; exit 0 only when L is 0.
 */
public final class ClusterDemo {
    /** ZooKeeper's and Curator's INFO lines (through slf4j-jdk14) would bury the demo's; kept strongly reachable. */
    private static final java.util.logging.Logger[] QUIET = {java.util.logging.Logger.getLogger("org.apache.zookeeper"),
            java.util.logging.Logger.getLogger("org.apache.curator")};

    private ClusterDemo() {
    }

    /**
     * What {@link #killPrimaryUnderLoad} saw. {@code acknowledged}: per key the sequence number of its last
     * acknowledged PUT; {@code lost}: keys that read back older; {@code failoverMillis}: from the victim's death to the
     * first successful PUT on one of its shards.
     */
    record Outcome(ShardMap before, ShardMap after, int victim, Set<Integer> killedShards, Map<String, Long> acknowledged,
                   long lost, long keysOnKilledShards, long failoverMillis, long retries) {
        long acknowledgedPuts() {
            return acknowledged.values().stream().mapToLong(Long::longValue).sum();
        }
    }

    /**
     * Writers PUT their own keys through the {@code zk://} client (each key has one writer; values carry a growing
     * sequence number); once every key is acknowledged, kills the primary of shard 0 with -9 and runs
     * {@code duringFailover} (given the victim's id) on a thread of its own; stops the load as soon as a PUT on one of
     * the victim's shards succeeds again (later PUTs would overwrite, and so hide, a lost one) and reads every key back.
     */
    static Outcome killPrimaryUnderLoad(URI zk, List<MemberProcess> members, int writers, int keysPerWriter,
                                        IntConsumer duringFailover) throws Exception {
        Map<String, Long> acknowledged = new ConcurrentHashMap<>();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong killedAt = new AtomicLong(Long.MAX_VALUE);
        AtomicLong firstAfterKill = new AtomicLong(Long.MAX_VALUE);
        AtomicReference<Set<Integer>> killedShards = new AtomicReference<>(Set.of());
        AtomicReference<Throwable> failure = new AtomicReference<>();
        try (ClusterClient client = ClusterClient.connect(ClientOptions.of(zk).withPoolSize(writers))) {
            ShardMap before = client.shardMap();
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
                                if (now > killedAt.get() && killedShards.get().contains(shardOf(before, key))) {
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
            Thread.sleep(200);
            int victim = before.primary(0);
            killedShards.set(Set.copyOf(IntStream.range(0, before.shards()).filter(s -> before.primary(s) == victim)
                    .boxed().toList()));
            members.stream().filter(m -> m.id() == victim).findFirst().orElseThrow().kill(); // returns once gone
            killedAt.set(System.nanoTime());
            Thread during = Thread.ofPlatform().start(() -> {
                try {
                    duringFailover.accept(victim);
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            });
            while (firstAfterKill.get() == Long.MAX_VALUE && failure.get() == null) {
                Thread.sleep(5);
            }
            Thread.sleep(50);
            stop.set(true);
            for (Thread t : threads) {
                t.join();
            }
            during.join();
            if (failure.get() != null) {
                throw new IllegalStateException("a writer or the failover action failed", failure.get());
            }
            long lost = 0;
            long onKilled = 0;
            for (Map.Entry<String, Long> e : acknowledged.entrySet()) {
                onKilled += killedShards.get().contains(shardOf(before, e.getKey())) ? 1 : 0;
                byte[] value = client.get(bytes(e.getKey()));
                long read = value == null ? 0 : Long.parseLong(new String(value, StandardCharsets.UTF_8).split("=")[1]);
                if (read < e.getValue()) {
                    lost++;
                    System.out.println("lost: " + e.getKey() + " acknowledged " + e.getValue() + ", read " + read);
                }
            }
            return new Outcome(before, client.shardMap(), victim, killedShards.get(), Map.copyOf(acknowledged), lost,
                    onKilled, (firstAfterKill.get() - killedAt.get()) / 1_000_000, client.retries());
        }
    }

    /** The three members of a demo or test cluster: tcp, short sessions, small stores. */
    static List<MemberProcess> startMembers(URI zk, int servers, int shards) {
        List<MemberProcess> members = new ArrayList<>();
        for (int id = 1; id <= servers; id++) {
            members.add(MemberProcess.start(zk, id, "--shards", String.valueOf(shards), "--initial-servers",
                    String.valueOf(servers), "--session-timeout-ms", "3000", "--table-capacity", "256k",
                    "--region-size", "64m"));
        }
        return members;
    }

    public static void main(String[] args) throws Exception {
        int shards = args.length > 0 ? Integer.parseInt(args[0]) : 8;
        int keysPerWriter = args.length > 1 ? Integer.parseInt(args[1]) : 300;
        int servers = 3;
        for (java.util.logging.Logger l : QUIET) {
            l.setLevel(java.util.logging.Level.WARNING);
        }
        List<MemberProcess> members = new ArrayList<>();
        Outcome outcome;
        try (TestingServer zookeeper = ZooKeeperMain.start(0)) {
            URI zk = URI.create("zk://127.0.0.1:" + zookeeper.getPort() + "/erda");
            System.out.println("zookeeper on " + zk);
            members.addAll(startMembers(zk, servers, shards));
            members.forEach(m -> System.out.println("server " + m.id() + " started, log " + m.log()));
            outcome = killPrimaryUnderLoad(zk, members, 4, keysPerWriter,
                    victim -> System.out.println("killed server " + victim + " with -9"));
            System.out.println("shard map before: " + outcome.before());
            System.out.println("shard map after:  " + outcome.after());
        } finally {
            members.forEach(MemberProcess::close);
        }
        System.out.printf("shards %d, servers %d, acknowledged %d, lost %d, failover ms %d%n", shards, servers,
                outcome.acknowledgedPuts(), outcome.lost(), outcome.failoverMillis()); // last, after ZooKeeper's shutdown
        System.exit(outcome.lost() == 0 ? 0 : 1);
    }

    private static int shardOf(ShardMap map, String key) {
        return map.shardOf(KeyHash.hash(bytes(key)));
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
