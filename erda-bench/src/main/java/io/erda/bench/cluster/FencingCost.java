package io.erda.bench.cluster;

import io.erda.client.ClientOptions;
import io.erda.client.ErdaClient;
import io.erda.cluster.client.ClusterClient;
import io.erda.cluster.client.ShardMap;
import io.erda.cluster.harness.ClusterDemo;
import io.erda.cluster.harness.MemberProcess;
import io.erda.protocol.memory.KeyHash;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/**
 * What fencing costs on the data path ([cluster], "Fencing"), side by side in one run, as ratios (scripts/cluster-fencing-cost).
 *
 * <ul>
 *   <li><b>GET</b>: through a {@code zk://} {@link ClusterClient} (it routes by its map and starts an operation only
 *   within its map lease) against a plain {@link ErdaClient} connected to the key's primary directly (no map, no
 *   lease), the same keys on the same member, alternating rounds.</li>
 *   <li><b>PUT</b>: replicated PUTs through a cluster whose members share a secret (every replica reservation carries
 *   an HMAC-SHA256 tag the backup checks) against an open cluster (the sender's session is checked, the tag is zero),
 *   each with its own members, alternating rounds. The member's own lease and tenure checks (two clock reads per PUT)
 *   are in both and so in neither ratio; a plain client cannot PUT on a member of a shard with a backup at all.</li>
 * </ul>
 * Each round is one client thread; the first round of each kind is a warm-up and not counted. Percentiles come from
 * HdrHistogram. The map lease's other cost is not on the data path: one ZooKeeper {@code sync} and read per client
 * every 50 ms.
 */
@Command(name = "cluster-fencing-cost", mixinStandardHelpOptions = true,
        description = "GET through a zk:// client vs a plain client of the same primary, and replicated PUT with vs "
                + "without the cluster secret's replica tags; percentiles and ratios from one run.")
public final class FencingCost implements Callable<Integer> {
    @Option(names = "--fabric", defaultValue = "shm", description = "shm or tcp. Default: ${DEFAULT-VALUE}.")
    String fabric;

    @Option(names = "--seconds", defaultValue = "3", description = "Per measured round. Default: ${DEFAULT-VALUE}.")
    double seconds;

    @Option(names = "--rounds", defaultValue = "3", description = "Measured rounds of each side (after one warm-up "
            + "round each). Default: ${DEFAULT-VALUE}.")
    int rounds;

    @Option(names = "--value-size", defaultValue = "100", description = "Bytes per value. Default: ${DEFAULT-VALUE}.")
    int valueSize;

    private static final int KEYS = 1000;

