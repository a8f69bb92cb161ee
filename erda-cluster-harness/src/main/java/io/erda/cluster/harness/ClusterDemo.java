package io.erda.cluster.harness;

import io.erda.client.ClientOptions;
import io.erda.cluster.client.ClusterClient;
import io.erda.cluster.client.ShardMap;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntConsumer;
import java.util.stream.IntStream;

/**
 * The pieces of a cluster on this machine ([cluster]) for the tests and {@code scripts/erda-cluster-demo}
 * (erda-bench's {@code ClusterYcsbDemo}): member processes ({@link #startMembers}, stores in a scratch directory),
 * and {@link #killPrimaryUnderLoad}.
 */
public final class ClusterDemo {
    private ClusterDemo() {
    }

    /**
     * What {@link #killPrimaryUnderLoad} saw. {@code acknowledged}: per key the sequence number of its last
     * acknowledged PUT; {@code lost}: keys that read back older; {@code failoverMillis}: from the victim's death to the
     * first successful PUT on one of its shards.
     */
    public record Outcome(ShardMap before, ShardMap after, int victim, Set<Integer> killedShards,
                          Map<String, Long> acknowledged, long lost, long keysOnKilledShards, long failoverMillis,
                          long retries) {
        public long acknowledgedPuts() {
            return acknowledged.values().stream().mapToLong(Long::longValue).sum();
        }
    }

    /**
     * Writers PUT their own keys through the {@code zk://} client (each key has one writer; values carry a growing
     * sequence number); once every key is acknowledged, kills the primary of shard 0 with -9 and runs
     * {@code duringFailover} (given the victim's id) on a thread of its own; stops the load as soon as a PUT on one of
     * the victim's shards succeeds again (later PUTs would overwrite, and so hide, a lost one) and reads every key back.
     */
    public static Outcome killPrimaryUnderLoad(URI zk, List<MemberProcess> members, int writers, int keysPerWriter,
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
}
