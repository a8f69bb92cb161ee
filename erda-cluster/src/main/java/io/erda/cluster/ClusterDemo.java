package io.erda.cluster;

import io.erda.client.ClientOptions;
import io.erda.core.hash.KeyHash;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
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
        AtomicReference<Throwable> failure = new AtomicReference<>();
        try (ClusterClient client = ClusterClient.connect(ClientOptions.of(zk).withPoolSize(writers))) {
            ShardMap before = client.shardMap();
            VerifyingLoad load = new VerifyingLoad(client, before.shards(), writers, keysPerWriter);
            try (load) {
                load.awaitEveryKey();
                Thread.sleep(200);
                int victim = before.primary(0);
                Set<Integer> killedShards = Set.copyOf(IntStream.range(0, before.shards())
                        .filter(s -> before.primary(s) == victim).boxed().toList());
                members.stream().filter(m -> m.id() == victim).findFirst().orElseThrow().kill(); // returns once gone
                load.watch(killedShards, System.nanoTime());
                Thread during = Thread.ofPlatform().start(() -> {
                    try {
                        duringFailover.accept(victim);
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                });
                long failoverMillis = load.awaitWatched();
                Thread.sleep(50);
                load.stop(); // right after failover: later PUTs would overwrite, and so hide, a lost one
                during.join();
                if (failure.get() != null) {
                    throw new IllegalStateException("the failover action failed", failure.get());
                }
                long lost = load.lost(client);
                long onKilled = load.acknowledged().keySet().stream()
                        .filter(k -> killedShards.contains(load.shardOf(k))).count();
                return new Outcome(before, client.shardMap(), victim, killedShards, load.acknowledged(), lost, onKilled,
                        failoverMillis, client.retries());
            }
        }
    }

    /**
     * The members of a demo or test cluster: tcp, short sessions, small stores, each in {@code root/member-ID}
     * (so a member restarted with the same id finds its old files, and the caller deletes them all).
     */
    public static List<MemberProcess> startMembers(URI zk, int servers, int shards, Path root) {
        List<MemberProcess> members = new ArrayList<>();
        for (int id = 1; id <= servers; id++) {
            members.add(startMember(zk, id, servers, shards, root));
        }
        return members;
    }

    /** Member {@code id} of {@link #startMembers}, also for a restart on its old files. */
    public static MemberProcess startMember(URI zk, int id, int servers, int shards, Path root) {
        return MemberProcess.start(zk, id, "--shards", String.valueOf(shards), "--initial-servers",
                String.valueOf(servers), "--session-timeout-ms", String.valueOf(sessionTimeoutMillis), "--table-capacity",
                "256k", "--region-size", "64m", "--dir", root.resolve("member-" + id).toString());
    }

    /** ZooKeeper session timeout of the members {@link #startMember} starts. */
    public static volatile int sessionTimeoutMillis = 3000;

    /** A scratch directory for members' stores under /dev/shm; {@link #deleteTree} it when done. */
    public static Path scratch() throws java.io.IOException {
        return Files.createTempDirectory(Path.of("/dev/shm"), "erda-cluster-");
    }

    public static void deleteTree(Path root) throws java.io.IOException {
        if (Files.exists(root)) {
            try (var paths = Files.walk(root)) {
                paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
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
        Path root = scratch();
        try (TestingServer zookeeper = ZooKeeperMain.start(0)) {
            URI zk = URI.create("zk://127.0.0.1:" + zookeeper.getPort() + "/erda");
            System.out.println("zookeeper on " + zk);
            members.addAll(startMembers(zk, servers, shards, root));
            members.forEach(m -> System.out.println("server " + m.id() + " started, log " + m.log()));
            outcome = killPrimaryUnderLoad(zk, members, 4, keysPerWriter,
                    victim -> System.out.println("killed server " + victim + " with -9"));
            System.out.println("shard map before: " + outcome.before());
            System.out.println("shard map after:  " + outcome.after());
        } finally {
            members.forEach(MemberProcess::close);
            deleteTree(root);
        }
        System.out.printf("shards %d, servers %d, acknowledged %d, lost %d, failover ms %d%n", shards, servers,
                outcome.acknowledgedPuts(), outcome.lost(), outcome.failoverMillis()); // last, after ZooKeeper's shutdown
        System.exit(outcome.lost() == 0 ? 0 : 1);
    }

}
