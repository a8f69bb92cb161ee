package io.erda.bench.cluster;

import io.erda.client.ClientOptions;
import io.erda.cluster.client.ClusterClient;
import io.erda.cluster.client.ShardMap;
import io.erda.cluster.harness.ClusterDemo;
import io.erda.cluster.harness.MemberProcess;
import io.erda.cluster.harness.VerifyingLoad;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.stream.IntStream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code scripts/erda-cluster-demo} ([cluster]). Default: ZooKeeper ({@link ZooKeeperRun}), {@code --servers}
 * member processes on tcp, YCSB loads {@code --records} through the binding with the cluster's {@code zk://} URI,
 * then runs workload A for {@code --seconds} while verifying writers (their own keys, each acknowledged sequence
 * number remembered: {@link VerifyingLoad}) run beside it; the primary of shard 0 is killed with -9 under that load;
 * the writers stop right after their first successful PUT on a killed shard and every key is read back. With
 * {@code --failovers N} the killed server comes back on its old files (reused as a backup, filled) and the kill is
 * repeated on the next round's keys; the failover time printed last is the median. Last line:
 * {@code shards S, servers N, acknowledged A, lost L, failover ms F}; exit 0 only when L is 0.
 *
 * <p>{@code --bench}: YCSB A and C on fresh clusters of 1, 2 and 3 servers, one after another, with ratios to one
 * server; the UPDATE latency with one server (no backup) against two (replicated) is the cost of replication.
 */
@Command(name = "erda-cluster-demo", mixinStandardHelpOptions = true, sortOptions = false,
        description = "A sharded, replicated Erda cluster on this machine under YCSB: kill -9 of a primary, or --bench.")
public final class ClusterYcsbDemo implements Callable<Integer> {
    @Option(names = "--shards", defaultValue = "8", description = "Shards (a power of two). Default: ${DEFAULT-VALUE}.")
    int shards;

    @Option(names = "--servers", defaultValue = "3", description = "Member processes. Default: ${DEFAULT-VALUE}.")
    int servers;

    @Option(names = "--records", defaultValue = "10000", description = "YCSB records (1 KiB). Default: ${DEFAULT-VALUE}.")
    long records;

    @Option(names = "--threads", defaultValue = "4", description = "YCSB client threads. Default: ${DEFAULT-VALUE}.")
    int threads;

    @Option(names = "--seconds", defaultValue = "20", description = "YCSB workload A during the (first) failover; "
            + "per workload and cluster size with --bench. Default: ${DEFAULT-VALUE}.")
    long seconds;

    @Option(names = "--failovers", defaultValue = "1", description = "Kills of a primary, one after another (the "
            + "killed server returns on its old files between them); failover ms is their median. Default: ${DEFAULT-VALUE}.")
    int failovers;

    @Option(names = "--session-timeout-ms", defaultValue = "3000", description = "The members' ZooKeeper session "
            + "timeout: how long a killed member's registration lingers, and a restarted one waits for it to go (its "
            + "shards fail over by its lease, sooner). Default: ${DEFAULT-VALUE}.")
    int sessionTimeoutMillis;

    @Option(names = "--bench", description = "YCSB A and C throughput with 1, 2 and 3 servers instead of the failover demo.")
    boolean bench;

    /** Writers and keys of each round's verifying load. */
    private static final int WRITERS = 2;
    private static final int KEYS_PER_WRITER = 150;

    /**
     * ZooKeeper's and Curator's INFO lines (its environment, every connection) drowned the demo's own; held here
     * because java.util.logging keeps loggers weakly, and a level set on a collected logger is lost.
     */
    private static final java.util.List<java.util.logging.Logger> QUIETED = java.util.stream.Stream.of(
            "org.apache.zookeeper", "org.apache.curator", "io.erda.cluster.client.ClusterView")
            .map(java.util.logging.Logger::getLogger).toList();

    /** Quiets ZooKeeper's and Curator's INFO lines: the demo and the nemesis print what matters themselves. */
    static void quietZooKeeper() {
        QUIETED.forEach(l -> l.setLevel(java.util.logging.Level.WARNING));
    }