    public static void main(String[] args) {
        ClusterYcsbDemo.quietZooKeeper();
        System.exit(new CommandLine(new FencingCost()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        if (!fabric.equals("shm") && !fabric.equals("tcp")) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--fabric " + fabric + ": shm or tcp");
        }
        Path root = ClusterDemo.scratch();
        Path secret = root.resolve("zk-secret");
        Files.writeString(secret, "fencing-cost-secret-" + System.nanoTime() + "\n");
        Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));
        try (ZooKeeperRun zookeeper = ZooKeeperRun.start()) {
            System.out.println("zookeeper: " + zookeeper.description());
            URI open = URI.create(zookeeper.uri() + "-open");
            URI secured = URI.create(zookeeper.uri() + "-secret");
            List<MemberProcess> members = new ArrayList<>();
            try {
                members.addAll(startMembers(open, root.resolve("open"), null));
                members.addAll(startMembers(secured, root.resolve("secret"), secret));
                try (ClusterClient openClient = ClusterClient.connect(ClientOptions.of(open));
                     ClusterClient securedClient = ClusterClient.connect(ClientOptions.of(secured))) {
                    ShardMap map = openClient.awaitMap(m -> m != null && !m.filling(), Duration.ofSeconds(60));
                    securedClient.awaitMap(m -> m != null && !m.filling(), Duration.ofSeconds(60));
                    byte[] value = new byte[valueSize];
                    List<byte[]> keys = keysOfShard(map, 0);
                    for (byte[] k : keys) {
                        openClient.put(k, value);
                        securedClient.put(k, value);
                    }
                    try (ErdaClient direct = ErdaClient.connect(ClientOptions.of(openClient.serverUri(map.primary(0))))) {
                        Histogram clusterGets = new Histogram(3);
                        Histogram directGets = new Histogram(3);
                        Histogram taggedPuts = new Histogram(3);
                        Histogram openPuts = new Histogram(3);
                        long start = System.nanoTime();
                        for (int round = 0; round <= rounds; round++) {
                            boolean counted = round > 0;
                            run(counted ? clusterGets : new Histogram(3), keys, k -> openClient.get(k));
                            run(counted ? directGets : new Histogram(3), keys, k -> direct.get(k));
                            run(counted ? taggedPuts : new Histogram(3), keys, k -> securedClient.put(k, value));
                            run(counted ? openPuts : new Histogram(3), keys, k -> openClient.put(k, value));
                            System.out.printf(Locale.ROOT, "fencing-cost: round %d of %d done (%s), %d s%n", round,
                                    rounds, counted ? "measured" : "warm-up", (System.nanoTime() - start) / 1_000_000_000L);
                        }
                        System.out.printf(Locale.ROOT, "%s, %d-byte values, %d keys of one shard, one client thread, "
                                + "%d measured rounds of %.1f s each side, alternating%n", fabric, valueSize, KEYS, rounds,
                                seconds);
                        print("GET zk:// client (map lease)", clusterGets);
                        print("GET plain client of the primary", directGets);
                        print("PUT replicated, secret (HMAC tags)", taggedPuts);
                        print("PUT replicated, open (session only)", openPuts);
                        System.out.printf(Locale.ROOT, "fencing cost: GET %.3f (zk:// / plain, mean; p99 %.3f), "
                                        + "PUT %.3f (tagged / open, mean; p99 %.3f)%n",
                                clusterGets.getMean() / directGets.getMean(),
                                (double) clusterGets.getValueAtPercentile(99) / directGets.getValueAtPercentile(99),
                                taggedPuts.getMean() / openPuts.getMean(),
                                (double) taggedPuts.getValueAtPercentile(99) / openPuts.getValueAtPercentile(99));
                    }
                }
            } finally {
                members.forEach(MemberProcess::close);
            }
        } finally {
            ClusterDemo.deleteTree(root);
        }
        return 0;
    }

    private List<MemberProcess> startMembers(URI zk, Path dir, Path secret) {
        List<MemberProcess> started = new ArrayList<>();
        for (int id = 1; id <= 2; id++) {
            List<String> options = new ArrayList<>(List.of("--shards", "2", "--initial-servers", "2",
                    "--table-capacity", "64k", "--region-size", "16m", "--dir", dir.resolve("member-" + id).toString(),
                    "--listen", fabric.equals("shm") ? "shm://" + dir.resolve("fabric-" + id) : "tcp://127.0.0.1:0"));
            if (secret != null) {
                options.addAll(List.of("--zk-secret-file", secret.toString()));
            }
            started.add(MemberProcess.start(zk, id, options.toArray(String[]::new)));
        }
        return started;
    }

    private static List<byte[]> keysOfShard(ShardMap map, int shard) {
        List<byte[]> keys = new ArrayList<>();
        for (int i = 0; keys.size() < KEYS; i++) {
            byte[] key = ("fence-" + i).getBytes(StandardCharsets.UTF_8);
            if (map.shardOf(KeyHash.hash(key)) == shard) {
                keys.add(key);
            }
        }
        return keys;
    }

    private interface Op {
        void run(byte[] key);
    }

    private void run(Histogram into, List<byte[]> keys, Op op) {
        long end = System.nanoTime() + (long) (seconds * 1e9);
        for (int i = 0; System.nanoTime() < end; i++) {
            byte[] key = keys.get(i % keys.size());
            long t0 = System.nanoTime();
            op.run(key);
            into.recordValue(Math.max(1, (System.nanoTime() - t0) / 10)); // units of 10 ns
        }
    }

    private static void print(String what, Histogram h) {
        System.out.printf(Locale.ROOT, "  %-38s ops %9d  mean %8.2f us  p50 %8.2f  p99 %8.2f  p99.9 %8.2f  max %9.2f%n",
                what, h.getTotalCount(), h.getMean() / 100, h.getValueAtPercentile(50) / 100.0,
                h.getValueAtPercentile(99) / 100.0, h.getValueAtPercentile(99.9) / 100.0, h.getMaxValue() / 100.0);
    }
}