    public static void main(String[] args) {
        quietZooKeeper(); // the demo prints the map changes itself
        System.exit(new CommandLine(new ClusterYcsbDemo()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        if (shards < 1 || Integer.bitCount(shards) != 1) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--shards " + shards + " is not a power of two");
        }
        if (servers < 2 && !bench) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--servers " + servers
                    + ": a failover needs at least 2");
        }
        ClusterDemo.sessionTimeoutMillis = sessionTimeoutMillis;
        return bench ? bench() : demo();
    }

    private int demo() throws Exception {
        Path root = ClusterDemo.scratch();
        List<MemberProcess> members = new ArrayList<>();
        long acknowledged = 0;
        long lost = 0;
        List<Long> failoverMillis = new ArrayList<>();
        List<Long> rebalanceMillis = new ArrayList<>();
        try (ZooKeeperRun zookeeper = ZooKeeperRun.start()) {
            System.out.println("zookeeper: " + zookeeper.description() + " on " + zookeeper.uri());
            members.addAll(ClusterDemo.startMembers(zookeeper.uri(), servers, shards, root));
            members.forEach(m -> System.out.println("server " + m.id() + " started, log " + m.log()));
            Path ycsbDir = ycsbDir();
            Map<String, Double> loaded = YcsbRun.start("load", true, YcsbRun.workload(zookeeper.uri(), records, 0.5, 0, 0),
                    threads, ycsbDir).result(600);
            System.out.printf("YCSB load: %d records through %s, %.0f ops/s, %d failed%n", records, zookeeper.uri(),
                    loaded.get("[OVERALL], Throughput(ops/sec)"), YcsbRun.failed(loaded));
            try (ClusterClient client = ClusterClient.connect(ClientOptions.of(zookeeper.uri()).withPoolSize(WRITERS))) {
                YcsbRun ycsb = YcsbRun.start("run-a", false, YcsbRun.workload(zookeeper.uri(), records, 0.5,
                        Integer.MAX_VALUE, seconds), threads, ycsbDir);
                long restartedAt = 0;
                int restarted = 0;
                for (int round = 1; round <= failovers; round++) {
                    // the server killed last round is back and has its share again (rebalanced) before the next kill
                    ShardMap before = client.awaitMap(m -> m.balanced() && m.servers().size() == servers,
                            java.time.Duration.ofMinutes(2));
                    if (restartedAt != 0) {
                        long back = (System.nanoTime() - restartedAt) / 1_000_000;
                        rebalanceMillis.add(back);
                        System.out.printf("server %d back with its share (primary of %d, backup of %d) %d ms after its "
                                + "restart returned%n", restarted, before.primaryCounts().getOrDefault(restarted, 0),
                                before.backupCounts().getOrDefault(restarted, 0), back);
                    }
                    VerifyingLoad load = new VerifyingLoad(client, shards, WRITERS, KEYS_PER_WRITER, "r" + round + "-");
                    try (load) {
                        load.awaitEveryKey();
                        Thread.sleep(round == 1 ? 2000 : 200); // YCSB well under way
                        int victim = before.primary(0);
                        Set<Integer> killed = Set.copyOf(IntStream.range(0, shards).filter(s -> before.primary(s) == victim)
                                .boxed().toList());
                        MemberProcess member = members.stream().filter(m -> m.id() == victim).findFirst().orElseThrow();
                        member.kill();
                        load.watch(killed, System.nanoTime());
                        long millis = load.awaitWatched();
                        load.stop(); // later PUTs would overwrite, and so hide, a lost one
                        long roundLost = load.lost(client);
                        failoverMillis.add(millis);
                        acknowledged += load.acknowledgedPuts();
                        lost += roundLost;
                        System.out.printf("failover %d: killed server %d (primary of shards %s) with -9; first PUT on "
                                + "them after %d ms; acknowledged %d, lost %d%n", round, victim, killed, millis,
                                load.acknowledgedPuts(), roundLost);
                        if (round < failovers) {
                            members.set(members.indexOf(member), ClusterDemo.startMember(zookeeper.uri(), victim, servers,
                                    shards, root));
                            restartedAt = System.nanoTime();
                            restarted = victim;
                            System.out.println("server " + victim + " restarted on its old files");
                        }
                    }
                }
                System.out.println("shard map now: " + client.shardMap());
                long rebalanceStart = System.nanoTime();
                ShardMap settled = client.awaitMap(ShardMap::balanced, java.time.Duration.ofMinutes(2));
                System.out.printf("rebalanced %d ms after the last failover: %s%n",
                        (System.nanoTime() - rebalanceStart) / 1_000_000, settled);
                Map<Integer, Integer> backups = settled.backupCounts();
                settled.primaryCounts().forEach((id, n) -> System.out.printf("server %d: primary of %d shards, backup of %d%n",
                        id, n, backups.getOrDefault(id, 0)));
                Map<String, Double> a = ycsb.result(seconds + 600);
                System.out.printf("YCSB workload A through the failover: %.0f ops/s, %d operations failed%n",
                        a.get("[OVERALL], Throughput(ops/sec)"), YcsbRun.failed(a));
            }
        } finally {
            members.forEach(MemberProcess::close);
            ClusterDemo.deleteTree(root);
        }
        List<Long> sorted = failoverMillis.stream().sorted().toList();
        if (failovers > 1) {
            System.out.println("failover ms: " + failoverMillis + ", median " + sorted.get(sorted.size() / 2) + ", p99 "
                    + sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(sorted.size() * 0.99) - 1)) + ", max "
                    + sorted.getLast());
            List<Long> back = rebalanceMillis.stream().sorted().toList();
            System.out.println("back with its share after a restart, ms: " + rebalanceMillis + ", median "
                    + back.get(back.size() / 2) + ", max " + back.getLast());
        }
        System.out.printf("shards %d, servers %d, acknowledged %d, lost %d, failover ms %d%n", shards, servers,
                acknowledged, lost, sorted.get(sorted.size() / 2));
        return lost == 0 ? 0 : 1;
    }

    private int bench() throws Exception {
        System.out.printf("YCSB on clusters of 1..%d servers (%d records of 1 KiB, %d threads, %d s per workload, "
                + "%d shards; 1 server: no backup)%n", servers, records, threads, seconds, shards);
        double[] a = new double[servers + 1];
        double[] c = new double[servers + 1];
        double[] update = new double[servers + 1];
        for (int n = 1; n <= servers; n++) {
            Path root = ClusterDemo.scratch();
            List<MemberProcess> members = new ArrayList<>();
            try (ZooKeeperRun zookeeper = ZooKeeperRun.start()) {
                if (n == 1) {
                    System.out.println("zookeeper: " + zookeeper.description());
                }
                members.addAll(ClusterDemo.startMembers(zookeeper.uri(), n, shards, root));
                Path dir = ycsbDir();
                YcsbRun.start("load", true, YcsbRun.workload(zookeeper.uri(), records, 0.5, 0, 0), threads, dir).result(600);
                Map<String, Double> ra = YcsbRun.start("a", false, YcsbRun.workload(zookeeper.uri(), records, 0.5,
                        Integer.MAX_VALUE, seconds), threads, dir).result(seconds + 600);
                Map<String, Double> rc = YcsbRun.start("c", false, YcsbRun.workload(zookeeper.uri(), records, 1.0,
                        Integer.MAX_VALUE, seconds), threads, dir).result(seconds + 600);
                a[n] = ra.get("[OVERALL], Throughput(ops/sec)");
                c[n] = rc.get("[OVERALL], Throughput(ops/sec)");
                update[n] = ra.getOrDefault("[UPDATE], AverageLatency(us)", Double.NaN);
                System.out.printf("%d server(s): A %.0f ops/s (UPDATE mean %.0f us, READ mean %.0f us, failed %d), "
                        + "C %.0f ops/s (READ mean %.0f us, failed %d)%n", n, a[n], update[n],
                        ra.getOrDefault("[READ], AverageLatency(us)", Double.NaN), YcsbRun.failed(ra), c[n],
                        rc.getOrDefault("[READ], AverageLatency(us)", Double.NaN), YcsbRun.failed(rc));
            } finally {
                members.forEach(MemberProcess::close);
                ClusterDemo.deleteTree(root);
            }
        }
        StringBuilder ratios = new StringBuilder("ratios to 1 server:");
        for (int n = 2; n <= servers; n++) {
            ratios.append(String.format(" %d servers A %.2f C %.2f;", n, a[n] / a[1], c[n] / c[1]));
        }
        System.out.println(ratios);
        if (servers >= 2) {
            System.out.printf("replicated PUT (YCSB A UPDATE mean, 2 servers) %.0f us vs unreplicated (1 server) %.0f us: "
                    + "%.2fx%n", update[2], update[1], update[2] / update[1]);
        }
        return 0;
    }

    /** YCSB's output, kept beside the members' logs (target/cluster-logs). */
    private static Path ycsbDir() throws java.io.IOException {
        Path logs = java.nio.file.Files.createDirectories(Path.of("target", "cluster-logs"));
        return java.nio.file.Files.createTempDirectory(logs, "ycsb-");
    }
}
